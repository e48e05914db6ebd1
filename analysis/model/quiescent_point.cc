#include "analysis/model/quiescent_point.h"

#include <algorithm>
#include <optional>

namespace libprof::analysis {
namespace {

// The spans starting in (after, limit), in buckets of equal width of start time: what each
// bucket holds (sorted on demand), how many, and the largest end of the spans starting before
// it. A bucket can hold a quiescent point only if the spans starting before it end by its
// last time.
class StartBuckets {
 public:
  StartBuckets(std::span<const Span> spans, uint64_t after, uint64_t limit)
      : lo_(after + 1),
        shift_(WidthShift(limit - lo_, std::clamp<size_t>(spans.size() / 16, 1, 4096))),
        count_(((limit - lo_) >> shift_) + 1),
        first_(count_ + 1, 0),
        sorted_flags_(count_, false),
        ended_before_(count_) {
    uint64_t before_lo = 0;  // largest end of the spans starting at or before `after`
    std::vector<uint64_t> bucket_max(count_, 0);
    for (const auto& [start, end] : spans) {
      if (start < lo_) {
        before_lo = std::max(before_lo, end);
      } else {
        const size_t b = Of(start);
        bucket_max[b] = std::max(bucket_max[b], end);
        ++first_[b + 1];
      }
    }
    for (size_t b = 0; b < count_; ++b) first_[b + 1] += first_[b];
    spans_.resize(first_[count_]);
    std::vector<size_t> next(first_.begin(), first_.end() - 1);
    for (const Span& s : spans) {
      if (s.first >= lo_) spans_[next[Of(s.first)]++] = s;
    }
    uint64_t running = before_lo;
    for (size_t b = 0; b < count_; ++b) {
      ended_before_[b] = running;
      running = std::max(running, bucket_max[b]);
    }
  }

  size_t count() const { return count_; }
  size_t Of(uint64_t start) const { return (start - lo_) >> shift_; }
  uint64_t LastTime(size_t b) const { return lo_ + ((uint64_t{b} + 1) << shift_) - 1; }
  // Spans starting in buckets before b.
  size_t StartedBefore(size_t b) const { return first_[b]; }

  // The latest quiescent span start q with after < q <= until, searching buckets from `until`'s
  // down to `from` (those before `from` are known to hold none after `after`), with the number
  // of spans starting in (after, q) before it in start order (`before`).
  struct Point {
    uint64_t q;
    size_t before;
  };
  std::optional<Point> LatestUntil(uint64_t after, uint64_t until, size_t from) {
    for (size_t b = Of(until) + 1; b-- > from;) {
      if (ended_before_[b] > LastTime(b) || first_[b] == first_[b + 1]) continue;
      if (!sorted_flags_[b]) {
        std::sort(spans_.begin() + first_[b], spans_.begin() + first_[b + 1]);
        sorted_flags_[b] = true;
      }
      std::optional<Point> best;
      uint64_t max_end = ended_before_[b];
      for (size_t i = first_[b]; i < first_[b + 1]; ++i) {
        const auto& [start, end] = spans_[i];
        if (start > until) break;
        if (max_end <= start && start > after) best = Point{start, i};
        max_end = std::max(max_end, end);
      }
      if (best) return best;
    }
    return std::nullopt;
  }

 private:
  // Buckets `1 << shift` wide, at most `wanted` of them over `range` + 1 times: a shift, not a
  // division, per span (a try buckets hundreds of thousands).
  static unsigned WidthShift(uint64_t range, size_t wanted) {
    unsigned shift = 0;
    while (shift < 63 && (range >> shift) + 1 > wanted) ++shift;
    return shift;
  }

  uint64_t lo_;
  unsigned shift_;
  size_t count_;
  std::vector<size_t> first_;  // counting sort of the spans by bucket
  std::vector<bool> sorted_flags_;
  std::vector<uint64_t> ended_before_;
  std::vector<Span> spans_;
};

uint64_t MaxEnd(std::span<const Span> spans) {
  uint64_t max_end = 0;
  for (const Span& s : spans) max_end = std::max(max_end, s.second);
  return max_end;
}

}  // namespace

std::vector<uint64_t> QuiescentCuts(std::span<const Span> spans, uint64_t after, uint64_t limit,
                                    size_t every) {
  std::vector<uint64_t> cuts;
  if (after >= limit) {
    if (MaxEnd(spans) <= limit) cuts.push_back(limit);
    return cuts;
  }
  StartBuckets buckets(spans, after, limit);
  // Inner cuts: after each `every` spans (by bucket), the latest quiescent start before there
  // that leaves a span before it since the last cut (a cut with nothing before it cuts nothing).
  if (every > 0) {
    uint64_t last = after;
    size_t last_bucket = 0, last_index = 0;  // the last cut's span, in start order
    bool first = true;
    size_t target = every;  // spans started, counted by bucket, where the next cut is wanted
    for (size_t b = 0; b + 1 < buckets.count(); ++b) {
      if (buckets.StartedBefore(b + 1) < target) continue;
      const auto point = buckets.LatestUntil(last, buckets.LastTime(b), last_bucket);
      if (point && (point->before > last_index || (first && point->before > 0))) {
        cuts.push_back(point->q);
        last = point->q;
        last_bucket = buckets.Of(point->q);
        last_index = point->before;
        first = false;
        target = buckets.StartedBefore(last_bucket) + every;
      } else {
        target = buckets.StartedBefore(b + 1) + every;  // none since the last cut: a longer window
      }
    }
  }
  std::optional<uint64_t> latest;
  if (MaxEnd(spans) <= limit) {
    latest = limit;
  } else if (const auto point = buckets.LatestUntil(after, limit - 1, 0)) {
    latest = point->q;
  } else {
    return {};
  }
  while (!cuts.empty() && cuts.back() >= *latest) cuts.pop_back();
  cuts.push_back(*latest);
  return cuts;
}

}  // namespace libprof::analysis
