// Tests of the dlopen'd CUPTI table against the toolkit's real libcupti (no GPU needed,
// cupti-facts.md 8): loading, binding, and a hand-packed activity buffer iterated by the real
// cuptiActivityGetNextRecord and decoded record by record.
#include "libprof/cupti/cupti_api.h"

#include <cupti.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "libprof/cupti/activity_decoder.h"

namespace libprof {
namespace {

const CuptiApi* Api() {
  std::string error;
  const CuptiApi* api = LoadCuptiApi("/nonexistent/libcupti.so", &error);
  EXPECT_NE(api, nullptr) << error;
  return api;
}

// Proves the loader finds the toolkit copy (a bad LIBPROF_CUPTI_PATH is skipped), binds every
// required function, reads the version the headers were written for, and loads only once.
TEST(CuptiApiTest, LoadsToolkitCopyOnce) {
  const CuptiApi* api = Api();
  ASSERT_NE(api, nullptr);
  EXPECT_NE(api->path.find("libcupti.so"), std::string::npos) << api->path;
  EXPECT_EQ(api->version, static_cast<uint32_t>(CUPTI_API_VERSION));
  EXPECT_TRUE(api->layout.supported);
  EXPECT_NE(api->cuptiActivityGetNextRecord, nullptr);
  EXPECT_NE(api->cuptiGetCallbackName, nullptr);
  EXPECT_NE(api->cuptiSubscribe_v2, nullptr);  // CUDA 13.0 has it
  EXPECT_TRUE(api->has_per_api_filter);
  uint64_t timestamp = 0;
  EXPECT_EQ(api->cuptiGetTimestamp(&timestamp), CUPTI_SUCCESS);
  EXPECT_GT(timestamp, 0u);
  const char* text = nullptr;
  EXPECT_EQ(api->cuptiGetResultString(CUPTI_ERROR_MAX_LIMIT_REACHED, &text), CUPTI_SUCCESS);
  EXPECT_NE(text, nullptr);
  std::string error;
  EXPECT_EQ(LoadCuptiApi("", &error), api);
  // It is now in the process: a NOLOAD open by soname must find the same file.
  void* handle = dlopen("libcupti.so.13", RTLD_NOLOAD | RTLD_LAZY);
  EXPECT_NE(handle, nullptr);
  if (handle != nullptr) dlclose(handle);
}

// Proves binding something that is not CUPTI fails, names the missing required functions, and
// still leaves the per-API filter callable (the stand-in).
TEST(CuptiApiTest, BindFailsOnNonCupti) {
  void* libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(libm, nullptr);
  CuptiApi api;
  std::string error;
  EXPECT_FALSE(BindCuptiApi(libm, &api, &error));
  EXPECT_NE(error.find("cuptiGetVersion"), std::string::npos) << error;
  EXPECT_NE(error.find("cuptiActivityGetNextRecord"), std::string::npos) << error;
  EXPECT_FALSE(api.has_per_api_filter);
  EXPECT_EQ(api.cuptiActivityEnableDriverApi(1, 0), CUPTI_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api.cuptiSubscribe_v2, nullptr);
  dlclose(libm);
}

// Packs records back to back at 8-byte alignment, as CUPTI lays out a completed buffer.
class RecordBuffer {
 public:
  RecordBuffer() : storage_(kBytes / 8, 0) {}

