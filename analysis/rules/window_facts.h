// What the windowed findings (windowed_findings.h) learn of one window and carry to the next:
// the events recorded so far (CarriedEvents), the call stacks windows named before they were read
// (MissingStacks), and the facts of one window that the plan read's checks take in window order
// (PlanWindow, learnt on a worker thread: ordered_pipeline.h).
//
// Layer: analysis/rules/. Internal to windowed_findings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/metrics/start_up.h"
#include "analysis/model/intervals.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/trace_windows.h"

namespace libprof::analysis {

// The events recorded in the windows so far that a later window may name: each event's latest
// recording (FindEvent by event id wants the last one before a call, and every earlier window's
// is before every later call), with the sync ids of those.
class CarriedEvents {
 public:
  const std::vector<StreamModel::EarlierEvent>& list() const { return list_; }
  bool HasSync(uint64_t sync_id) const { return syncs_.contains(sync_id); }
  // The recordings of the next window (windows come in order).
  void Add(const TraceIndex& window);

 private:
  std::map<uint32_t, StreamModel::EarlierEvent> latest_;
  std::vector<StreamModel::EarlierEvent> list_;
  std::unordered_set<uint64_t> syncs_;
};

// Ids of the call stacks, frames and modules that windows' calls named before they were read.
struct MissingStacks {
  std::unordered_set<uint32_t> stacks, frames, modules;

  // Notes the ids a window's calls name and its call stacks (those read so far) lack.
  void Check(const TraceRecords& r);
  // Another window's (the sets' union: their order does not matter).
  void Add(const MissingStacks& later) {
    stacks.insert(later.stacks.begin(), later.stacks.end());
    frames.insert(later.frames.begin(), later.frames.end());
    modules.insert(later.modules.begin(), later.modules.end());
  }
  // Whether the whole trace holds something a window missed.
  bool ReadLater(const TraceRecords& whole) const;
};

// What the plan read learns of one window on its own (on a worker thread), for the checks
// that then take the windows in order (WindowedFindings::Read).
struct PlanWindow {
  PlanWindow(ProcessTrace&& w, const WindowSpan& s) : trace(std::move(w)), span(s) {}

  ProcessTrace trace;
  WindowSpan span;
  std::string why_inexact;           // unified memory counters, NCCL ranges
  std::vector<NvtxEvent> late_nvtx;  // ranges that start before the cut they came after
  std::optional<TraceIndex> index;
  bool per_thread_streams = false;
  // Each stream with work, in the order of its first operation: its class as this window sees
  // it, and the context StreamModel would take from its first operation that names one (0:
  // none does here).
  struct Stream {
    uint32_t id;
    StreamClass klass;
    uint32_t context;
  };
  std::vector<Stream> streams;
  std::unordered_map<uint32_t, Interval> busy;  // device -> first start, last end
  uint64_t last_kernel_end = 0;                 // of its kernels and graphs (LastKernelEnd's rule)
  std::unordered_set<uint64_t> recorded;        // sync ids this window resolves itself
  std::vector<uint64_t> named;  // sync ids its event synchronisations name and it does not record
  MissingStacks missing;
  std::unordered_set<uint32_t> calling_threads;  // threads with a call here
  std::vector<uint32_t> unpaired_threads;        // ThreadsWhosePageablePairLeavesWindow
  StartUpScan scan;

  // Learns the above from `trace`; stops at the first fact that makes the plan inexact.
  void Learn();
};

}  // namespace libprof::analysis
