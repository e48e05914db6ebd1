// When a process's start-up ends and its steady state begins, and what start-up spent its time
// on. Start-up is paid once (context creation, loading device code, the first allocations, the
// time before the first kernel); reported with the steady state, it would rank above the waits a
// user can fix (issue 19: 165 ms of cuLibraryLoadData above a 1 ms .item() wait). The findings
// report it once (the start-up rule) and the GPU rules count idle time from its end.
//
// Start-up runs from the recording start until the first kernel starts (the first device
// operation when no kernel ran), and moves on to the end of each later call that loads device
// code or creates a context (api_names.h StartUpWork: kModuleLoad, kContext) when such calls
// fill at least half of the time from where start-up ended so far to that call's end. CUDA's
// lazy loading loads each kernel's module inside its first launch, so a first iteration that
// loads a module per kernel stays in start-up, while a module loaded late in a long run does not
// drag start-up along.
//
// Layer: analysis/metrics/. Pure computation over a TraceIndex.
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
  // Module loading and context creation after end_ns (lazy loading of a kernel first used
  // later): merged intervals and their tally. Their idle GPU time is start-up's too: the GPU
  // rules leave it out wherever it happens.
  std::vector<Interval> later_loading;
  Work later_load;
  uint64_t duration_ns() const { return end_ns - start_ns; }
};

StartUp FindStartUp(const TraceIndex& index);

// FindStartUp over a one-process trace read in windows (trace_windows.h), in two steps: where
// start-up ends needs the whole trace (a late module load may move it), what it spent its time
// on needs that end. A StartUpScan takes every window, then gives the bounds (known, start,
// end, first operation, later loading and its time); a StartUpTally takes every window again
// with those bounds and fills in the rest.
class StartUpScan {
 public:
  void Add(const TraceIndex& window);
  // A later window's scan (made on its own, on another thread): as Add of its window.
  void Add(const StartUpScan& later);
  StartUp Bounds(uint64_t origin_ns) const;

 private:
  bool any_op_ = false, any_kernel_ = false;
  uint64_t first_op_ns_ = 0, first_kernel_ns_ = 0;
  std::vector<Interval> defining_;  // module loading and context creation, merged per window
};

class StartUpTally {
 public:
  void Add(const TraceIndex& window, const StartUp& bounds);
  void Finish(StartUp* s) const;

 private:
  struct Tally {
    std::vector<Interval> pieces;
    std::map<std::string, uint64_t> by_api;
    uint64_t calls = 0;
  };
  std::map<StartUpWork, Tally> tallies_;
  std::map<std::string, uint64_t> later_by_api_;
  uint64_t later_calls_ = 0;
};

}  // namespace libprof::analysis
