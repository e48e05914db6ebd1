// Running statistics of durations (count, total, mean, sample standard deviation, min, max) that
// can be merged, for the "mean ± std (min ‥ max)" cells and for totals over several processes.
//
// Layer: viewer-cli/ analysis library. Pure.
#pragma once

#include <cstdint>
#include <limits>

namespace libprof::viewer {

class Stats {
 public:
  void Add(uint64_t value);
  void Merge(const Stats& other);  // Chan et al.'s parallel update: exact as if Add'ed one by one

  uint64_t count() const { return count_; }
  uint64_t total() const { return total_; }  // exact sum
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const { return mean_; }
  // Sample standard deviation (n - 1 in the denominator, like Julia's std and CUDA.jl); 0 for
  // fewer than two values.
  double std() const;

 private:
  uint64_t count_ = 0;
  uint64_t total_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_ = 0;
  double mean_ = 0;
  double m2_ = 0;  // sum of squared deviations from the mean
};

}  // namespace libprof::viewer
