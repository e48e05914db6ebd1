// Tests of ActivityDecoder: CUPTI records built in memory (zeroed, then filled) go through the
// real decoder and come out as model records; no GPU and no libcupti needed.
#include <cupti.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "libprof/cupti/activity_decoder.h"
#include "libprof/cupti/record_layout.h"

namespace libprof {
namespace {

template <typename T>
T Make(CUpti_ActivityKind kind) {
  T record;
  std::memset(&record, 0, sizeof record);
  record.kind = kind;
  return record;
}

const CUpti_Activity* Raw(const void* record) { return static_cast<const CUpti_Activity*>(record); }

class DecoderTest : public ::testing::Test {
 protected:
  DecoderTest() : decoder_(CompiledRecordLayout(), strings_, Names()) {}

  ApiNameLookup Names() {
    return [this](ApiDomain domain, uint32_t id) -> const char* {
      ++lookups_;
      if (domain == ApiDomain::kRuntime) {
        if (id == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000) {
          return "cudaMemcpyAsync_ptsz_v7000";
        }
        if (id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) return "cudaLaunchKernel_v7000";
      } else {
        if (id == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2) return "cuMemcpyHtoDAsync_v2";
        if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) return "cuLaunchKernel";
      }
      return nullptr;
    };
  }

  // The interned string behind `id`.
  std::string Str(uint32_t id) {
    std::vector<std::pair<uint32_t, std::string>> all;
    strings_.CollectFrom(0, &all);
    for (auto& [key, value] : all) {
      if (key == id) return value;
    }
    return "<no string " + std::to_string(id) + ">";
  }

  bool Decode(const void* record) { return decoder_.Decode(Raw(record), &out_); }

