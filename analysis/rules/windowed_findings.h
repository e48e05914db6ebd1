// `profview findings` over a one-process trace in bounded memory: the trace is read in windows
// (trace_windows.h, cut where no call or device operation runs) and every rule pass runs window
// by window, carrying across cuts the little that crosses one, to hand on exactly the findings
// (and seqs) that StreamFindings gives over the whole trace.
//
// Two reads. The first (Plan) learns what the second needs of the whole trace: where start-up
// ends (a late module load may move it) and each device's active span (the utilization chunks
// divide it), and checks that the windows can give the whole trace's answer; when they cannot,
// the plan says so before a single finding is handed on and the caller analyses the whole trace
// (as `streams` does). The second read (Run) analyses each window and carries over:
//   host rules    the events recorded in earlier windows (an event synchronisation names them;
//                 StreamModel's earlier events) and the streams of the whole trace (a stream
//                 synchronised in a window without its work still follows its links), the NVTX
//                 ranges still open at the cut (a call's enclosing ranges; a range written when it
//                 ends may arrive windows after it began: the first read keeps those, and each goes
//                 into every window it overlaps) and the call stacks read so far;
//   GPU rules     per device sums per utilization chunk and over the steady state, and the gap
//                 that runs over a cut (IdleTimeline keeps the calls it may span);
//   start-up      its tally (StartUpTally); host findings are marked with the bounds known;
//   memory        live allocations, running sums and churn groups (MemoryAnalysis);
//   graphs        graph instantiations, launches and the captures still open (graph_rules.h);
//   overlap       unions of copies and kernels per stream and device (OverlapAccumulator).
// What the windows cannot answer makes the plan inexact: NCCL ranges (collectives need the whole
// process), unified-memory counters, per-thread default streams, a stream's class seen
// differently before its STREAM record arrived, an event synchronisation naming a recording that an
// earlier window no longer carries, a call stack read after the window that needed it, a pageable
// copy whose pairing runs past its window, a rule pass this engine does not know.
//
// Layer: analysis/rules/. Reads through analysis/model/trace_windows.h.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics/start_up.h"
#include "analysis/model/intervals.h"
#include "analysis/model/ordered_pipeline.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/trace_windows.h"
#include "analysis/model/window_filter.h"
#include "analysis/rules/findings.h"
#include "analysis/rules/findings_digest.h"

namespace libprof::analysis {

class WindowedFindings {
 public:
  // The first read of `path`. An error: the file cannot be read (LoadTraceFile's messages).
  static std::expected<WindowedFindings, std::string> Plan(const std::string& path,
                                                           const FindingsOptions& options,
                                                           const WindowLimits& limits = {});

  // The same for the trace that `filters` (--pid/--tid/--nvtx/--from/--to) leave: each window
  // filtered as ApplyFilters filters the whole trace (window_filter.h; a third read when a
  // selected NVTX range arrives after windows whose records it holds). Inexact also where the
  // filters cannot run in windows (from >= to: the whole path gives the error).
  static std::expected<WindowedFindings, std::string> Plan(const std::string& path,
                                                           const FindingsOptions& options,
                                                           const FilterOptions& filters,
                                                           const WindowLimits& limits = {});
  // With filters: whether they keep the process (else it has no findings and no time), and
  // what they matched (FilterProcesses' notes, for "matches nothing" once every file is read).
  bool kept() const { return !filter_ || filter_->kept(); }
  FilterMatches matches() const { return filter_ ? filter_->matches() : FilterMatches{}; }

