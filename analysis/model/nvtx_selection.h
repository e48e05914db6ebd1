// The NVTX ranges that --nvtx selects in one process, answering the filter's question for a
// record: does [start, end] lie inside one selected range of this thread (the thread that opened
// the range, or the one that ended a start/end range)? The one rule of --nvtx, for the streamed
// summary (process_summarizer.h) and for traces in memory (filters.h's ApplyFilters).
//
// Layer: analysis/model/. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/model/intervals.h"

namespace libprof::analysis {

// A selected range: the threads whose records it holds and its time.
struct NvtxRange {
  uint32_t thread_id = 0;
  uint32_t end_thread_id = 0;  // the thread that ended a start/end range, else thread_id
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

class NvtxSelection {
 public:
  void Add(uint32_t thread_id, uint32_t end_thread_id, uint64_t start_ns, uint64_t end_ns);
  void Add(const NvtxRange& r) { Add(r.thread_id, r.end_thread_id, r.start_ns, r.end_ns); }
  void Seal();  // after the last Add, before the first Inside

  bool empty() const { return spans_.empty() && threads_.empty(); }
  bool Inside(uint32_t thread_id, uint64_t start_ns, uint64_t end_ns) const;
  // The union of the selected ranges as half-open intervals: the analysed time.
  const std::vector<Interval>& spans() const { return spans_; }

 private:
  struct Thread {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [start, end], sorted by start
    std::vector<uint64_t> max_end;  // max_end[i]: the latest end among ranges[0..i]
    // How many ranges start at or before the time last asked about. A thread's records come
    // mostly in time order, so the next answer is usually here or one further: no search.
    mutable size_t last_count = 0;
  };
  std::unordered_map<uint32_t, Thread> threads_;
  // The thread last asked about (a chunk holds runs of one thread's records): no lookup.
  mutable uint32_t last_thread_id_ = 0;
  mutable const Thread* last_thread_ = nullptr;
  std::vector<Interval> spans_;
};

}  // namespace libprof::analysis
