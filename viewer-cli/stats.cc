#include "viewer-cli/stats.h"

#include <algorithm>
#include <cmath>

namespace libprof::viewer {

void Stats::Add(uint64_t value) {
  ++count_;
  total_ += value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  const double delta = static_cast<double>(value) - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (static_cast<double>(value) - mean_);
}

void Stats::Merge(const Stats& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  const double n_a = static_cast<double>(count_);
  const double n_b = static_cast<double>(other.count_);
  const double delta = other.mean_ - mean_;
  const double n = n_a + n_b;
  mean_ += delta * n_b / n;
  m2_ += other.m2_ + delta * delta * n_a * n_b / n;
  count_ += other.count_;
  total_ += other.total_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double Stats::std() const {
  if (count_ < 2) return 0.0;
  return std::sqrt(std::max(0.0, m2_ / static_cast<double>(count_ - 1)));
}

}  // namespace libprof::viewer
