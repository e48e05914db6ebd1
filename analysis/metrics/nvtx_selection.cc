#include "analysis/metrics/nvtx_selection.h"

#include <algorithm>

namespace libprof::analysis {

void NvtxSelection::Add(uint32_t thread_id, uint32_t end_thread_id, uint64_t start_ns,
                        uint64_t end_ns) {
  threads_[thread_id].ranges.emplace_back(start_ns, end_ns);
  if (end_thread_id != thread_id) threads_[end_thread_id].ranges.emplace_back(start_ns, end_ns);
  spans_.push_back({start_ns, end_ns});
}

void NvtxSelection::Seal() {
  for (auto& [tid, t] : threads_) {
    std::sort(t.ranges.begin(), t.ranges.end());
    t.max_end.resize(t.ranges.size());
    uint64_t latest = 0;
    for (size_t i = 0; i < t.ranges.size(); ++i) {
      latest = std::max(latest, t.ranges[i].second);
      t.max_end[i] = latest;
    }
  }
  spans_ = MergeIntervals(std::move(spans_));
}

bool NvtxSelection::Inside(uint32_t thread_id, uint64_t start_ns, uint64_t end_ns) const {
  auto it = threads_.find(thread_id);
  if (it == threads_.end()) return false;
  const Thread& t = it->second;
  // Some range starting at or before `start_ns` must reach `end_ns`.
  const size_t n =
      std::upper_bound(t.ranges.begin(), t.ranges.end(), std::make_pair(start_ns, UINT64_MAX)) -
      t.ranges.begin();
  return n > 0 && t.max_end[n - 1] >= end_ns;
}

}  // namespace libprof::analysis