  StringInterner strings_;
  int lookups_ = 0;
  ActivityDecoder decoder_;
  TraceRecords out_;
};

// Proves kernel records keep names (mangled and demangled), launch shape, clusters, graph ids,
// and that the mangled-name cache does not change the result of a repeated launch.
TEST_F(DecoderTest, KernelNamesShapeAndGraphIds) {
  static const char kName[] = "_Z6vecAddPfS_S_i";
  auto k = Make<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = kName;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.clusterX = 2;
  k.clusterY = 1;
  k.clusterZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 16;
  k.sharedMemoryExecuted = 65536;
  k.start = 1000;
  k.end = 3000;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 7;
  k.correlationId = 42;
  k.graphId = 5;
  k.graphNodeId = (5ull << 32) | 3;
  k.isDeviceLaunched = 1;
  ASSERT_TRUE(Decode(&k));
  ASSERT_TRUE(Decode(&k));
  ASSERT_EQ(out_.kernels.size(), 2u);
  const Kernel& got = out_.kernels[0];
  EXPECT_EQ(Str(got.shape.name_id), kName);
  EXPECT_EQ(Str(got.shape.demangled_name_id), "vecAdd(float*, float*, float*, int)");
  EXPECT_EQ(got.shape.grid, (std::array<uint32_t, 3>{128, 2, 1}));
  EXPECT_EQ(got.shape.block, (std::array<uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(got.shape.cluster, (std::array<uint32_t, 3>{2, 1, 1}));
  EXPECT_EQ(got.shape.registers_per_thread, 32u);
  EXPECT_EQ(got.shape.static_shared_memory_bytes, 1024u);
  EXPECT_EQ(got.shape.dynamic_shared_memory_bytes, 4096u);
  EXPECT_EQ(got.shape.local_memory_per_thread_bytes, 16u);
  EXPECT_EQ(got.shape.shared_memory_config_bytes, 65536u);
  EXPECT_EQ(got.shape.device_id, 1u);
  EXPECT_EQ(got.shape.context_id, 2u);
  EXPECT_EQ(got.start_ns, 1000u);
  EXPECT_EQ(got.end_ns, 3000u);
  EXPECT_EQ(got.correlation_id, 42u);
  EXPECT_EQ(got.stream_id, 7u);
  EXPECT_EQ(got.graph_id, 5u);
  EXPECT_EQ(got.graph_node_id, (5ull << 32) | 3);
  EXPECT_TRUE(got.device_launched);
  EXPECT_EQ(out_.kernels[1], got);
}

// Proves an extern "C" kernel keeps one name id, a launch without clusters reports none, and an
// untimed kernel (start == end == 0) is kept with zero times.
TEST_F(DecoderTest, PlainNameNoClusterUntimedKernel) {
  auto k = Make<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_KERNEL);
  k.name = "vectorAdd";
  k.clusterX = 0;
  k.clusterY = 0;
  k.clusterZ = 0;
  ASSERT_TRUE(Decode(&k));
  const Kernel& got = out_.kernels.at(0);
  EXPECT_EQ(Str(got.shape.name_id), "vectorAdd");
  EXPECT_EQ(got.shape.demangled_name_id, got.shape.name_id);
  EXPECT_EQ(got.shape.cluster, (std::array<uint32_t, 3>{0, 0, 0}));
  EXPECT_EQ(got.start_ns, 0u);
  EXPECT_EQ(got.end_ns, 0u);
}

// Proves Kernel10.isDeviceLaunched is ignored when the running CUPTI writes Kernel9 (CUDA 12.x),
// where that byte lies past the end of the record.
TEST(DecoderLayoutTest, DeviceLaunchedNeedsCuda13) {
  StringInterner strings;
  ActivityDecoder decoder(LayoutForCuptiVersion(27), strings, nullptr);  // CUDA 12.9
  auto k = Make<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.isDeviceLaunched = 1;
  TraceRecords out;
  ASSERT_TRUE(decoder.Decode(Raw(&k), &out));
  EXPECT_FALSE(out.kernels.at(0).device_launched);
}

// Proves every CUPTI memory kind and copy kind maps to the model's, with the async flag.
TEST_F(DecoderTest, MemcpyEachMemoryAndCopyKind) {
  const MemoryKind kinds[] = {MemoryKind::kPageable,     MemoryKind::kPinned,
                              MemoryKind::kDevice,       MemoryKind::kArray,
                              MemoryKind::kManaged,      MemoryKind::kDeviceStatic,
                              MemoryKind::kManagedStatic};
  static_assert(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE == 1 &&
                CUPTI_ACTIVITY_MEMORY_KIND_PINNED == 2 && CUPTI_ACTIVITY_MEMORY_KIND_DEVICE == 3 &&
                CUPTI_ACTIVITY_MEMORY_KIND_ARRAY == 4 && CUPTI_ACTIVITY_MEMORY_KIND_MANAGED == 5);
  for (MemoryKind src : kinds) {
    for (MemoryKind dst : kinds) {
      auto m = Make<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
      m.srcKind = static_cast<uint8_t>(src);
      m.dstKind = static_cast<uint8_t>(dst);
      m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      ASSERT_TRUE(Decode(&m));
      EXPECT_EQ(out_.memcpys.back().src_kind, src);
      EXPECT_EQ(out_.memcpys.back().dst_kind, dst);
    }
  }
  for (uint8_t copy = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN; copy <= CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
       ++copy) {
    auto m = Make<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = copy;
    ASSERT_TRUE(Decode(&m));
    EXPECT_EQ(static_cast<uint8_t>(out_.memcpys.back().copy_kind), copy);
  }
  EXPECT_EQ(ToString(CopyKind::kDtoH),
            std::string(ToString(static_cast<CopyKind>(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH))));
}

// Proves the remaining memcpy fields, the async flag and that out-of-range kinds become unknown.
TEST_F(DecoderTest, MemcpyFieldsAndBadKinds) {
  auto m = Make<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.deviceId = 3;
  m.contextId = 4;
  m.streamId = 13;
  m.correlationId = 99;
  m.runtimeCorrelationId = 0;  // what CUPTI reports in practice
  m.graphId = 8;
  m.graphNodeId = 81;
  m.copyCount = 1;
  ASSERT_TRUE(Decode(&m));
  Memcpy want;
  want.copy_kind = CopyKind::kDtoH;
  want.src_kind = MemoryKind::kDevice;
  want.dst_kind = MemoryKind::kPageable;
  want.bytes = 1 << 20;
  want.async = true;
  want.start_ns = 10;
  want.end_ns = 20;
  want.correlation_id = 99;
  want.device_id = 3;
  want.context_id = 4;
  want.stream_id = 13;
  want.graph_id = 8;
  want.graph_node_id = 81;
  EXPECT_EQ(out_.memcpys.at(0), want);

  m.flags = 0;
  m.copyKind = 200;
  m.srcKind = 99;
  m.dstKind = 8;
  ASSERT_TRUE(Decode(&m));
  EXPECT_FALSE(out_.memcpys.at(1).async);
  EXPECT_EQ(out_.memcpys.at(1).copy_kind, CopyKind::kUnknown);
  EXPECT_EQ(out_.memcpys.at(1).src_kind, MemoryKind::kUnknown);
  EXPECT_EQ(out_.memcpys.at(1).dst_kind, MemoryKind::kUnknown);
}

// Proves a peer-to-peer copy (MEMCPY2) becomes a Memcpy with source and destination devices.
TEST_F(DecoderTest, PeerToPeerMemcpy) {
  auto p = Make<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  p.bytes = 4096;
  p.start = 5;
  p.end = 9;
  p.deviceId = 0;
  p.contextId = 1;
  p.streamId = 14;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.srcContextId = 1;
  p.dstContextId = 2;
  p.correlationId = 77;
  p.graphId = 0;
  ASSERT_TRUE(Decode(&p));
  const Memcpy& got = out_.memcpys.at(0);
  EXPECT_EQ(got.copy_kind, CopyKind::kPtoP);
  EXPECT_EQ(got.src_device_id, 0u);
  EXPECT_EQ(got.dst_device_id, 1u);
  EXPECT_EQ(got.bytes, 4096u);
  EXPECT_TRUE(got.async);
  EXPECT_EQ(got.correlation_id, 77u);
  EXPECT_EQ(got.stream_id, 14u);
}

// Proves memset fields, including value, memory kind and the async flag.
TEST_F(DecoderTest, Memset) {
  auto s = Make<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  s.value = 0xAB;
  s.bytes = 512;
  s.start = 100;
  s.end = 150;
  s.deviceId = 2;
  s.contextId = 3;
  s.streamId = 21;
  s.correlationId = 12;
  s.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  s.graphId = 6;
  ASSERT_TRUE(Decode(&s));
  Memset want;
  want.memory_kind = MemoryKind::kManaged;
  want.bytes = 512;
  want.value = 0xAB;
  want.async = true;
  want.start_ns = 100;
  want.end_ns = 150;
  want.correlation_id = 12;
  want.device_id = 2;
  want.context_id = 3;
  want.stream_id = 21;
  want.graph_id = 6;
  EXPECT_EQ(out_.memsets.at(0), want);
}

// Proves each synchronisation type, with stream, event, event sync id and return value.
TEST_F(DecoderTest, SynchronizationEachType) {
  const std::pair<CUpti_ActivitySynchronizationType, SyncType> types[] = {
      {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, SyncType::kEventSynchronize},
      {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, SyncType::kStreamWaitEvent},
      {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, SyncType::kStreamSynchronize},
      {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, SyncType::kContextSynchronize},
      {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, SyncType::kUnknown},
  };
  for (auto [cupti_type, model_type] : types) {
    auto s = Make<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    s.type = cupti_type;
    s.start = 1000;
    s.end = 5000;
    s.correlationId = 31;
    s.contextId = 1;
    bool context_sync = cupti_type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.streamId = context_sync ? CUPTI_SYNCHRONIZATION_INVALID_VALUE : 13;
    s.cudaEventId = context_sync ? CUPTI_SYNCHRONIZATION_INVALID_VALUE : 4;
    s.cudaEventSyncId = 1234;
    s.returnValue = 0;
    ASSERT_TRUE(Decode(&s));
    const Synchronization& got = out_.synchronizations.back();
    EXPECT_EQ(got.type, model_type);
    EXPECT_EQ(got.start_ns, 1000u);
    EXPECT_EQ(got.end_ns, 5000u);
    EXPECT_EQ(got.correlation_id, 31u);
    EXPECT_EQ(got.stream_id, context_sync ? kNoStream : 13u);
    EXPECT_EQ(got.event_id, context_sync ? CUPTI_SYNCHRONIZATION_INVALID_VALUE : 4u);
    EXPECT_EQ(got.event_sync_id, 1234u);
  }
  auto failed = Make<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  failed.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  failed.returnValue = 600;  // CUDA_ERROR_NOT_READY
  ASSERT_TRUE(Decode(&failed));
  EXPECT_EQ(out_.synchronizations.back().return_value, 600);
}

// Proves a CUPTI older than 12.8 (Synchronization v1) never has its sync id or return value
// read: they lie past the end of that record.
TEST(DecoderLayoutTest, SynchronizationV1) {
  StringInterner strings;
  ActivityDecoder decoder(LayoutForCuptiVersion(24), strings, nullptr);  // CUDA 12.6
  auto s = Make<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  s.cudaEventSyncId = 55;
  s.returnValue = 3;
  TraceRecords out;
  ASSERT_TRUE(decoder.Decode(Raw(&s), &out));
  EXPECT_EQ(out.synchronizations.at(0).event_sync_id, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  EXPECT_EQ(out.synchronizations.at(0).return_value, 0);
}

// Proves API records of all three domains get clean names (suffixes stripped), ids, times,
// thread and return value, and that each (domain, cbid) name is looked up only once.
TEST_F(DecoderTest, ApiCallsWithCleanNames) {
  auto rt = Make<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  rt.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000;
  rt.start = 100;
  rt.end = 200;
  rt.threadId = 4242;
  rt.correlationId = 9;
  rt.returnValue = 1;
  auto drv = Make<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  drv.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
  drv.start = 120;
  drv.end = 180;
  drv.threadId = 4242;
  drv.correlationId = 10;
  auto internal = Make<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API);
  internal.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  auto unknown = Make<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  unknown.cbid = 9999;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Decode(&rt));
    ASSERT_TRUE(Decode(&drv));
    ASSERT_TRUE(Decode(&internal));
    ASSERT_TRUE(Decode(&unknown));
  }
  EXPECT_EQ(lookups_, 4);
  ASSERT_EQ(out_.api_calls.size(), 12u);
  const ApiCall& r = out_.api_calls[0];
  EXPECT_EQ(r.domain, ApiDomain::kRuntime);
  EXPECT_EQ(Str(r.name_id), "cudaMemcpyAsync");
  EXPECT_EQ(r.callback_id,
            static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000));
  EXPECT_EQ(r.start_ns, 100u);
  EXPECT_EQ(r.end_ns, 200u);
  EXPECT_EQ(r.thread_id, 4242u);
  EXPECT_EQ(r.correlation_id, 9u);
  EXPECT_EQ(r.return_value, 1);
  EXPECT_FALSE(r.nested);
  EXPECT_EQ(out_.api_calls[1].domain, ApiDomain::kDriver);
  EXPECT_EQ(Str(out_.api_calls[1].name_id), "cuMemcpyHtoDAsync");
  EXPECT_EQ(out_.api_calls[2].domain, ApiDomain::kInternalLaunch);
  EXPECT_EQ(Str(out_.api_calls[2].name_id), "cuLaunchKernel");
  EXPECT_EQ(Str(out_.api_calls[3].name_id), "runtime API 9999");
  EXPECT_EQ(out_.api_calls[4].name_id, r.name_id);
}

