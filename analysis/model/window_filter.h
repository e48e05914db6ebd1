// --pid, --tid, --nvtx and --from/--to (filters.h) on a one-process trace read in windows
// (trace_windows.h): each window filtered to the records that ApplyFilters keeps of the whole
// trace, so that an analysis in windows answers for the filtered trace as the whole path does.
//
// Every step of ApplyFilters keeps or drops a record by its own time, thread or range, or by its
// call's correlation id (a call shares its window with every record of its id: the windowed
// read is inexact otherwise). What a window cannot know alone are three facts of the whole
// trace, learnt by a first read:
//   - the recording's start and end (--from/--to count from the start; the analysed time ends
//     with the recording): the first read takes the header's start and no end, and checks both
//     once the read gives the recording;
//   - the selected NVTX ranges (--nvtx, after --from/--to and --tid as ApplyFilters selects
//     them): a range is written when it ends, so a long one reaches the file in a window after
//     those whose records it holds;
//   - NVTX domains defined after ranges that name them (never seen from libprof: it writes a
//     domain with the first events it drains).
// Learn filters each window of the first read with what is known so far and learns; Settle
// then says whether those windows were filtered as the whole trace is, or the read must be
// made again with the recording and every range known (a range arrived late; the recording
// starts before the header's start, or a kept record starts at its end), or the windows cannot
// answer (a late domain: analyse the whole trace). Apply filters a later read's windows.
// Holds the selected ranges (four numbers each), not the records.
//
// Layer: analysis/model/. Pure; trace_windows.h reads.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "analysis/model/filters.h"
#include "analysis/model/trace_windows.h"

namespace libprof::analysis {

class WindowFilter {
 public:
  explicit WindowFilter(FilterOptions options);

  // False when from >= to: FilterProcesses' error, which the whole path then gives.
  bool usable() const;

  // A window of the first read (or of a read made again): filtered, and what it shows learnt.
  // False when --pid leaves the process out (the window is not filtered then).
  bool Learn(ProcessTrace* window, const WindowSpan& span);
  enum class Outcome { kExact, kReadAgain, kInexact };
  // After a read, with its WindowedRead::whole (the recording). kReadAgain: filter a new read's
  // windows with what this one learnt; kInexact: *why says why the windows cannot answer.
  Outcome Settle(const ProcessTrace& whole, std::string* why);

  // A window of a read after Settle said kExact.
  void Apply(ProcessTrace* window) const;

  // Whether the process is analysed (ApplyFilters keeps it: its pid, a matching range), what it
  // matched (FilterProcesses' notes), and the time analysed (its `windows` after filtering).
  bool kept() const;
  FilterMatches matches() const;
  std::vector<Interval> Windows(const ProcessTrace& whole) const;

 private:
  bool timed() const { return options_.from_ns || options_.to_ns; }
  std::vector<Interval> TimeWindows() const;
  NvtxSelection SelectionFor(const ProcessTrace& window) const;

  FilterOptions options_;
  bool pid_seen_ = false, pid_kept_ = true;
  // The recording: [header's start, open) until Settle knows it.
  Interval recording_{0, UINT64_MAX};
  bool recording_known_ = false;
  bool kept_any_ = false;       // a record passed --from/--to (before Settle knew the recording)
  uint64_t latest_kept_ns_ = 0;  // the latest start of those
  std::vector<NvtxRange> ranges_;  // selected so far; every one once Settle knows them
  bool ranges_known_ = false;
  bool late_range_ = false;                  // a selected range arrived after a cut it precedes
  uint64_t nvtx_device_ns_ = 0, nvtx_left_out_ns_ = 0;  // FilterMatches', by the first read
  std::unordered_set<uint32_t> unknown_domains_;  // named by a range before their definition
  uint32_t pid_ = 0;
  std::vector<bool> tid_seen_;  // per options_.tids: active in the windows so far
};

}  // namespace libprof::analysis
