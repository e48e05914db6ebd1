// A time range split into equal bins, each accumulating how long the intervals added to it
// covered it: the per-pixel busy fractions of the HTML report's timeline lanes and the GPU
// utilisation over time. Overlapping intervals add up (a bin can pass 100%); merge them first
// (intervals.h MergeIntervals) where "busy" means the union.
//
// Layer: analysis/metrics/. Pure computation; no trace types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace libprof::analysis {

class TimeBins {
 public:
  // `count` bins of equal length over [start_ns, end_ns); at least one, and an empty range is
  // widened to 1 ns so that every bin has a length.
  TimeBins(uint64_t start_ns, uint64_t end_ns, size_t count);

  // Adds the part of [start_ns, end_ns) inside the range to the bins it covers: O(bins touched).
  void Add(uint64_t start_ns, uint64_t end_ns);

  size_t size() const { return covered_.size(); }
  double bin_ns() const { return bin_ns_; }
  uint64_t start_ns() const { return start_; }
  uint64_t end_ns() const { return end_; }
  double Covered(size_t bin) const { return covered_[bin]; }  // ns
  // Covered time over the bin's length (not capped: overlapping intervals can pass 1).
  double Fraction(size_t bin) const { return covered_[bin] / bin_ns_; }
  // Where bin `bin` starts (rounded down to a nanosecond).
  uint64_t BinStart(size_t bin) const;

 private:
  uint64_t start_ = 0;
  uint64_t end_ = 0;
  double bin_ns_ = 1;
  std::vector<double> covered_;
};

}  // namespace libprof::analysis
