#include "libprof/cupti/unified_memory_counters.h"

#include "proto/trace_model.h"

namespace libprof {
namespace {

std::string ResultText(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.cuptiGetResultString != nullptr) api.cuptiGetResultString(result, &text);
  return text != nullptr ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace

std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> UnifiedMemoryCounterConfigs() {
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> configs;
  for (int kind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
       kind < CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT; ++kind) {
    CUpti_ActivityUnifiedMemoryCounterConfig config{};
    // Scope and device are deprecated since CUDA 7.0 (cupti_activity.h); NVIDIA's sample still
    // sets the process-wide scope.
    config.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_ALL_DEVICES;
    config.kind = static_cast<CUpti_ActivityUnifiedMemoryCounterKind>(kind);
    config.deviceId = 0;
    config.enable = 1;
    configs.push_back(config);
  }
  return configs;
}

UnifiedMemoryConfigResult ConfigureUnifiedMemoryCounters(const CuptiApi& api) {
  UnifiedMemoryConfigResult result;
  if (api.cuptiActivityConfigureUnifiedMemoryCounter == nullptr) {
    result.refused = "this CUPTI has no cuptiActivityConfigureUnifiedMemoryCounter";
    return result;
  }
  try {
    std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> configs = UnifiedMemoryCounterConfigs();
    const CUptiResult all = api.cuptiActivityConfigureUnifiedMemoryCounter(
        configs.data(), static_cast<uint32_t>(configs.size()));
    if (all == CUPTI_SUCCESS) {
      result.configured = configs.size();
      return result;
    }
    if (all == CUPTI_ERROR_NOT_READY || all == CUPTI_ERROR_NOT_INITIALIZED) {
      result.not_ready = true;
      return result;
    }
    for (CUpti_ActivityUnifiedMemoryCounterConfig& config : configs) {
      const CUptiResult one = api.cuptiActivityConfigureUnifiedMemoryCounter(&config, 1);
      if (one == CUPTI_SUCCESS) {
        ++result.configured;
        continue;
      }
      if (!result.refused.empty()) result.refused += ", ";
      result.refused += ToString(static_cast<UvmCounterKind>(config.kind));
      result.refused += " (" + ResultText(api, one) + ")";
    }
  } catch (...) {
    result.refused = "out of memory";
  }
  return result;
}

}  // namespace libprof
