#include "analysis/model/nvtx_selection.h"

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
  last_thread_ = nullptr;
}

bool NvtxSelection::Inside(uint32_t thread_id, uint64_t start_ns, uint64_t end_ns) const {
  if (last_thread_ == nullptr || thread_id != last_thread_id_) {
    auto it = threads_.find(thread_id);
    if (it == threads_.end()) return false;
    last_thread_id_ = thread_id;
    last_thread_ = &it->second;
  }
  const Thread& t = *last_thread_;
  // n: how many ranges start at or before `start_ns`; some of them must reach `end_ns`.
  auto starts_by = [&](size_t count) {  // do exactly `count` ranges start by start_ns?
    return (count == 0 || t.ranges[count - 1].first <= start_ns) &&
           (count == t.ranges.size() || t.ranges[count].first > start_ns);
  };
  size_t n = t.last_count;
  if (!starts_by(n)) {
    n = n < t.ranges.size() && starts_by(n + 1)
            ? n + 1
            : std::upper_bound(t.ranges.begin(), t.ranges.end(),
                               std::make_pair(start_ns, UINT64_MAX)) -
                  t.ranges.begin();
    t.last_count = n;
  }
  return n > 0 && t.max_end[n - 1] >= end_ns;
}

}  // namespace libprof::analysis
