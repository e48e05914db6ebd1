// When a process's start-up ends and its steady state begins, and what start-up spent its time
// on. Start-up is paid once (context creation, loading device code, the first allocations, the
// time before the first kernel); reported with the steady state, it would rank above the waits a
// user can fix (issue 19: 165 ms of cuLibraryLoadData above a 1 ms .item() wait). The findings
// report it once (the start-up rule) and the GPU rules count idle time from its end.
//
// Start-up runs from the recording start until the first kernel starts (the first device
// operation when no kernel ran), and moves on to the end of each later call that loads device
// code or creates a context (api_names.h StartUpWork: kModuleLoad, kContext, or a call inside
// which a context was created, up to its creation: the runtime's primary context, first and
// again after cudaDeviceReset) when such calls
// fill at least half of the time from where start-up ended so far to that call's end. CUDA's
// lazy loading loads each kernel's module inside its first launch, so a first iteration that
// loads a module per kernel stays in start-up, while a module loaded late in a long run does not
// drag start-up along. Under CUDA 13 lazy loading mostly makes no call of its own: CUPTI's
// overhead records of it (lazy function loading, runtime-triggered module loading) mark the
// call they lie in as module loading, or, in no recorded call, count by their own time.
//
// Then a warm-up: start-up moves on to the end of the latest later module load by name
// (cuModuleLoadData..., not only lazy loading: a compiler's output is loaded by name) before
// which the GPU was nearly idle (busy under kWarmUpBusyShare of the time since start-up's end)
// while after it the GPU was busy at least kWarmUpContrast times that share (and at least
// kWarmUpMinBusyAfter). That is the shape of just-in-time compilation: torch.compile, JAX/XLA,
// CuPy and NVRTC compile on the host for seconds, load what they built, and only then run the
// loop (the committed torch.compile, CUDA-graph, ResNet and CuPy traces: under 2.3% busy before
// their last load, 15-80% after). Counted as steady state, that compilation made every one of
// them "GPU idle over 90%: profile the host code". A long host-bound phase followed by a busier
// one that loads new code needs the contrast, so is not taken for a warm-up; a GPU busy 10% or
// more is never called warm-up; nor is a stretch whose idle time lies mostly in gaps shorter
// than kWarmUpLongGapNs: a compiler keeps the GPU idle for long stretches, a running loop in
// short gaps between its kernels (an eager PyTorch loop of tiny kernels, 93% idle for 513 ms
// in gaps of tens of µs, then a CUDA graph captured and replayed: the loop was taken for a
// warm-up, and its launch-bound verdict lost).
//
// One-time work later in the run (an autotuner timing candidates, a compiler: one_time_work.h,
// told from call stacks) is paid once too: StartUp::one_time holds its stretches, and the GPU
// rules leave out the idle gaps that overlap them.
//
// Layer: analysis/metrics/. Pure computation over a TraceIndex (and its call stacks).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/model/api_names.h"
#include "analysis/model/intervals.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

// Share of the time since start-up's current end that module loading and context creation must
// fill for start-up to go on: a judgement (the first iteration of the samples and of a PyTorch loop
// is dominated by loading, the steady state has none), not a measurement.
inline constexpr double kStartUpWorkShare = 0.5;
// The warm-up's bars (above): judgements from the recorded traces, not measurements of a cause.
inline constexpr double kWarmUpBusyShare = 0.10;
inline constexpr double kWarmUpContrast = 10.0;
inline constexpr double kWarmUpMinBusyAfter = 0.01;
inline constexpr uint64_t kWarmUpLongGapNs = 1'000'000;

struct StartUp {
  bool known = false;         // the process ran device work (else the rest is zero)
  uint64_t start_ns = 0;      // the recording start (ProcessTrace::origin_ns)
  uint64_t end_ns = 0;        // the steady state starts here (trace time, like start_ns)
  uint64_t first_op_ns = 0;   // start of the first kernel, or of the first operation
  bool first_op_is_kernel = false;
  // Calls of one kind of start-up work inside [start_ns, end_ns): their time (union, clipped),
  // their number (a call inside another of the same kind counts once) and the API with the most.
  struct Work {
    uint64_t ns = 0;
    uint64_t calls = 0;
    std::string top_api;
    uint64_t top_api_ns = 0;
  };
  Work module_load, context, allocation;
  // A warm-up that start-up took in (above): from where start-up ended without it
  // (`warm_up_from_ns`) to end_ns, with the GPU busy `warm_up_busy_ns` of it (all devices'
  // operations, their union); the share busy from end_ns to the last operation's end, in
  // parts per million.
  bool warm_up = false;
  uint64_t warm_up_from_ns = 0, warm_up_busy_ns = 0, busy_after_ppm = 0;
  // Module loading and context creation after end_ns (lazy loading of a kernel first used
  // later): merged intervals and their tally. Their idle GPU time is start-up's too: the GPU
  // rules leave it out wherever it happens.
  std::vector<Interval> later_loading;
  Work later_load;
  bool later_context = false;  // later_load has a context's creation (StartUpTally's)
  // One-time work (one_time_work.h) told from call stacks: each stretch from the first to the
  // last of consecutive stacked calls (all threads' in time order) inside an autotuner or a
  // compiler, merged, each with the kinds seen in it (OneTimeWorkBit's). The GPU rules leave out the idle
  // gaps that overlap one (the compilation between the tuner's calls included): a JAX program's
  // recompilation is no idle steady state. Wherever they fall, start-up included.
  struct OneTimeSpan {
    Interval span;
    uint32_t kinds = 0;
  };
  std::vector<OneTimeSpan> one_time;  // sorted, disjoint
  // Runs of a CUDA library's set-up (a cuFFT plan, a cuBLAS/cuDNN/... handle) in the run. From
  // kRecurringLibrarySetUps on, the program makes plans or handles again and again (one per
  // step): not paid once, so `one_time` leaves that kind out and host findings in it are the
  // program's (findings.cc).
  uint64_t library_set_ups = 0;
  std::vector<Interval> recurring_set_ups;  // their spans when it recurs (sorted, disjoint)
  static constexpr uint64_t kRecurringLibrarySetUps = 10;
  bool library_set_up_recurs() const { return library_set_ups >= kRecurringLibrarySetUps; }
  // Runs of an autotuner's or compiler's work (every one-time kind but a library's set-up) after
  // the first kernel, when there are kRecurringCompilations or more, every quarter of the run
  // from the first kernel to the last operation's end has one and none has half of them: a
  // function compiled anew again and again (jax.jit for every new input shape: 40 runs over 40
  // steps, 14/10/8/8 by quarter, in .carry/s18/jax_recompile.py), not paid once, so `one_time`
  // leaves those kinds out, as a recurring library set-up's; 0 otherwise (the recorded
  // torch.compile, autotuning and cuDNN traces: 2 to 5 runs). Their kinds and merged spans.
  uint64_t recurring_compilations = 0;
  uint32_t recurring_compile_kinds = 0;
  std::vector<Interval> recurring_compiles;
  static constexpr uint64_t kRecurringCompilations = 10;
  // cuModuleLoad* calls after the first kernel with device work since the one before, when
  // there are kRecurringModuleLoads or more, every quarter of the run from the first kernel to
  // the last operation's end has one and none has half of them: code compiled or loaded again
  // and again (a kernel built per call), not a first iteration's lazy loading, a library's
  // kernels loaded per new shape (cuLibraryLoadData) or a compiler's burst. 0 otherwise.
  uint64_t recurring_module_loads = 0;
  static constexpr uint64_t kRecurringModuleLoads = 10;
  uint64_t duration_ns() const { return end_ns - start_ns; }
  uint64_t warm_up_ns() const { return warm_up ? end_ns - warm_up_from_ns : 0; }
};

