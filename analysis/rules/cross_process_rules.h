// The rules over several processes (registered with cross_rank): late-rank (rank_rules.h) and
// shared-gpu (shared_gpu_rules.h). They need every process, so `findings` and `combine` keep a
// few numbers per process while reading (its collectives, its GPUs) and run them once all are
// in, after every process's own findings.
//
// Layer: analysis/rules/.
#pragma once

#include <vector>

#include "analysis/metrics/gpu_use.h"
#include "analysis/model/collectives.h"
#include "analysis/rules/findings.h"
#include "analysis/rules/findings_digest.h"

namespace libprof::analysis {

// Their findings into *digest as one more process's (BeginProcess), when there are any.
void AddCrossProcessFindings(const std::vector<ProcessCollectives>& collectives,
                             const std::vector<ProcessGpuUse>& gpu_use,
                             const FindingsOptions& options, FindingsDigest* digest);

}  // namespace libprof::analysis
