#include "analysis/model/stats.h"

#include <algorithm>
#include <cmath>

namespace libprof::analysis {

void Stats::Add(uint64_t value) {
  ++count_;
  total_ += value;
  squares_ += static_cast<unsigned __int128>(value) * value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  histogram_.Add(value);
}

void Stats::Merge(const Stats& other) {
  count_ += other.count_;
  total_ += other.total_;
  squares_ += other.squares_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  histogram_.Merge(other.histogram_);
}

Stats::State Stats::state() const {
  return State{.count = count_,
               .total = total_,
               .min = min(),
               .max = max_,
               .squares = squares_,
               .histogram = histogram_};
}

std::optional<Stats> Stats::FromState(State state) {
  uint64_t counted = 0;
  for (const auto& [bucket, n] : state.histogram.Buckets()) counted += n;
  if (counted != state.count || state.min > state.max) return std::nullopt;
  Stats s;
  s.count_ = state.count;
  s.total_ = state.total;
  s.squares_ = state.squares;
  s.min_ = state.count == 0 ? std::numeric_limits<uint64_t>::max() : state.min;
  s.max_ = state.max;
  s.histogram_ = std::move(state.histogram);
  return s;
}

double Stats::mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(total_) / static_cast<double>(count_);
}

double Stats::std() const {
  if (count_ < 2) return 0.0;
  // Sum of squared deviations = squares - total^2 / n, computed in integers (total^2 < 2^128)
  // so that no precision is lost to cancellation; only the remainder of the division is a
  // fraction.
  const unsigned __int128 total = total_;
  const unsigned __int128 square_of_total = total * total;
  const unsigned __int128 quotient = square_of_total / count_;
  const unsigned __int128 remainder = square_of_total % count_;
  const unsigned __int128 whole = squares_ >= quotient ? squares_ - quotient : 0;
  const double deviations =
      static_cast<double>(whole) - static_cast<double>(remainder) / static_cast<double>(count_);
  return std::sqrt(std::max(0.0, deviations / static_cast<double>(count_ - 1)));
}

}  // namespace libprof::analysis