// Proves MEMORY2 allocation and release records, including stream-ordered ones from a pool.
TEST_F(DecoderTest, MemoryAllocAndFreeAsync) {
  auto alloc = Make<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  alloc.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  alloc.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  alloc.correlationId = 50;
  alloc.address = 0x7f0000000000;
  alloc.bytes = 1 << 24;
  alloc.timestamp = 777;
  alloc.deviceId = 0;
  alloc.contextId = 1;
  alloc.streamId = 13;
  alloc.isAsync = 1;
  alloc.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  alloc.memoryPoolConfig.address = 0x7f0000000000;
  alloc.memoryPoolConfig.releaseThreshold = UINT64_MAX;  // keep everything (cudaMemPoolAttr...)
  alloc.memoryPoolConfig.pool.size = 32 << 20;
  alloc.memoryPoolConfig.utilizedSize = 16 << 20;
  auto release = alloc;
  release.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  release.correlationId = 51;
  release.timestamp = 888;
  auto sync_alloc = Make<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  sync_alloc.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  sync_alloc.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  sync_alloc.streamId = CUPTI_INVALID_STREAM_ID;
  sync_alloc.memoryPoolConfig.address = 0x1234;  // ignored: no pool
  sync_alloc.memoryPoolConfig.releaseThreshold = 99;
  auto imported = alloc;  // an imported pool: its union holds a process id, not a size
  imported.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
  imported.memoryPoolConfig.pool.processId = 4242;
  ASSERT_TRUE(Decode(&alloc));
  ASSERT_TRUE(Decode(&release));
  ASSERT_TRUE(Decode(&sync_alloc));
  ASSERT_TRUE(Decode(&imported));
  ASSERT_EQ(out_.memory_ops.size(), 4u);
  const MemoryOp& a = out_.memory_ops[0];
  EXPECT_EQ(a.operation, MemoryOperation::kAllocation);
  EXPECT_EQ(a.memory_kind, MemoryKind::kDevice);
  EXPECT_EQ(a.address, 0x7f0000000000u);
  EXPECT_EQ(a.bytes, 1u << 24);
  EXPECT_EQ(a.time_ns, 777u);
  EXPECT_EQ(a.correlation_id, 50u);
  EXPECT_EQ(a.stream_id, 13u);
  EXPECT_TRUE(a.async);
  EXPECT_EQ(a.pool_type, static_cast<uint32_t>(CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL));
  EXPECT_EQ(a.pool_address, 0x7f0000000000u);
  EXPECT_EQ(a.pool_release_threshold, UINT64_MAX);
  EXPECT_EQ(a.pool_bytes, 32u << 20);
  EXPECT_EQ(a.pool_used_bytes, 16u << 20);
  EXPECT_EQ(out_.memory_ops[1].operation, MemoryOperation::kRelease);
  EXPECT_EQ(out_.memory_ops[1].time_ns, 888u);
  EXPECT_FALSE(out_.memory_ops[2].async);
  EXPECT_EQ(out_.memory_ops[2].memory_kind, MemoryKind::kPinned);
  EXPECT_EQ(out_.memory_ops[2].stream_id, CUPTI_INVALID_STREAM_ID);
  EXPECT_EQ(out_.memory_ops[2].pool_address, 0u);
  EXPECT_EQ(out_.memory_ops[2].pool_release_threshold, 0u);
  EXPECT_EQ(out_.memory_ops[3].pool_address, 0x7f0000000000u);
  EXPECT_EQ(out_.memory_ops[3].pool_bytes, 0u);
  EXPECT_EQ(out_.memory_ops[3].pool_release_threshold, 0u);
}

