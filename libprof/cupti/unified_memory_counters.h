// Configures CUPTI's unified-memory counters, which must be set up before
// CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER is enabled
// (cuptiActivityConfigureUnifiedMemoryCounter, cupti_activity.h). Some platforms lack some counters
// (GPU page faults need compute capability 6.0 and 64-bit Linux; several GPUs without peer access
// lack them all): what CUPTI accepts is recorded, what it refuses is reported once by the caller.
//
// Layer: libprof/cupti/ (CUPTI types). Never logs (the session does), never throws.
#pragma once

#include <cupti.h>

#include <string>
#include <vector>

#include "libprof/cupti/cupti_api.h"

namespace libprof {

// Every counter kind this build knows (HtoD ... DtoD), enabled, in CUPTI's order.
std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> UnifiedMemoryCounterConfigs();

struct UnifiedMemoryConfigResult {
  // CUPTI_ERROR_NOT_READY or NOT_INITIALIZED: the driver is not initialised yet (the call must
  // come after cuInit, cupti_activity.h); nothing was configured, try again later.
  bool not_ready = false;
  size_t configured = 0;  // counter kinds CUPTI accepted
  // "" when all were accepted; else the refused kinds with CUPTI's reason, for one warning.
  std::string refused;
};

// Asks CUPTI for all counters at once; when it refuses, for each one alone, so the counters the
// platform has are still recorded. configured == 0 means: leave the activity kind off.
UnifiedMemoryConfigResult ConfigureUnifiedMemoryCounters(const CuptiApi& api);

}  // namespace libprof
