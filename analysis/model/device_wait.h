// How long a call that synchronises the device as a side effect (cudaFree, cudaMalloc, ...)
// waited for device work issued before it: the wait rule of findings' implicit-sync, for the
// analyses that report these waits per call without blaming (profview memory, alloc-churn).
//
// Layer: analysis/model/. Built on StreamModel; pure computation.
#pragma once

#include <cstdint>

#include "analysis/model/stream_deps.h"

namespace libprof::analysis {

// The time from the call's start until the last device work issued before it (on any stream)
// ended, capped at the call's end; 0 when nothing was pending. Work that ended more than 2 µs
// (CPU/GPU clock skew) after the call returned was not waited for.
uint64_t DeviceWideWaitNs(const StreamModel& model, const ApiCall& call);

}  // namespace libprof::analysis
