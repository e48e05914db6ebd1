#include "analysis/model/quiescent_point.h"

#include <algorithm>
#include <vector>

namespace libprof::analysis {
namespace {

// The spans' answer by sorting them all: q is quiescent when the largest end of the spans
// starting before it is at most q. `max_end` is that largest end over spans before these.
std::optional<uint64_t> LatestBySort(std::span<Span> spans, uint64_t after, uint64_t max_end) {
  std::sort(spans.begin(), spans.end());
  std::optional<uint64_t> best;
  for (const auto& [start, end] : spans) {
    if (max_end <= start && start > after) best = start;
    max_end = std::max(max_end, end);
  }
  return best;
}

}  // namespace

std::optional<uint64_t> LatestQuiescentPoint(std::span<Span> spans, uint64_t after,
                                             uint64_t limit) {
  uint64_t max_end = 0;
  for (const Span& s : spans) max_end = std::max(max_end, s.second);
  if (max_end <= limit) return limit;
  if (after >= limit) return std::nullopt;
  // Candidates lie in (after, limit): buckets of equal width over it. A bucket can hold the
  // answer only if the spans starting before it end by its last time; the latest such bucket
  // is sorted and scanned, then the one before it, and so on.
  const uint64_t lo = after + 1;
  const size_t buckets = std::clamp<size_t>(spans.size() / 16, 1, 4096);
  const uint64_t width = (limit - lo) / buckets + 1;
  auto bucket_of = [&](uint64_t start) -> size_t { return (start - lo) / width; };
  uint64_t before_lo = 0;  // largest end of the spans starting at or before `after`
  std::vector<uint64_t> bucket_max(buckets, 0);
  std::vector<size_t> first(buckets + 1, 0);  // counting sort of the spans by bucket
  for (const auto& [start, end] : spans) {
    if (start < lo) {
      before_lo = std::max(before_lo, end);
    } else {
      const size_t b = bucket_of(start);
      bucket_max[b] = std::max(bucket_max[b], end);
      ++first[b + 1];
    }
  }
  for (size_t b = 0; b < buckets; ++b) first[b + 1] += first[b];
  std::vector<Span> sorted(first[buckets]);
  std::vector<size_t> next(first.begin(), first.end() - 1);
  for (const Span& s : spans) {
    if (s.first >= lo) sorted[next[bucket_of(s.first)]++] = s;
  }
  std::vector<uint64_t> ended_before(buckets);  // largest end of the spans before bucket b
  uint64_t running = before_lo;
  for (size_t b = 0; b < buckets; ++b) {
    ended_before[b] = running;
    running = std::max(running, bucket_max[b]);
  }
  for (size_t b = buckets; b-- > 0;) {
    const uint64_t last_time = lo + (b + 1) * width - 1;
    if (ended_before[b] > last_time || first[b] == first[b + 1]) continue;
    const std::span<Span> in_bucket(sorted.data() + first[b], first[b + 1] - first[b]);
    if (auto q = LatestBySort(in_bucket, after, ended_before[b])) return q;
  }
  return std::nullopt;
}

}  // namespace libprof::analysis
