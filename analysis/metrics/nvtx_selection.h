// The NVTX ranges that --nvtx selects in one process, answering the filter's question for a
// streamed record: does [start, end] lie inside one selected range of this thread (the thread
// that opened the range, or the one that ended a start/end range)?
//
// Layer: analysis/metrics/. Pure. Same rule as filters.h's ApplyFilters.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/model/intervals.h"

namespace libprof::analysis {

class NvtxSelection {
 public:
  void Add(uint32_t thread_id, uint32_t end_thread_id, uint64_t start_ns, uint64_t end_ns);
  void Seal();  // after the last Add, before the first Inside

  bool empty() const { return spans_.empty() && threads_.empty(); }
  bool Inside(uint32_t thread_id, uint64_t start_ns, uint64_t end_ns) const;
  // The union of the selected ranges as half-open intervals: the analysed time.
  const std::vector<Interval>& spans() const { return spans_; }

 private:
  struct Thread {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [start, end], sorted by start
    std::vector<uint64_t> max_end;  // max_end[i]: the latest end among ranges[0..i]
  };
  std::unordered_map<uint32_t, Thread> threads_;
  std::vector<Interval> spans_;
};

}  // namespace libprof::analysis
