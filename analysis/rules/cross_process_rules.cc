#include "analysis/rules/cross_process_rules.h"

#include "analysis/metrics/rank_skew.h"
#include "analysis/model/trace_index.h"
#include "analysis/rules/rank_rules.h"
#include "analysis/rules/shared_gpu_rules.h"

namespace libprof::analysis {

void CrossProcessInputs::AddWhole(const ProcessTrace& trace, std::vector<std::string>* warnings) {
  gpu_use.push_back(MeasureGpuUse(trace));
  if (!HasNcclRanges(trace)) return;
  collectives.push_back(ExtractCollectives(TraceIndex(trace)));
  for (const std::string& w : collectives.back().warnings) warnings->push_back(w);
}

WindowedFindings::Hooks WindowedCrossProcessInputs::Hooks() {
  WindowedFindings::Hooks hooks;
  hooks.in_order = [this](const WindowedFindings::Window& w) { use_.Add(w.index.device_ops()); };
  return hooks;
}

void WindowedCrossProcessInputs::Finish(const WindowedFindings& plan, CrossProcessInputs* inputs) {
  inputs->gpu_use.push_back(use_.Finish(plan.whole()));
}

std::vector<Finding> FindCrossProcessFindings(const CrossProcessInputs& inputs,
                                              const FindingsOptions& options) {
  std::vector<Finding> found;
  const std::vector<ProcessCollectives>& ranks = inputs.collectives;
  if (ranks.size() > 1) {
    found = FindLateRanks(ranks, AnalyzeRankSkew(ranks, options.min_wait_ns), options);
  }
  if (inputs.gpu_use.size() > 1) {
    for (Finding& f : FindSharedGpus(inputs.gpu_use, options)) found.push_back(std::move(f));
  }
  return found;
}

void AddCrossProcessFindings(const CrossProcessInputs& inputs, const FindingsOptions& options,
                             FindingsDigest* digest) {
  std::vector<Finding> found = FindCrossProcessFindings(inputs, options);
  // (As before shared-gpu: ranks with collectives begin a process even without a late one.)
  if (found.empty() && inputs.collectives.size() < 2) return;
  digest->BeginProcess();  // after every process's findings, as listed
  digest->Add(std::move(found));
}

}  // namespace libprof::analysis
