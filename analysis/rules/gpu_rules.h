// The device-side findings rules: gpu-idle-gaps (a device idle between two operations for at
// least a threshold, Nsight Systems' gpu_gaps), gpu-low-utilization (chunks of a device's
// active span busy less than a threshold, Nsight Systems' gpu_time_util) and gpu-idle-breakdown
// (a device idle for a large share of its whole active span), each with its idle time split by
// cause (idle_breakdown.h: launching, blocked in synchronising calls, other).
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
