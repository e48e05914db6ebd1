#include "libprof/cupti/activity_kinds.h"

#include "libprof/cupti/unified_memory_counters.h"

namespace libprof {
namespace {

// CUPTI refuses UNIFIED_MEMORY_COUNTER records until their counters are configured, and refuses
// the configuration (CUPTI_ERROR_NOT_READY, measured on an H100 with CUDA 13.0) until the driver
// is initialised: inside InitializeInjection, which runs in cuInit, it is not yet. A partial
// refusal is a warning (the rest is recorded); a full one leaves the kind off.
PrepareResult PrepareUnifiedMemory(const CuptiApi& api, std::string* warning) {
  const UnifiedMemoryConfigResult result = ConfigureUnifiedMemoryCounters(api);
  if (result.not_ready) return PrepareResult::kNotYet;
  if (!result.refused.empty()) {
    *warning = result.configured == 0
                   ? "this CUPTI cannot record unified memory: " + result.refused
                   : "this CUPTI cannot record these unified-memory counters (the others are "
                     "recorded): " +
                         result.refused;
  }
  return result.configured > 0 ? PrepareResult::kReady : PrepareResult::kRefused;
}

}  // namespace

std::vector<ActivityKindToEnable> DataActivityKinds(const RecordKinds& k) {
  std::vector<ActivityKindToEnable> out;
  auto add = [&out](CUpti_ActivityKind kind, const char* what) { out.push_back({kind, what}); };
  if (k.runtime_api) add(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API calls");
  if (k.driver_api) add(CUPTI_ACTIVITY_KIND_DRIVER, "driver API calls");
  // Kernels launched outside any API function would otherwise have no API record to match.
  if (k.runtime_api || k.driver_api) {
    add(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, "internal launches");
  }
  // CONCURRENT_KERNEL, never KERNEL: KERNEL serialises all kernels (cupti_activity.h).
  if (k.kernels) add(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels");
  if (k.memcpy) {
    add(CUPTI_ACTIVITY_KIND_MEMCPY, "memcpys");
    add(CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer memcpys");
  }
  if (k.memset) add(CUPTI_ACTIVITY_KIND_MEMSET, "memsets");
  if (k.sync) {
    add(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronisations");
    add(CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA events");
  }
  if (k.memory) add(CUPTI_ACTIVITY_KIND_MEMORY2, "allocations");
  if (k.overhead) add(CUPTI_ACTIVITY_KIND_OVERHEAD, "profiler overhead");
  // After CONCURRENT_KERNEL: it replaces per-node records of graph launches.
  if (k.graph_trace) add(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "graph launches");
  if (k.uvm) {
    out.push_back({CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, "unified memory",
                   &PrepareUnifiedMemory, /*after_managed_memory=*/true});
  }
  return out;
}

}  // namespace libprof
