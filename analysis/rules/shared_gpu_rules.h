// shared-gpu: processes of one host that ran work on the same GPU (by UUID) at the same time.
// CUDA time-slices a GPU between processes (without MPS), so each one's work waits while the
// others' runs, and each process's own findings count the others' work as idle GPU time: ranks
// that forgot to pick their own device (torch.cuda.set_device(local_rank)) all land on GPU 0
// (.carry/s17e/ddp_same_gpu.py on the H200: two DDP ranks on cuda:0, each "90% idle"). CUPTI's
// kernel times include the other processes' turns: two processes of 600 GEMMs each on one H200
// recorded a median kernel of 4.15 ms against 1.63 ms alone, and GPU busy time 2.2 times the work
// (.carry/s18/two_gemm_same_gpu.py), so their busy times add up to over 100% of the shared time.
// Like late-rank it needs every process, so it is not a per-process pass: RunFindings (and
// combine) call FindSharedGpus once all processes are read, from each process's ProcessGpuUse.
//
// Only first and last operation and busy time per GPU are kept per process (gpu_use.h), so the
// busy time within the shared stretch is an estimate: each process's busy time spread evenly over
// its own span (first to last operation), scaled to the part of that span shared with another.
//
// Layer: analysis/rules/.
#pragma once

#include <span>
#include <vector>

#include "analysis/metrics/gpu_use.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

// One finding per GPU of a host that two or more processes used at once for >= min_wait_ns, in
// the process that used it first (its pid, path and device id); blocked_ns what a GPU of its own
// would save each of them (estimated: the time their work ran at once, taking turns, over their
// number; shared_gpu_rules.cc says how).
std::vector<Finding> FindSharedGpus(std::span<const ProcessGpuUse> processes,
                                    const FindingsOptions& options);

}  // namespace libprof::analysis