// Proves context records, and stream records with each flag, priority and the device learnt
// from their context.
TEST_F(DecoderTest, ContextAndStreams) {
  auto c = Make<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  c.contextId = 1;
  c.deviceId = 3;
  c.nullStreamId = 7;
  c.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
  ASSERT_TRUE(Decode(&c));
  EXPECT_EQ(out_.contexts.at(0),
            (ContextInfo{1, 3, 7, static_cast<uint32_t>(CUPTI_ACTIVITY_COMPUTE_API_CUDA)}));

  const std::pair<CUpti_ActivityStreamFlag, StreamType> flags[] = {
      {CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT, StreamType::kDefault},
      {CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING, StreamType::kNonBlocking},
      {CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL, StreamType::kNull},
      {CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN, StreamType::kUnknown},
  };
  uint32_t id = 13;
  for (auto [flag, type] : flags) {
    auto s = Make<CUpti_ActivityStream>(CUPTI_ACTIVITY_KIND_STREAM);
    s.contextId = 1;
    s.streamId = id++;
    s.flag = flag;
    s.priority = static_cast<uint32_t>(-2);
    s.correlationId = 60;
    ASSERT_TRUE(Decode(&s));
    const StreamInfo& got = out_.streams.back();
    EXPECT_EQ(got.type, type);
    EXPECT_EQ(got.priority, -2);
    EXPECT_EQ(got.device_id, 3u);
    EXPECT_EQ(got.context_id, 1u);
    EXPECT_EQ(got.correlation_id, 60u);
  }
  auto orphan = Make<CUpti_ActivityStream>(CUPTI_ACTIVITY_KIND_STREAM);
  orphan.contextId = 99;
  ASSERT_TRUE(Decode(&orphan));
  EXPECT_EQ(out_.streams.back().device_id, 0u);
}

