#include "analysis/metrics/nvtx_projection.h"

#include <algorithm>

namespace libprof::analysis {

void NvtxProjection::AddRange(uint32_t thread_id, uint64_t start_ns, uint64_t end_ns,
                              uint32_t row) {
  threads_[thread_id].ranges.push_back({start_ns, end_ns, row});
  if (row >= gpu_ns_.size()) gpu_ns_.resize(row + 1);
}

void NvtxProjection::AddLaunch(uint32_t thread_id, uint64_t start_ns, uint64_t device_ns) {
  if (!sorted_) {
    for (auto& [tid, t] : threads_) {
      std::sort(t.ranges.begin(), t.ranges.end(),
                [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; });
    }
    sorted_ = true;
  }
  auto it = threads_.find(thread_id);
  if (it == threads_.end() || device_ns == 0) return;
  Thread& t = it->second;
  if (start_ns < t.position) {
    t.late.emplace_back(start_ns, device_ns);
    return;
  }
  Sweep(&t, start_ns, device_ns);
}

void NvtxProjection::Sweep(Thread* t, uint64_t start_ns, uint64_t device_ns) {
  t->position = start_ns;
  while (t->next < t->ranges.size() && t->ranges[t->next].start_ns <= start_ns) {
    t->open.push_back(static_cast<uint32_t>(t->next++));
  }
  // A range that ended before this launch cannot hold a later one either.
  std::erase_if(t->open, [&](uint32_t r) { return t->ranges[r].end_ns < start_ns; });
  for (uint32_t r : t->open) gpu_ns_[t->ranges[r].row] += device_ns;
}

void NvtxProjection::Finish() {
  for (auto& [tid, t] : threads_) {
    if (t.late.empty()) continue;
    std::sort(t.late.begin(), t.late.end());
    t.next = 0;
    t.open.clear();
    t.position = 0;
    for (auto [start, ns] : t.late) Sweep(&t, start, ns);
    t.late.clear();
  }
}

}  // namespace libprof::analysis
