#include "analysis/model/intervals.h"

#include <algorithm>

namespace libprof::analysis {

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end_ns <= i.start_ns; });
  // Often already by start (a device's ops, a call's pieces): then no sort. The merge does not
  // depend on the order of equal starts.
  auto by_start = [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start)) {
    std::sort(intervals.begin(), intervals.end(), by_start);
  }
  std::vector<Interval> merged;
  for (const Interval& i : intervals) {
    if (!merged.empty() && i.start_ns <= merged.back().end_ns) {
      merged.back().end_ns = std::max(merged.back().end_ns, i.end_ns);
    } else {
      merged.push_back(i);
    }
  }
  return merged;
}

uint64_t UnionLength(std::vector<Interval> intervals) {
  uint64_t total = 0;
  for (const Interval& i : MergeIntervals(std::move(intervals))) total += i.length();
  return total;
}

uint64_t CoveredLength(const std::vector<Interval>& merged, uint64_t start_ns, uint64_t end_ns) {
  if (end_ns <= start_ns) return 0;
  // First interval that ends after `start_ns`.
  auto it = std::upper_bound(merged.begin(), merged.end(), start_ns,
                             [](uint64_t t, const Interval& i) { return t < i.end_ns; });
  uint64_t total = 0;
  for (; it != merged.end() && it->start_ns < end_ns; ++it) {
    total += OverlapLength(it->start_ns, it->end_ns, start_ns, end_ns);
  }
  return total;
}

std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const uint64_t start = std::max(a[i].start_ns, b[j].start_ns);
    const uint64_t end = std::min(a[i].end_ns, b[j].end_ns);
    if (end > start) out.push_back({start, end});
    if (a[i].end_ns < b[j].end_ns)
      ++i;
    else
      ++j;
  }
  return out;
}

std::vector<Interval> Gaps(const std::vector<Interval>& merged) {
  std::vector<Interval> gaps;
  for (size_t i = 1; i < merged.size(); ++i) {
    if (merged[i].start_ns > merged[i - 1].end_ns) {
      gaps.push_back({merged[i - 1].end_ns, merged[i].start_ns});
    }
  }
  return gaps;
}

void MergeShifted(const std::vector<Interval>& part, int64_t offset, std::vector<Interval>* total) {
  std::vector<Interval> out;
  out.reserve(total->size() + part.size());
  auto add = [&out](Interval i) {
    if (i.end_ns <= i.start_ns) return;
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  };
  auto shifted = [offset](const Interval& i) {
    return Interval{static_cast<uint64_t>(static_cast<int64_t>(i.start_ns) + offset),
                    static_cast<uint64_t>(static_cast<int64_t>(i.end_ns) + offset)};
  };
  size_t a = 0, b = 0;
  while (a < total->size() || b < part.size()) {
    if (b == part.size() ||
        (a < total->size() && (*total)[a].start_ns <= shifted(part[b]).start_ns)) {
      add((*total)[a++]);
    } else {
      add(shifted(part[b++]));
    }
  }
  *total = std::move(out);
}

}  // namespace libprof::analysis