// Proves device records and that, as the CUDA 13.0 header asks, the decoder free()s the name
// CUPTI allocated and clears the pointer (ASan would flag a leak or a double free).
TEST_F(DecoderTest, DeviceNameIsFreed) {
  auto d = Make<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  d.id = 0;
  d.name = strdup("NVIDIA H200");
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i + 1);
  d.numMultiprocessors = 132;
  d.globalMemorySize = 150ull << 30;
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.coreClockRate = 1980000;
  d.maxThreadsPerBlock = 1024;
  d.l2CacheSize = 60 << 20;
  ASSERT_TRUE(Decode(&d));
  EXPECT_EQ(d.name, nullptr);
  const DeviceInfo& got = out_.devices.at(0);
  EXPECT_EQ(got.name, "NVIDIA H200");
  EXPECT_EQ(got.uuid,
            std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"));
  EXPECT_EQ(got.sm_count, 132u);
  EXPECT_EQ(got.global_memory_bytes, 150ull << 30);
  EXPECT_EQ(got.compute_capability_major, 9u);
  EXPECT_EQ(got.core_clock_khz, 1980000u);
  EXPECT_EQ(got.max_threads_per_block, 1024u);
  EXPECT_EQ(got.l2_cache_bytes, 60u << 20);
  ASSERT_TRUE(Decode(&d));  // a second decode of the same record must not free again
  EXPECT_EQ(out_.devices.at(1).name, "");
}

