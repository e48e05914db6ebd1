// A histogram of durations in logarithmic buckets, for medians and p90/p99 that can be merged:
// a process's summary and a total over thousands of ranks (profview combine) read their
// quantiles from the same buckets, so combining partial summaries changes nothing.
//
// Layer: analysis/model/. Pure.
//
// Buckets: values below 64 have one bucket each (exact); above, each power of two is cut into 64
// buckets of equal width, so a bucket spans at most 1/64 of its lower bound. A quantile is read
// as the middle of its bucket (clamped to the observed min and max), within 1/128 (0.8%) of the
// exact value. Counts are kept in a dense run of buckets from the lowest to the highest used: a
// few hundred for durations spanning a few powers of two.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace libprof::analysis {

class LogHistogram {
 public:
  void Add(uint64_t value) { AddCount(BucketOf(value), 1); }
  void Merge(const LogHistogram& other);

  // The value at rank ceil(q * count) (nearest rank, q in (0, 1]) as the middle of its bucket,
  // clamped to [min, max]; 0 when empty. `min`/`max` are the exact extremes (Stats keeps them).
  uint64_t Quantile(double q, uint64_t count, uint64_t min, uint64_t max) const;

  // (bucket, count) of every non-empty bucket, in increasing order: the serialised form.
  std::vector<std::pair<uint32_t, uint64_t>> Buckets() const;
  // Adds `count` values to `bucket` (as read back from Buckets()); false for a bucket that
  // cannot exist.
  bool AddBucket(uint32_t bucket, uint64_t count);

  static uint32_t BucketOf(uint64_t value);
  static uint64_t BucketLow(uint32_t bucket);    // smallest value of the bucket
  static uint64_t BucketWidth(uint32_t bucket);  // number of values in it
  static constexpr uint32_t kBuckets = 64 + 58 * 64;  // values up to 2^64 - 1

 private:
  void AddCount(uint32_t bucket, uint64_t count);

  uint32_t base_ = 0;             // bucket of counts_[0]
  std::vector<uint64_t> counts_;  // dense from base_
};

}  // namespace libprof::analysis
