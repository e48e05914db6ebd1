#include "analysis/reports/timeline_lanes.h"

namespace libprof::analysis {

uint32_t LaneAssigner::Place(uint64_t start_ns, uint64_t end_ns) {
  for (uint32_t lane = 0; lane < open_ends_.size(); ++lane) {
    std::vector<uint64_t>& open = open_ends_[lane];
    // A slice that ended at or before this start is closed (touching slices do not overlap).
    while (!open.empty() && open.back() <= start_ns) open.pop_back();
    if (open.empty() || open.back() >= end_ns) {
      open.push_back(end_ns);
      return lane;
    }
  }
  open_ends_.push_back({end_ns});
  return static_cast<uint32_t>(open_ends_.size() - 1);
}

}  // namespace libprof::analysis
