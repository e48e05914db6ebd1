// The "CUPTI floor" (issue 5, "Overhead" 1): an injection library that enables the activity kinds
// libprof enables by default, with the same insignificant-API filter (libprof/cupti/api_filter.cc,
// compiled in), and drops every completed buffer unread. What it costs is what CUPTI itself costs
// for that record set, the lower bound for any CUPTI-based tool; libprof's added time is compared
// with it.
//
// Buffers as libprof's: 8 MiB, calloc'd, ZEROED_OUT_ACTIVITY_BUFFER=1 (else CUPTI zeroes each in
// the app thread, cupti-facts.md 3.2), reused from a pool; a completed buffer only has its valid
// bytes zeroed again. Not copied from libprof: its own clock callback, SYSTEM thread ids and its
// counting callback on kernel launches; those count as libprof's cost.
//
// CUPTI_FLOOR_SKIP=driver,event,... leaves those kinds out (names below), to tell which kind costs
// what. CUPTI_FLOOR_SYNC_CALLBACKS=1 adds API callbacks (enter and exit, a timestamp each) on the
// synchronising, event-record, event-wait and query calls: what recording those calls from
// callbacks instead of the SYNCHRONIZATION and CUDA_EVENT kinds would cost at least.
//
// Load with CUDA_INJECTION64_PATH=.../libcupti_floor.so. At exit it flushes (forced) and prints
// "cupti_floor: buffers=N bytes=B dropped=D" on stderr.
#include <cupti.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "libprof/cupti/api_filter.h"

namespace {

constexpr size_t kBufferBytes = size_t{8} << 20;  // libprof's LIBPROF_BUFFER_SIZE_KB default
constexpr int kInitialBuffers = 4;                // libprof's LIBPROF_BUFFER_POOL default

std::mutex g_pool_mutex;
std::vector<uint8_t*>* g_pool = nullptr;  // never freed: CUPTI may call back during exit
std::atomic<uint64_t> g_buffers{0};
std::atomic<uint64_t> g_bytes{0};

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* granted = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (!g_pool->empty()) {
      granted = g_pool->back();
      g_pool->pop_back();
    }
  }
  if (granted == nullptr) granted = static_cast<uint8_t*>(std::calloc(1, kBufferBytes));
  *buffer = granted;
  *size = granted ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  if (buffer == nullptr) return;
  g_buffers.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(valid_size, std::memory_order_relaxed);
  std::memset(buffer, 0, valid_size);  // unread: only make it reusable
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_pool->push_back(buffer);
}

std::atomic<uint64_t> g_sync_callbacks{0};

void CUPTIAPI OnSyncCall(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_EXIT) {
    g_sync_callbacks.fetch_add(1, std::memory_order_relaxed);
  }
}

void EnableSyncCallbacks() {
  CUpti_SubscriberHandle subscriber = nullptr;
  if (cuptiSubscribe(&subscriber, OnSyncCall, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti_floor: cuptiSubscribe failed\n");
    return;
  }
  const CUpti_CallbackId runtime[] = {
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010,
      CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010,
      CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
  };
  const CUpti_CallbackId driver[] = {
      CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,       CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
      CUPTI_DRIVER_TRACE_CBID_cuEventRecord,          CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags, CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuEventQuery,           CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
      CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,          CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,      CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
  };
  for (CUpti_CallbackId cbid : runtime) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  }
  for (CUpti_CallbackId cbid : driver) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
}

void AtExit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::fprintf(stderr, "cupti_floor: sync_callbacks=%llu buffers=%llu bytes=%llu dropped=%zu\n",
               static_cast<unsigned long long>(g_sync_callbacks.load()),
               static_cast<unsigned long long>(g_buffers.load()),
               static_cast<unsigned long long>(g_bytes.load()), dropped);
}

bool Check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  std::fprintf(stderr, "cupti_floor: %s failed: %s\n", what, text ? text : "?");
  return false;
}

}  // namespace

// Called by the CUDA driver inside cuInit (cupti-facts.md 1.1): no CUDA calls here.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    g_pool = new std::vector<uint8_t*>;
    for (int i = 0; i < kInitialBuffers; ++i) {
      if (void* p = std::calloc(1, kBufferBytes)) g_pool->push_back(static_cast<uint8_t*>(p));
    }
    uint8_t zeroed = 1;
    size_t size = sizeof zeroed;
    Check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed),
          "ZEROED_OUT_ACTIVITY_BUFFER");
    if (!Check(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
               "cuptiActivityRegisterCallbacks")) {
      return;
    }
    // libprof's default set, in its order (libprof/cupti/cupti_session.cc).
    const struct {
      CUpti_ActivityKind kind;
      const char* name;  // for CUPTI_FLOOR_SKIP
    } kinds[] = {
        {CUPTI_ACTIVITY_KIND_DEVICE, "device"},
        {CUPTI_ACTIVITY_KIND_CONTEXT, "context"},
        {CUPTI_ACTIVITY_KIND_STREAM, "stream"},
        {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime"},
        {CUPTI_ACTIVITY_KIND_DRIVER, "driver"},
        {CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, "internal-launch"},
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"},
        {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
        {CUPTI_ACTIVITY_KIND_MEMCPY2, "memcpy2"},
        {CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
        {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync"},
        {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "event"},
        {CUPTI_ACTIVITY_KIND_MEMORY2, "memory"},
        {CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"},
    };
    const char* skip_env = std::getenv("CUPTI_FLOOR_SKIP");
    const std::string skip = "," + std::string(skip_env ? skip_env : "") + ",";
    auto skipped = [&](const char* name) {
      return skip.find("," + std::string(name) + ",") != std::string::npos;
    };
    const bool skip_driver = skipped("driver");
    for (const auto& [kind, name] : kinds) {
      if (skipped(name)) continue;
      char what[64];
      std::snprintf(what, sizeof what, "cuptiActivityEnable(kind %d)", static_cast<int>(kind));
      Check(cuptiActivityEnable(kind), what);
    }
    // After enabling RUNTIME and DRIVER: enabling a kind resets the per-call choices.
    for (uint32_t cbid : libprof::InsignificantRuntimeCbids()) {
      cuptiActivityEnableRuntimeApi(cbid, 0);
    }
    for (uint32_t cbid : libprof::InsignificantDriverCbids()) {
      if (!skip_driver) cuptiActivityEnableDriverApi(cbid, 0);
    }
    const char* sync_callbacks = std::getenv("CUPTI_FLOOR_SYNC_CALLBACKS");
    if (sync_callbacks != nullptr && std::strcmp(sync_callbacks, "1") == 0) EnableSyncCallbacks();
    std::atexit(AtExit);
  });
  return 1;
}
