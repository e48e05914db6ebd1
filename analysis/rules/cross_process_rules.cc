#include "analysis/rules/cross_process_rules.h"

#include "analysis/metrics/rank_skew.h"
#include "analysis/rules/rank_rules.h"
#include "analysis/rules/shared_gpu_rules.h"

namespace libprof::analysis {

void AddCrossProcessFindings(const std::vector<ProcessCollectives>& collectives,
                             const std::vector<ProcessGpuUse>& gpu_use,
                             const FindingsOptions& options, FindingsDigest* digest) {
  std::vector<Finding> found;
  if (collectives.size() > 1) {
    found = FindLateRanks(collectives, AnalyzeRankSkew(collectives, options.min_wait_ns), options);
  }
  if (gpu_use.size() > 1) {
    for (Finding& f : FindSharedGpus(gpu_use, options)) found.push_back(std::move(f));
  }
  // (As before shared-gpu: ranks with collectives begin a process even without a late one.)
  if (found.empty() && collectives.size() < 2) return;
  digest->BeginProcess();  // after every process's findings, as listed
  digest->Add(std::move(found));
}

}  // namespace libprof::analysis
