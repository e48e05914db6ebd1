#include "analysis/metrics/time_bins.h"

#include <algorithm>
#include <cmath>

namespace libprof::analysis {

TimeBins::TimeBins(uint64_t start_ns, uint64_t end_ns, size_t count)
    : start_(start_ns), end_(std::max(end_ns, start_ns + 1)), covered_(std::max<size_t>(count, 1)) {
  bin_ns_ = static_cast<double>(end_ - start_) / static_cast<double>(covered_.size());
}

void TimeBins::Add(uint64_t start_ns, uint64_t end_ns) {
  const uint64_t s = std::max(start_ns, start_);
  const uint64_t e = std::min(end_ns, end_);
  if (e <= s) return;
  const double from = static_cast<double>(s - start_);
  const double to = static_cast<double>(e - start_);
  const size_t last_bin = covered_.size() - 1;
  size_t bin = std::min(static_cast<size_t>(from / bin_ns_), last_bin);
  const size_t end_bin = std::min(static_cast<size_t>(to / bin_ns_), last_bin);
  for (; bin <= end_bin; ++bin) {
    const double lo = std::max(from, static_cast<double>(bin) * bin_ns_);
    const double hi = std::min(to, static_cast<double>(bin + 1) * bin_ns_);
    if (hi > lo) covered_[bin] += hi - lo;
  }
}

uint64_t TimeBins::BinStart(size_t bin) const {
  return start_ + static_cast<uint64_t>(std::floor(static_cast<double>(bin) * bin_ns_));
}

}  // namespace libprof::analysis
