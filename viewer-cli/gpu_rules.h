// The device-side findings rules: gpu-idle-gaps (a device idle between two operations for at
// least a threshold, Nsight Systems' gpu_gaps) and gpu-low-utilization (chunks of a device's
// active span busy less than a threshold, Nsight Systems' gpu_time_util), with the share of idle
// time spent waiting for launches.
//
// Layer: viewer-cli/ analysis library; called by findings.cc. Pure computation.
#pragma once

#include <vector>

#include "viewer-cli/findings.h"
#include "viewer-cli/trace_index.h"

namespace libprof::viewer {

// Appends the GPU findings of `trace` (per device) to *out.
void FindGpuFindings(const ProcessTrace& trace, const TraceIndex& index,
                     const FindingsOptions& options, std::vector<Finding>* out);

}  // namespace libprof::viewer
