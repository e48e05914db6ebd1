#include "analysis/model/log_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace libprof::analysis {

uint32_t LogHistogram::BucketOf(uint64_t value) {
  if (value < 64) return static_cast<uint32_t>(value);
  const uint32_t exponent = static_cast<uint32_t>(std::bit_width(value)) - 1;  // >= 6
  const uint32_t sub = static_cast<uint32_t>(value >> (exponent - 6)) & 63;
  return (exponent - 5) * 64 + sub;
}

uint64_t LogHistogram::BucketLow(uint32_t bucket) {
  if (bucket < 64) return bucket;
  const uint32_t exponent = bucket / 64 + 5;
  return (uint64_t{64} + bucket % 64) << (exponent - 6);
}

uint64_t LogHistogram::BucketWidth(uint32_t bucket) {
  return bucket < 64 ? 1 : uint64_t{1} << (bucket / 64 - 1);
}

void LogHistogram::AddCount(uint32_t bucket, uint64_t count) {
  if (counts_.empty()) {
    base_ = bucket;
    counts_.assign(1, 0);
  } else if (bucket < base_) {
    counts_.insert(counts_.begin(), base_ - bucket, 0);
    base_ = bucket;
  } else if (bucket - base_ >= counts_.size()) {
    counts_.resize(bucket - base_ + 1, 0);
  }
  counts_[bucket - base_] += count;
}

void LogHistogram::Merge(const LogHistogram& other) {
  for (size_t i = 0; i < other.counts_.size(); ++i) {
    if (other.counts_[i] != 0) AddCount(other.base_ + static_cast<uint32_t>(i), other.counts_[i]);
  }
}

uint64_t LogHistogram::Quantile(double q, uint64_t count, uint64_t min, uint64_t max) const {
  if (count == 0 || counts_.empty()) return 0;
  const double wanted = std::ceil(q * static_cast<double>(count));
  const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(wanted), 1, count);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen < rank) continue;
    const uint32_t bucket = base_ + static_cast<uint32_t>(i);
    const uint64_t middle = BucketLow(bucket) + (BucketWidth(bucket) - 1) / 2;
    return std::clamp(middle, min, max);
  }
  return max;
}

std::vector<std::pair<uint32_t, uint64_t>> LogHistogram::Buckets() const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) out.emplace_back(base_ + static_cast<uint32_t>(i), counts_[i]);
  }
  return out;
}

bool LogHistogram::AddBucket(uint32_t bucket, uint64_t count) {
  if (bucket >= kBuckets) return false;
  if (count != 0) AddCount(bucket, count);
  return true;
}

}  // namespace libprof::analysis
