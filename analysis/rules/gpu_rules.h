// The device-side findings rules, on each device's steady state (from the end of start-up,
// analysis/metrics/start_up.h, which this pass reports once as the start-up rule):
// gpu-idle-gaps (a device idle between two operations for at least a threshold, Nsight Systems'
// gpu_gaps), gpu-low-utilization (chunks of the steady state busy less than a threshold, Nsight
// Systems' gpu_time_util; adjacent chunks without a kernel are one finding) and
// gpu-idle-breakdown (a device idle for a large share of its whole steady state), each with its
// idle time split by cause (idle_breakdown.h: launching, blocked in synchronising calls, other).
//
// Layer: analysis/rules/, rules; run from the rule registry. Pure computation.
#pragma once

#include <vector>

#include "analysis/rules/findings.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

// The pass of the three rules, registered in rule_registry.cc: appends the GPU findings of the
// trace (per device) to *out.
void FindGpuFindings(const RuleInput& input, std::vector<Finding>* out);

}  // namespace libprof::analysis
