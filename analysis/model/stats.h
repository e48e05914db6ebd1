// Running statistics of durations (count, total, mean, sample standard deviation, min, max, and
// quantiles from a log-bucketed histogram) that can be merged, for the "mean ± std (min ‥ max)"
// cells, the p50/p90/p99 of the JSON, and totals over several processes or partial summaries.
//
// Layer: analysis/model/. Pure.
//
// Kept as exact integer sums (count, sum, sum of squares, min, max), so the result does not depend
// on the order in which values arrive: a streamed summary sees records in chunk order, and must
// print what a sorted pass would.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "analysis/model/log_histogram.h"

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
  // The q-quantile (0 < q <= 1) within 0.8% (log_histogram.h); 0 when empty.
  uint64_t Quantile(double q) const { return histogram_.Quantile(q, count_, min(), max_); }

  // Everything a Stats holds, to write it out and read it back exactly (partial summaries).
  struct State {
    uint64_t count = 0, total = 0, min = 0, max = 0;
    unsigned __int128 squares = 0;
    LogHistogram histogram;
  };
  State state() const;
  // nullopt when `state` cannot come from Add/Merge (its histogram disagrees with its count).
  static std::optional<Stats> FromState(State state);

 private:
  uint64_t count_ = 0;
  uint64_t total_ = 0;
  // Sum of squares. A sum of n values below 2^64 has squares summing below 2^128, so this cannot
  // overflow while total_ does not.
  unsigned __int128 squares_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_ = 0;
  LogHistogram histogram_;
};

}  // namespace libprof::analysis