  template <typename T>
  T& Add(CUpti_ActivityKind kind) {
    static_assert(sizeof(T) % 8 == 0);
    EXPECT_LE(used_ + sizeof(T), kBytes);
    T* record = reinterpret_cast<T*>(data() + used_);
    std::memset(record, 0, sizeof(T));
    record->kind = kind;
    used_ += sizeof(T);
    return *record;
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  size_t size() const { return used_; }

 private:
  static constexpr size_t kBytes = 64 * 1024;
  std::vector<uint64_t> storage_;  // uint64_t: 8-byte alignment, as CUPTI requires
  size_t used_ = 0;
};

// Proves the real cuptiActivityGetNextRecord walks a buffer of every decoded kind with our
// struct sizes, ends with MAX_LIMIT_REACHED, and every record decodes (names via CUPTI itself).
TEST(CuptiApiTest, RealIteratorThenDecode) {
  const CuptiApi* api = Api();
  ASSERT_NE(api, nullptr);
  RecordBuffer buffer;
  auto& rt = buffer.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  rt.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000;
  rt.start = 100;
  rt.end = 500;
  rt.threadId = 7;
  rt.correlationId = 1;
  auto& drv = buffer.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  drv.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
  drv.start = 150;
  drv.end = 400;
  drv.threadId = 7;
  drv.correlationId = 2;
  buffer.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API).cbid =
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  auto& kernel = buffer.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kernel.name = "_Z4stepv";
  kernel.gridX = kernel.gridY = kernel.gridZ = 1;
  kernel.correlationId = 3;
  auto& copy = buffer.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  copy.bytes = 4;
  buffer.Add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2).dstDeviceId = 1;
  buffer.Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET).bytes = 8;
  buffer.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION).type =
      CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  buffer.Add<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT).eventId = 5;
  buffer.Add<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT).contextId = 1;
  buffer.Add<CUpti_ActivityStream>(CUPTI_ACTIVITY_KIND_STREAM).streamId = 13;
  buffer.Add<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE).name = strdup("GPU 0");
  buffer.Add<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2).bytes = 16;
  auto& overhead = buffer.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  overhead.overheadData = std::malloc(16);
  buffer.Add<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE).graphId = 9;
  constexpr int kRecords = 15;

  StringInterner strings;
  ActivityDecoder decoder(*api, strings);
  TraceRecords out;
  CUpti_Activity* record = nullptr;
  int seen = 0;
  CUptiResult result;
  while ((result = api->cuptiActivityGetNextRecord(buffer.data(), buffer.size(), &record)) ==
         CUPTI_SUCCESS) {
    EXPECT_TRUE(decoder.Decode(record, &out)) << "kind " << record->kind;
    ++seen;
  }
  EXPECT_EQ(result, CUPTI_ERROR_MAX_LIMIT_REACHED);
  EXPECT_EQ(seen, kRecords);
  EXPECT_EQ(decoder.stats().decoded, static_cast<uint64_t>(kRecords));
  EXPECT_EQ(out.api_calls.size(), 3u);
  EXPECT_EQ(out.kernels.size(), 1u);
  EXPECT_EQ(out.memcpys.size(), 2u);
  EXPECT_EQ(out.memsets.size(), 1u);
  EXPECT_EQ(out.synchronizations.size(), 1u);
  EXPECT_EQ(out.cuda_events.size(), 1u);
  EXPECT_EQ(out.contexts.size(), 1u);
  EXPECT_EQ(out.streams.size(), 1u);
  EXPECT_EQ(out.devices.size(), 1u);
  EXPECT_EQ(out.memory_ops.size(), 1u);
  EXPECT_EQ(out.overheads.size(), 1u);
  EXPECT_EQ(out.graph_traces.size(), 1u);
  EXPECT_EQ(strings.Intern("cudaMemcpyAsync"), out.api_calls.at(0).name_id);
  EXPECT_EQ(strings.Intern("cuMemcpyHtoDAsync"), out.api_calls.at(1).name_id);
  EXPECT_EQ(strings.Intern("cuLaunchKernel"), out.api_calls.at(2).name_id);
  EXPECT_EQ(strings.Intern("step()"), out.kernels.at(0).shape.demangled_name_id);
  EXPECT_EQ(out.memcpys.at(0).src_kind, MemoryKind::kPageable);
  EXPECT_EQ(out.memcpys.at(1).dst_device_id, 1u);
  EXPECT_EQ(out.devices.at(0).name, "GPU 0");
  EXPECT_EQ(out.graph_traces.at(0).graph_id, 9u);
}

}  // namespace
}  // namespace libprof
