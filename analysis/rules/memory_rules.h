// The findings rule alloc-churn: synchronous allocation calls (cudaMalloc/cudaFree, cuMemAlloc,
// cudaMallocHost, ...) allocating and freeing the same size again and again, with their host
// time, the implicit synchronisations they caused, and what a caching allocator or
// cudaMallocAsync would save; and stream-ordered ones (cudaMallocAsync/cudaFreeAsync) whose
// pool gives the memory back to the OS at every synchronisation (its release threshold below
// the size), so that each allocation maps it again.
//
// Layer: analysis/rules/, rules; run from the rule registry, built on memory.h.
// Pure computation.
#pragma once

#include <vector>

#include "analysis/metrics/memory.h"
#include "analysis/rules/findings.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

// Appends one alloc-churn finding per churn group of `trace` (memory.h) whose allocating API is
// not stream-ordered, with at least options.churn_min_pairs pairs and min_wait_ns of host time.
// Savings (blocked_ns is the first):
//   caching_saving_ns  the host time of every pair but the first: a caching allocator keeps the
//                      first pair's memory and hands it out again, so later pairs cost nothing
//                      on the device API (PyTorch's allocator works this way);
//   async_saving_ns    only when the trace has stream-ordered pairs (cudaMallocAsync/
//                      cudaFreeAsync, 2+ pairs) to measure them: the later pairs' host time
//                      minus as many stream-ordered pairs at their mean cost after their own
//                      first pair (the first one creates the pool), never below 0; groups
//                      whose pool gave their memory back do not price them.
// A stream-ordered group gets one when its pool's release threshold was below its size and
// synchronisations followed its frees (memory.h's release synchronisations), with
// churn_min_pairs pairs and a saving of at least min_wait_ns and 50 µs a pair (a pair the pool
// serves from its own memory costs a few µs):
//   caching_saving_ns  the later pairs' host time and the release synchronisations' time not
//                      waiting for the GPU: with the threshold above the size, the pool keeps
//                      the memory; details add pool_release_threshold and release_sync_ns.
// The rule's pass, registered in rule_registry.cc.
void FindMemoryFindings(const RuleInput& input, std::vector<Finding>* out);
// The rule's findings from a process's memory report (of the whole trace, or of
// MemoryAnalysis over its windows).
void ChurnFindings(const ProcessTrace& trace, const MemoryReport& report,
                   const FindingsOptions& options, std::vector<Finding>* out);

}  // namespace libprof::analysis
