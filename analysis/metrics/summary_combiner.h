// The total of `summary` over processes that arrive one at a time, from trace files as they are
// read or from partial summaries (summary_partial.h), and the state that a partial summary
// saves, so that combinations can themselves be combined (a tree of reduce steps).
//
// Layer: analysis/metrics/. Pure; summary.cc and summary_partial.cc drive it.
//
// The total's unions (trace time, host API time, GPU busy time) are unions of every process's
// pieces on a common timebase: the shared clock when every process is of one host and timebase,
// else wall-clock time (TimeOffsets). Which one is known only once every process is in, so a
// combination keeps the unions on both while it can: on the shared clock while all parts share
// one, and on wall-clock time as the shared-clock lists shifted by one offset while every part
// had that offset (the usual case of a partial of one file), as lists of their own otherwise.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "proto/trace_model.h"
#include "analysis/metrics/summary.h"
#include "analysis/model/filters.h"
#include "analysis/model/intervals.h"

namespace libprof::analysis {

// The pieces of the unions a total needs, sorted and disjoint.
struct TotalIntervals {
  std::vector<Interval> windows, host, device;
};

// What a combination of processes holds: what a partial summary writes out.
struct CombinedState {
  std::vector<Summary> parts;  // each process's rows and numbers, without interval lists
  // The clock of the first part, and whether every part shares it (host and timebase).
  std::string hostname;
  Timebase timebase = Timebase::kUnspecified;
  bool same_clock = true;
  // The unions on the shared clock; only while same_clock.
  std::optional<TotalIntervals> on_shared_clock;
  // The unions on wall-clock time: on_shared_clock shifted by this offset when every part had
  // it, else `on_wall_clock`.
  std::optional<int64_t> uniform_wall_offset;
  std::optional<TotalIntervals> on_wall_clock;
};

class SummaryCombiner {
 public:
  // `same_clock`: whether every process that will be added shares one clock, when the caller
  // knows (then only the unions on that timebase are kept).
  explicit SummaryCombiner(std::optional<bool> same_clock = std::nullopt);

  // One process: its summary with its interval lists (unshifted), and its header's clock.
  void Add(Summary part, const TraceHeader& header);
  // A combination made elsewhere (a partial summary's), as if its processes were added here.
  void Merge(CombinedState other);

  size_t parts() const { return state_.parts.size(); }
  // Orders the processes by trace path (stable), as combine prints them.
  void SortParts();
  // The report: each process, and the total (the process itself when there is only one).
  SummaryReport Finish();
  // The combination so far, to write out (the combiner is then empty).
  CombinedState TakeState();

 private:
  void Materialize(CombinedState* s) const;  // uniform_wall_offset -> on_wall_clock
  bool WallNeeded() const { return same_clock_known_ != true; }
  bool SharedNeeded() const { return same_clock_known_ != false; }

  std::optional<bool> same_clock_known_;
  CombinedState state_;
  SummaryTotal rows_;  // the total's rows, merged as parts arrive
};

// The filters' errors that need every file: a pid, thread or NVTX range that matched nothing,
// from >= to. `any_part`: some process was summarised (with --nvtx, one had a selected range).
std::expected<void, std::string> CheckFiltersMatched(const FilterOptions& filters,
                                                     const std::vector<uint32_t>& pids_seen,
                                                     const std::vector<uint32_t>& threads_seen,
                                                     bool any_part);

}  // namespace libprof::analysis
