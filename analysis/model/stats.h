// Running statistics of durations (count, total, mean, sample standard deviation, min, max) that
// can be merged, for the "mean ± std (min ‥ max)" cells and for totals over several processes.
//
// Layer: analysis/model/. Pure.
//
// Kept as exact integer sums (count, sum, sum of squares, min, max), so the result does not depend
// on the order in which values arrive: a streamed summary sees records in chunk order, and must
// print what a sorted pass would.
#pragma once

#include <cstdint>
#include <limits>

namespace libprof::analysis {

class Stats {
 public:
  void Add(uint64_t value);
  void Merge(const Stats& other);  // exact: as if every value had been Add'ed here

  uint64_t count() const { return count_; }
  uint64_t total() const { return total_; }  // exact sum
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const;
  // Sample standard deviation (n - 1 in the denominator, like Julia's std and CUDA.jl); 0 for
  // fewer than two values.
  double std() const;

 private:
  uint64_t count_ = 0;
  uint64_t total_ = 0;
  // Sum of squares. A sum of n values below 2^64 has squares summing below 2^128, so this cannot
  // overflow while total_ does not.
  unsigned __int128 squares_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_ = 0;
};

}  // namespace libprof::analysis