  // Whether the windows give the whole trace's findings; if not, why.
  bool exact() const { return exact_; }
  const std::string& why_inexact() const { return why_; }
  size_t windows() const { return windows_; }
  // The process without its timed records, and the read's warnings (trace_windows.h); with
  // filters, its `windows` are the filtered trace's (the time analysed).
  const ProcessTrace& whole() const { return whole_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // What a caller may do with the second read's windows, so that its own figures ride on that
  // read instead of reading the file again (the HTML report's whole-trace pass). Each runs in
  // window order, one window at a time, `read` on the thread that called Run, the others on
  // worker threads (none when the filters leave the process out: Run reads nothing then).
  struct Window {
    // The window as the rules took it: its NVTX list holds the ranges of earlier windows still
    // open at its cut first, then its own, then the late ones (written when they end, after the
    // cut they start before) that it overlaps; filtered with the plan's filters; `origin_ns`
    // the whole recording's.
    const ProcessTrace& trace;
    const WindowSpan& span;
    const TraceIndex& index;
    const StreamModel& model;  // given the events and streams of the windows before it
  };
  struct Hooks {
    // Each window as the read hands it on (its records as the file has them, each NVTX range
    // once; before the filters), as soon as it is read.
    std::function<void(const ProcessTrace&, const WindowSpan&)> read;
    // Each window, in window order, one at a time, while `read`, the sink and `analysed` run
    // for other windows: for work that needs no findings and shares no state with those.
    std::function<void(const Window&)> in_order;
    // Each window once its host findings went to the sink (and before the next window's did),
    // on the thread that called the sink.
    std::function<void(const Window&)> analysed;
  };

  // The second read: every finding of the process to `sink`, with the seq StreamFindings
  // gives it (whole where `wants_whole` says so, as StreamFindings), and each window to
  // `hooks`. Only when exact(). `sink` and `wants_whole` are called one finding at a time, in
  // the order of the seqs, the host rules' on worker threads (the caller's objects need no
  // lock: each call happens after the one before), the others' on the caller's at the end.
  std::expected<void, std::string> Run(const FindingSink& sink,
                                       const FindingFilter& wants_whole = {},
                                       const Hooks& hooks = {}) const;
  // The limits both reads cut their windows with, and the first read's cuts (known_cuts):
  // another read with them (call stacks or not) cuts the same windows without looking for them,
  // each NVTX range arriving in the same one.
  const WindowLimits& read_limits() const { return limits_; }
  // Where start-up ends and the one-time work later on, as the first read found them (only the
  // bounds: StartUpTally's fill-in is the second read's).
  const StartUp& bounds() const { return bounds_; }
  // Run into `digest` as the next process's findings (BeginProcess, then each as found), each
  // window to `hooks` as Run gives it.
  std::expected<void, std::string> AddTo(FindingsDigest* digest, const Hooks& hooks = {}) const;

 private:
  WindowedFindings(std::string path, const FindingsOptions& options, const WindowLimits& limits)
      : path_(std::move(path)), options_(options), limits_(limits), workers_(AnalysisWorkers()) {}
  // The first read, each window filtered by filter_ when there is one.
  static std::expected<WindowedFindings, std::string> Read(WindowedFindings plan);
  void Inexact(std::string why) {
    if (exact_) why_ = std::move(why);
    exact_ = false;
  }

  std::string path_;
  FindingsOptions options_;
  WindowLimits limits_;
  // Worker threads of both reads (ordered_pipeline.h: several windows analysed at once, their
  // findings handed on in window order, the same as one thread's).
  size_t workers_;
  bool exact_ = true;
  std::string why_;
  size_t windows_ = 0;
  ProcessTrace whole_;
  std::vector<std::string> warnings_;
  StartUp bounds_;                               // StartUpScan's
  std::map<uint32_t, Interval> active_;          // per device with busy time
  uint64_t last_kernel_end_ = 0;                 // of every kernel and graph (RuleInput's)
  // NVTX ranges that arrived in a window after the cut they start before (long ones, written
  // when they end): each goes into every window it overlaps.
  std::vector<NvtxEvent> late_nvtx_;
  // Every stream with work, with its context (the first unit's, as StreamModel takes it).
  std::vector<std::pair<uint32_t, uint32_t>> streams_;
  std::optional<WindowFilter> filter_;  // with filters
};

}  // namespace libprof::analysis
