// The length of a union of time intervals that arrive in roughly increasing order, in bounded
// memory: "calling CUDA APIs took" and "GPU was busy" of a streamed summary.
//
// Layer: analysis/metrics/. Pure.
//
// Intervals are coalesced as they come. When more than `max_pending` disjoint pieces are held,
// the oldest of those that ended more than `horizon_ns` before the latest end seen are settled:
// their length is added up (and handed to an optional sink, in order) and they are forgotten. An
// interval that starts before the end of what was settled may overlap it unseen; the union then
// reports out_of_order() and its length must not be trusted (the caller reads the trace again with
// max_pending = 0, which never settles).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/model/intervals.h"

namespace libprof::analysis {

class StreamingUnion {
 public:
  // max_pending 0: keep everything until Finish (exact for any arrival order). `sink`, if given,
  // receives every piece of the union in time order (touching pieces merged).
  StreamingUnion(size_t max_pending, uint64_t horizon_ns, std::vector<Interval>* sink = nullptr);

  void Add(uint64_t start_ns, uint64_t end_ns);  // empty intervals (end <= start) are ignored
  // Adds the parts of [start, end) that lie inside `windows` (sorted, disjoint).
  void AddClipped(uint64_t start_ns, uint64_t end_ns, const std::vector<Interval>& windows);
  void Finish();  // settles everything; length() is then the union's length

  uint64_t length() const { return settled_ns_; }
  bool out_of_order() const { return out_of_order_; }

 private:
  // Merges the inbox into pending_ and settles the oldest pieces when there are too many.
  void Compact();
  void Settle(size_t pieces);

  // Arrivals are batched: sorting a batch and merging it into pending_ costs far less than
  // inserting each one in order (measured on bench/ traces: a few ns per interval).
  static constexpr size_t kInboxSize = 4096;

  size_t max_pending_;
  uint64_t horizon_ns_;
  std::vector<Interval>* sink_;
  uint64_t latest_end_ns_ = 0;
  std::vector<Interval> inbox_;
  std::vector<Interval> pending_;  // sorted, disjoint, touching pieces merged
  std::vector<Interval> merged_;   // scratch for Compact
  uint64_t settled_ns_ = 0;
  uint64_t frontier_ns_ = 0;  // end of the last settled piece
  bool settled_any_ = false;
  bool out_of_order_ = false;
};

}  // namespace libprof::analysis
