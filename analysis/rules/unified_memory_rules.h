// The findings rules of unified (managed) memory, on what AnalyzeUnifiedMemory (metrics/
// unified_memory.h) finds:
//   uvm-gpu-page-faults  a kernel whose GPU page-fault groups made the driver migrate its data
//                        while it ran: prefetch (cudaMemPrefetchAsync) before the launch, or use
//                        device memory;
//   uvm-cpu-faults       the CPU touching managed memory page by page (the "scalar iteration" of
//                        CUDA.jl's seed): many CPU page faults on one allocation, each pulling a
//                        little back to the host;
//   uvm-thrashing        the driver reporting thrashing, throttling or remote maps between
//                        processors.
// Time lost (blocked_ns, family pattern): the migrations the faults caused (union of their
// spans), or for uvm-thrashing the span of the events; an estimate of what a prefetch or a
// different placement would save, kept out of the host total.
//
// Layer: analysis/rules/, rules; run from the rule registry. Pure computation.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/rules/findings.h"

namespace libprof::analysis {

// uvm-cpu-faults: an allocation needs at least this many CPU page faults. 32: a judgement (a loop
// over a buffer, not a few pages read once); not from a measurement.
inline constexpr uint64_t kUvmCpuFaultsMin = 32;

// Appends the three rules' findings. uvm-gpu-page-faults needs the fault handling or the
// migrations of a kernel (all its launches) to reach options.min_wait_ns, uvm-cpu-faults
// kUvmCpuFaultsMin faults on one allocation over at least min_wait_ns; uvm-thrashing fires on
// any thrashing, throttling or remote-map record.
void FindUnifiedMemoryFindings(const RuleInput& input, std::vector<Finding>* out);

}  // namespace libprof::analysis