StartUp FindStartUp(const TraceIndex& index);

// FindStartUp over a one-process trace read in windows (trace_windows.h), in two steps: where
// start-up ends needs the whole trace (a late module load may move it), what it spent its time
// on needs that end. A StartUpScan takes every window, then gives the bounds (known, start,
// end, first operation, later loading and its time, the warm-up); a StartUpTally takes every
// window again with those bounds and fills in the rest. The windows come in time order and no
// device operation crosses a cut, so the GPU's busy time adds up window by window.
class StartUpScan {
 public:
  void Add(const TraceIndex& window);
  // A later window's scan (made on its own, on another thread): as Add of its window.
  void Add(const StartUpScan& later);
  StartUp Bounds(uint64_t origin_ns) const;

 private:
  // Module loading or context creation, with the GPU's busy time (union over devices) from the
  // first window up to the piece's end; `named` when a call named for it (cuModuleLoadData...)
  // lies in it, not only CUDA's lazy loading. Only such a piece ends a warm-up: a compiler's
  // output is loaded by name, while lazy loading is a kernel of a loaded library first used (an
  // allocation loop's 11 ms before the first launch of a compute loop are no warm-up).
  struct Piece {
    Interval span;
    uint64_t busy_before_end_ns = 0;
    bool named = true;
    bool module = false;  // a cuModuleLoad* call (a program's own code, not a library's)
    // The GPU's idle time in gaps shorter than kWarmUpLongGapNs that ended by the piece's end.
    uint64_t short_idle_before_end_ns = 0;
  };
  void WarmUp(const std::vector<Piece>& pieces, StartUp* s) const;
  void RecurringLoads(const std::vector<Piece>& pieces, StartUp* s) const;
  void RecurringCompilations(StartUp* s) const;
  // The calls with a call stack, in time order, as runs of one-time work's and of the rest's;
  // `kinds` the one-time kinds of a run (0 for the rest's). Two runs of a kind never follow
  // each other (a later window's first run joins the last one when both are one-time work).
  struct StackRun {
    Interval span;
    uint32_t kinds = 0;
  };
  void AddRun(const StackRun& run);
  std::vector<StackRun> stack_runs_;
  bool any_op_ = false, any_kernel_ = false;
  uint64_t first_op_ns_ = 0, first_kernel_ns_ = 0;
  uint64_t busy_before_first_kernel_ns_ = 0;  // copies and memsets before it
  uint64_t busy_ns_ = 0;                      // so far
  uint64_t last_op_end_ns_ = 0;
  // The GPU's idle gaps shorter than kWarmUpLongGapNs (all devices' operations together): their
  // time so far, and the first busy start and last busy end seen (a later scan's gap before its
  // first busy start is added when it joins: Add(const StartUpScan&)).
  uint64_t short_idle_ns_ = 0;
  bool any_busy_ = false;
  uint64_t first_busy_ns_ = 0, last_busy_end_ns_ = 0;
  std::vector<Piece> defining_;  // merged per window
};

class StartUpTally {
 public:
  void Add(const TraceIndex& window, const StartUp& bounds);
  void Finish(StartUp* s) const;

 private:
  struct Tally {
    std::vector<Interval> pieces;
    // Each API's pieces: its time is their union, as the kind's, so that calls of several
    // threads at once count once (4 threads' concurrent cudaMalloc calls summed 382.05 ms in
    // 128.85 ms of allocation).
    std::map<std::string, std::vector<Interval>> by_api;
    uint64_t calls = 0;
  };
  std::map<StartUpWork, Tally> tallies_;
  std::map<std::string, std::vector<Interval>> later_by_api_;
  uint64_t later_calls_ = 0;
  bool later_contexts_ = false;
};

}  // namespace libprof::analysis