// Proves a pre-13.0 CUPTI's device name is copied but not freed (its header promises nothing).
TEST(DecoderLayoutTest, DeviceNameNotFreedBefore13) {
  StringInterner strings;
  ActivityDecoder decoder(LayoutForCuptiVersion(28), strings, nullptr);
  static const char kName[] = "NVIDIA A100";
  auto d = Make<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  d.name = kName;
  TraceRecords out;
  ASSERT_TRUE(decoder.Decode(Raw(&d), &out));
  EXPECT_EQ(d.name, kName);
  EXPECT_EQ(out.devices.at(0).name, "NVIDIA A100");
}

// Proves overhead records get readable names for every kind, the thread, and that
// overheadData is free()d and cleared.
TEST_F(DecoderTest, OverheadNamesThreadAndData) {
  const std::pair<CUpti_ActivityOverheadKind, const char*> kinds[] = {
      {CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST, "activity buffer request"},
      {CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, "cupti buffer flush"},
      {CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE, "resource"},
      {CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION, "instrumentation"},
      {CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER, "driver compiler"},
      {CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING, "lazy function loading"},
      {CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING,
       "runtime triggered module loading"},
      {CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL, "command buffer full"},
      {CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT, "UVM activity init"},
      {static_cast<CUpti_ActivityOverheadKind>(12345), "overhead kind 12345"},
  };
  for (auto [kind, name] : kinds) {
    auto o = Make<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    o.overheadKind = kind;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = 100;
    o.objectId.pt.threadId = 101;
    o.start = 1;
    o.end = 2;
    if (kind == CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL) {
      o.overheadData = std::calloc(1, sizeof(CUpti_ActivityOverheadCommandBufferFullData));
    }
    ASSERT_TRUE(Decode(&o));
    EXPECT_EQ(o.overheadData, nullptr);
    const Overhead& got = out_.overheads.back();
    EXPECT_EQ(got.overhead_kind, static_cast<uint32_t>(kind));
    EXPECT_EQ(Str(got.name_id), name);
    EXPECT_EQ(got.thread_id, 101u);
    EXPECT_EQ(got.start_ns, 1u);
    EXPECT_EQ(got.end_ns, 2u);
  }
  auto device_overhead = Make<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  device_overhead.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
  device_overhead.objectId.dcs.deviceId = 5;
  ASSERT_TRUE(Decode(&device_overhead));
  EXPECT_EQ(out_.overheads.back().thread_id, 0u);
}

