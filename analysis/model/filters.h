// The --pid, --from/--to, --tid and --nvtx filters: each narrows the records and the analysed
// time window of every ProcessTrace, so that all analyses downstream see only the selection.
//
// Layer: analysis/model/. Pure in-memory transformation of ProcessTrace.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/intervals.h"
#include "analysis/model/nvtx_selection.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct FilterOptions {
  std::vector<uint32_t> pids;  // keep these processes (header pid); empty = all
  std::vector<uint32_t> tids;  // keep host activity of these threads and the device work it issued
  // Keep activity inside NVTX ranges with this name: either the message or "domain:message".
  std::vector<std::string> nvtx;
  std::optional<uint64_t> from_ns;  // relative to each process's recording start
  std::optional<uint64_t> to_ns;
  bool active() const {
    return !pids.empty() || !tids.empty() || !nvtx.empty() || from_ns || to_ns;
  }
  bool operator==(const FilterOptions&) const = default;
};

// Applies `options` in the order pid, time window, thread, NVTX range:
// - --from/--to keep records whose start lies in [start+from, start+to) and set the window to it;
// - --tid keeps API calls, NVTX events and overheads of those threads, and the device work,
//   synchronisations, CUDA events and memory operations whose correlation id belongs to a kept
//   call;
// - --nvtx keeps the API calls that start inside a matching range on the thread that opened it
//   (or ended it, for start/end ranges), the device work they issued, the NVTX events nested in
//   the range on that thread, and sets the window to the union of the matching ranges; a
//   process without a matching range is left out.
// Errors: a pid, thread or range name that matches nothing in any process; from >= to.
std::expected<std::vector<ProcessTrace>, std::string> ApplyFilters(std::vector<ProcessTrace> traces,
                                                                   const FilterOptions& options);

// ApplyFilters in two halves, for a caller that filters the traces one file at a time and so
// holds one file's processes, not all of them: FilterProcesses filters the processes given and
// notes in *matches which pids, threads and ranges it found; CheckFilterMatches, once every file
// was seen, returns ApplyFilters' "matches nothing in any process" errors. FilterProcesses fails
// only for from >= to.
struct FilterMatches {
  std::vector<uint32_t> pids;  // of FilterOptions::pids, those seen
  std::vector<uint32_t> tids;  // of FilterOptions::tids, those seen
  bool nvtx = false;           // a matching range was seen
  // --nvtx: the device work that started during the selected ranges (summed durations), and of
  // it what --nvtx left out, its calls being outside the ranges (KeepInside).
  uint64_t nvtx_device_ns = 0, nvtx_left_out_ns = 0;
};
std::expected<std::vector<ProcessTrace>, std::string> FilterProcesses(
    std::vector<ProcessTrace> traces, const FilterOptions& options, FilterMatches* matches);
std::expected<void, std::string> CheckFilterMatches(const FilterOptions& options,
                                                    const FilterMatches& matches);

// Adds to *into what `seen` matched (the matches of one file read apart, window_filter.h).
void NoteMatches(const FilterMatches& seen, FilterMatches* into);
// The warning for file `path` when --nvtx left out a quarter or more of the device work that ran
// during its selected ranges (`before` and `after`: the matches before and after reading it):
// work issued before a range opened or by other threads, which a range on one thread does not
// hold (PyTorch runs the backward pass on its autograd thread); "" otherwise.
std::string NvtxLeftOutWarning(const std::string& path, const FilterMatches& before,
                               const FilterMatches& after);

// The steps of FilterProcesses on one process, each keeping or dropping records one at a time
// (by its own time, thread or range, or by its call's correlation id), so that a trace read in
// windows, whose calls share a window with their work, is filtered window by window to the
// records the whole trace keeps (window_filter.h):
// --from/--to's window of a process whose recording starts at `base_ns`;
Interval TimeFilterWindow(uint64_t base_ns, uint64_t from, uint64_t to);
// the timed records whose start lies in `windows`;
void KeepStartingIn(ProcessTrace* trace, const std::vector<Interval>& windows);
// whether thread `tid` made an API call or an NVTX event (--tid's "matches nothing");
bool HasThreadActivity(const ProcessTrace& trace, uint32_t tid);
// --tid: the threads' calls, the work of those calls and the threads' other records;
void KeepThreads(ProcessTrace* trace, const std::vector<uint32_t>& tids);
// --nvtx: the ranges of `trace` that `names` designate (marks are no ranges), and the records
// inside the selected ranges (ApplyFilters' --nvtx above; the caller narrows the windows).
std::vector<NvtxRange> MatchingRanges(const ProcessTrace& trace,
                                      const std::vector<std::string>& names);
// Returns the device time that started during the ranges (summed) and, of it, what it left out.
struct NvtxKept {
  uint64_t device_ns = 0, left_out_ns = 0;
};
NvtxKept KeepInside(ProcessTrace* trace, const NvtxSelection& selection);

// True when NVTX range name `wanted` designates `domain`/`message` ("m" or "d:m" or "d: m").
bool NvtxNameMatches(const std::string& wanted, const std::string& domain,
                     const std::string& message);

}  // namespace libprof::analysis
