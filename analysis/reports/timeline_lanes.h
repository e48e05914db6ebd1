// Splits the slices of one timeline track (a host thread, a GPU stream) into lanes on which they
// nest properly. Chrome's format wants the complete events of one thread to be strictly nested;
// Perfetto's importer drops or misplaces a slice that only partly overlaps another on the same
// thread, which happens with clock jitter between records of different sources (an NVTX range
// and a CUDA call) or with overlapping work reported on one stream.
//
// Layer: analysis/reports/. Pure computation.
#pragma once

#include <cstdint>
#include <vector>

namespace libprof::analysis {

class LaneAssigner {
 public:
  // The lane of the slice [start_ns, end_ns]: the first lane where it nests inside the open
  // slices (or where none is open at start_ns); a new lane when none fits. Lane 0 is the track
  // itself. Slices must come in order of start, longer first among equal starts.
  uint32_t Place(uint64_t start_ns, uint64_t end_ns);
  uint32_t lanes() const { return static_cast<uint32_t>(open_ends_.size()); }

 private:
  std::vector<std::vector<uint64_t>> open_ends_;  // per lane, the ends of the open slices
};

}  // namespace libprof::analysis