// Proves CUDA event records, and that before CUDA 12.8 (CudaEvent v1) the device comes from the
// context instead of fields the record does not have.
TEST_F(DecoderTest, CudaEvent) {
  auto e = Make<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
  e.correlationId = 70;
  e.contextId = 1;
  e.streamId = 13;
  e.eventId = 3;
  e.deviceId = 2;
  e.deviceTimestamp = 123456;
  e.cudaEventSyncId = 900;
  ASSERT_TRUE(Decode(&e));
  EXPECT_EQ(out_.cuda_events.at(0), (CudaEvent{3, 900, 70, 1, 13, 2, 123456}));

  StringInterner strings;
  ActivityDecoder old(LayoutForCuptiVersion(24), strings, nullptr);
  TraceRecords out;
  auto c = Make<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  c.contextId = 1;
  c.deviceId = 4;
  ASSERT_TRUE(old.Decode(Raw(&c), &out));
  ASSERT_TRUE(old.Decode(Raw(&e), &out));
  EXPECT_EQ(out.cuda_events.at(0), (CudaEvent{3, 0, 70, 1, 13, 4, 0}));
}

// Proves graph-level trace records (one per graph launch).
TEST_F(DecoderTest, GraphTrace) {
  auto g = Make<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  g.correlationId = 80;
  g.start = 1000;
  g.end = 9000;
  g.deviceId = 1;
  g.graphId = 2;
  g.contextId = 3;
  g.streamId = 14;
  g.endDeviceId = 1;
  g.endContextId = 3;
  ASSERT_TRUE(Decode(&g));
  EXPECT_EQ(out_.graph_traces.at(0), (GraphTrace{2, 1000, 9000, 80, 1, 14}));
}

