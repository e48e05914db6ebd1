// Half-open time intervals [start, end) in nanoseconds and their union, the basis of "GPU was
// busy" (overlapping streams are counted once) and of the host-time headline (nested calls and
// overlapping threads are counted once).
//
// Layer: analysis/model/. Pure functions; no trace types.
#pragma once

#include <cstdint>
#include <vector>

namespace libprof::analysis {

struct Interval {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t length() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  bool operator==(const Interval&) const = default;
};

// Sorts and merges overlapping or touching intervals; empty ones (end <= start) are dropped.
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);

// Total length of the union of `intervals` (any order, overlaps counted once).
uint64_t UnionLength(std::vector<Interval> intervals);

// Length of the part of `merged` (sorted, disjoint: MergeIntervals' output) inside [start, end).
uint64_t CoveredLength(const std::vector<Interval>& merged, uint64_t start_ns, uint64_t end_ns);

// The parts of `a` that are also in `b` (both sorted and disjoint); linear time.
std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The gaps between consecutive intervals of `merged` (sorted, disjoint), in order.
std::vector<Interval> Gaps(const std::vector<Interval>& merged);

// Merges `part` (sorted, disjoint), shifted by `offset_ns`, into `total` (sorted, disjoint),
// coalescing overlapping and touching pieces as MergeIntervals does; linear time.
void MergeShifted(const std::vector<Interval>& part, int64_t offset_ns, std::vector<Interval>* total);

// Length of [a_start, a_end) ∩ [b_start, b_end). Inline: the GPU rules call it per idle piece
// and chunk (millions of times).
inline uint64_t OverlapLength(uint64_t a_start, uint64_t a_end, uint64_t b_start,
                              uint64_t b_end) {
  const uint64_t start = a_start > b_start ? a_start : b_start;
  const uint64_t end = a_end < b_end ? a_end : b_end;
  return end > start ? end - start : 0;
}

}  // namespace libprof::analysis