// Proves unified-memory counter records keep kind, value, span, address, processors and flags;
// that ends and processor ids CUPTI says to ignore are not kept; and that a counter kind newer
// than this build is kept as CUPTI gave it (the analysis skips it with a warning).
TEST_F(DecoderTest, UnifiedMemoryCounters) {
  auto htod = Make<CUpti_ActivityUnifiedMemoryCounter3>(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  htod.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
  htod.value = 2 << 20;
  htod.start = 1000;
  htod.end = 3000;
  htod.address = 0x7f0000200000;
  htod.srcId = CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID;
  htod.dstId = 1;
  htod.streamId = 77;  // "invalid" per cupti_activity.h: not kept
  htod.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE;
  ASSERT_TRUE(Decode(&htod));
  EXPECT_EQ(out_.unified_memory_counters.at(0),
            (UnifiedMemoryCounter{.counter_kind = UvmCounterKind::kBytesHtoD,
                                  .value = 2 << 20,
                                  .start_ns = 1000,
                                  .end_ns = 3000,
                                  .address = 0x7f0000200000,
                                  .src_device_id = kUvmCpu,
                                  .dst_device_id = 1,
                                  .flags = 2}));

  auto gpu_fault =
      Make<CUpti_ActivityUnifiedMemoryCounter3>(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  gpu_fault.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT;
  gpu_fault.value = 5;  // fault groups
  gpu_fault.start = 900;
  gpu_fault.end = 1400;
  gpu_fault.address = 0x7f0000200000;
  gpu_fault.srcId = 1;
  gpu_fault.dstId = 12345;  // to be ignored for faults
  gpu_fault.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE;
  ASSERT_TRUE(Decode(&gpu_fault));
  EXPECT_EQ(out_.unified_memory_counters.at(1),
            (UnifiedMemoryCounter{.counter_kind = UvmCounterKind::kGpuPageFault,
                                  .value = 5,
                                  .start_ns = 900,
                                  .end_ns = 1400,
                                  .address = 0x7f0000200000,
                                  .src_device_id = 1,
                                  .dst_device_id = 0,
                                  .flags = 2}));

  // A CPU fault has no end and no processor ids (its value is the faulting PC).
  auto cpu_fault =
      Make<CUpti_ActivityUnifiedMemoryCounter3>(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  cpu_fault.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT;
  cpu_fault.value = 0x401234;
  cpu_fault.start = 5000;
  cpu_fault.end = 4;  // garbage
  cpu_fault.srcId = 3;
  cpu_fault.dstId = 3;
  ASSERT_TRUE(Decode(&cpu_fault));
  const UnifiedMemoryCounter& cpu = out_.unified_memory_counters.at(2);
  EXPECT_EQ(cpu.counter_kind, UvmCounterKind::kCpuPageFault);
  EXPECT_EQ(cpu.value, 0x401234u);
  EXPECT_EQ(cpu.end_ns, 5000u);
  EXPECT_EQ(cpu.src_device_id, kUvmCpu);
  EXPECT_EQ(cpu.dst_device_id, 0u);

  // Thrashing: srcId is the bitmask of the devices fighting; no end, no destination.
  auto thrash =
      Make<CUpti_ActivityUnifiedMemoryCounter3>(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  thrash.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING;
  thrash.value = 64 << 10;
  thrash.start = 7000;
  thrash.end = 9000;
  thrash.srcId = 0b11;
  thrash.dstId = 1;
  thrash.flags = CUPTI_ACTIVITY_FLAG_THRASHING_IN_CPU;
  ASSERT_TRUE(Decode(&thrash));
  const UnifiedMemoryCounter& t = out_.unified_memory_counters.at(3);
  EXPECT_EQ(t.end_ns, 7000u);
  EXPECT_EQ(t.src_device_id, 0b11u);
  EXPECT_EQ(t.dst_device_id, 0u);
  EXPECT_EQ(t.flags, 1u);

  auto newer =
      Make<CUpti_ActivityUnifiedMemoryCounter3>(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  newer.counterKind = static_cast<CUpti_ActivityUnifiedMemoryCounterKind>(
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT + 3);
  newer.start = 10;
  newer.end = 5;  // before start: kept as an instant
  ASSERT_TRUE(Decode(&newer));
  const UnifiedMemoryCounter& n = out_.unified_memory_counters.at(4);
  EXPECT_EQ(static_cast<uint32_t>(n.counter_kind),
            static_cast<uint32_t>(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT + 3));
  EXPECT_FALSE(IsKnown(n.counter_kind));
  EXPECT_EQ(n.end_ns, 10u);
  EXPECT_EQ(out_.RecordCount(), 5u);
}

// Proves kinds the decoder does not handle are counted and skipped, and that a CUPTI too old to
// decode yields nothing.
TEST_F(DecoderTest, UnknownKindsAndUnsupportedLayout) {
  auto marker = Make<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  EXPECT_FALSE(Decode(&marker));
  EXPECT_FALSE(decoder_.Decode(nullptr, &out_));
  EXPECT_EQ(decoder_.stats().unknown_kinds, 1u);
  EXPECT_EQ(decoder_.stats().last_unknown_kind, static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_MARKER));
  EXPECT_EQ(out_.RecordCount(), 0u);

  StringInterner strings;
  ActivityDecoder old(LayoutForCuptiVersion(18), strings, nullptr);  // CUDA 11.8
  auto api = Make<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  TraceRecords out;
  EXPECT_FALSE(old.Decode(Raw(&api), &out));
  EXPECT_TRUE(out.api_calls.empty());
}

}  // namespace
}  // namespace libprof
