// Why a device sat idle: every idle instant of a device's active span (first operation start to
// last operation end) is given one cause, the breakdown HTA popularised (its "host wait" and
// "kernel wait" become one cause here, the launch, because CUPTI gives us the launch calls):
//   launch  the host was issuing the next work: the call that issued the device's next operation
//           had started (from its start until that operation started: the launch's own cost and
//           its latency to the device), or the issuing thread was inside another call that issued
//           device work; typical of kernels shorter than their launch cost;
//   sync    the issuing thread was blocked in a synchronising call (explicit synchronisation,
//           cudaMalloc/cudaFree and the other implicit ones, a synchronous or pageable copy, a
//           synchronous memset), or the next operation was issued by such a call;
//   host function  the next operation waited behind a host function on its stream, or behind
//           an event wait on a recording that did (stream_blockers.h): from the device going
//           idle, or from its issuing call's return if that came later (before, the causes
//           above);
//   memory wait  the same behind a wait on a memory value (cuStreamWaitValue32/64,
//           cuStreamBatchMemOp): the stream waited until the host or other work wrote it;
//   other GPU  the same behind an event wait (cudaStreamWaitEvent) on a recording of another
//           device's stream, while the work before that recording still ran there;
//   in graph  the next operation is a node of a CUDA graph launch whose earlier nodes ran
//           before the gap: the graph held it (a host node, an event wait node, the latency
//           between dependent nodes), from the launch call's return on; or a node the device
//           launched (no correlation id): each iteration of a conditional node's body, the
//           whole gap;
//   other   anything else: the thread was outside CUDA calls (host computation, I/O, Python) or
//           in calls that issue no work, or the issuing call is not in the trace.
// The thread considered is the one that issued the operation ending the gap.
// IdleTimeline classifies a trace read in windows (trace_windows.h) window by window: the gap
// that runs over a cut is classified with the calls of the windows it spans, kept meanwhile.
//
// Layer: analysis/metrics/. Built on TraceIndex; pure interval arithmetic.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "analysis/metrics/stream_blockers.h"
#include "analysis/model/intervals.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

enum class IdleCause : uint8_t {
  kLaunch,
  kSync,
  kOther,
  kHostFunction,
  kInGraph,
  kMemoryWait,
  kOtherDevice
};

// A stretch of idle time with one cause. `api_name` is the string id (ProcessTrace::Str) of
// the API call the thread was in (for kLaunch and kSync, the one that gives the cause; for
// kHostFunction, kMemoryWait and kOtherDevice, the call that enqueued the function or wait; for
// kInGraph, the graph's launch call, none before a node the device launched: a conditional node's
// body); -1 outside calls.
struct IdlePiece {
  Interval span;
  IdleCause cause = IdleCause::kOther;
  int64_t api_name = -1;
};

struct IdleTotals {
  uint64_t launch_ns = 0;
  uint64_t sync_ns = 0;
  uint64_t other_ns = 0;
  uint64_t host_function_ns = 0;
  uint64_t in_graph_ns = 0;
  uint64_t memory_wait_ns = 0;
  uint64_t other_device_ns = 0;
  uint64_t total() const {
    return launch_ns + sync_ns + other_ns + host_function_ns + in_graph_ns + memory_wait_ns +
           other_device_ns;
  }
  void Add(IdleCause cause, uint64_t ns);
  void Add(const IdleTotals& other);
};

struct DeviceIdle {
  uint32_t device_id = 0;
  std::vector<uint32_t> ops;   // the device's operations (device_ops() indices), by start
  Interval active;             // first operation start to last operation end
  std::vector<Interval> busy;  // union of the device's operations (sorted, disjoint)
  // Idle gaps between busy periods and, per gap, the device_ops() index of the operation that
  // ended it (the first to start at the gap's end).
  std::vector<Interval> gaps;
  std::vector<uint32_t> next_op;
  std::vector<IdlePiece> pieces;  // sorted, disjoint; they cover exactly the gaps
  // Read in windows: the device's last operation before this window when the first gap began
  // there (the last, by start, of those that end where that gap starts).
  struct EarlierOp {
    bool known = false;
    uint64_t start_ns = 0, end_ns = 0, correlation_id = 0;
    std::string name;
  };
  EarlierOp earlier;
};

// Per device with operations, by device id.
std::vector<DeviceIdle> ClassifyIdle(const TraceIndex& index);

// A top-level API call as the idle classification sees it.
enum class CallClass : uint8_t { kLaunch, kSync, kOther };
struct HostCall {
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t thread_id = 0;
  uint32_t name_id = 0;
  CallClass klass = CallClass::kOther;
};

// ClassifyIdle over a one-process trace read in windows (trace_windows.h: no call or operation
// crosses a cut), window after window. Add gives, per device with operations in the window,
// the window's part of ClassifyIdle's result: its operations (indices into this window's
// device_ops), busy periods and the gaps that end in it, the first of which may have begun in
// an earlier window (then classified with the calls of the windows it spans, kept until it
// ends). A device whose operations in the window are all empty has no busy time there and is
// listed with its operations only. `last_end_ns` (per device, the end of its last operation in
// the whole trace) lets the kept calls go once no device can have such a gap any more.
class IdleTimeline {
 public:
  IdleTimeline() = default;  // one window: the whole trace
  explicit IdleTimeline(std::map<uint32_t, uint64_t> last_end_ns)
      : windowed_(true), last_end_(std::move(last_end_ns)) {}
  std::vector<DeviceIdle> Add(const TraceIndex& index);
  // The top-level calls of earlier windows that the last Add's gaps may span (with that
  // window's own calls, what a gap's host activity is read from).
  const std::vector<HostCall>& earlier_calls() const { return kept_; }

 private:
  struct Device {
    uint64_t busy_end_ns = 0;
    DeviceIdle::EarlierOp last;  // last op by start that ends at busy_end_ns
  };
  bool windowed_ = false;
  std::map<uint32_t, uint64_t> last_end_;
  std::map<uint32_t, Device> devices_;
  std::vector<HostCall> kept_;       // earlier windows' top-level calls a gap may still need
  std::vector<HostCall> next_kept_;  // the same after the last window
  StreamBlockers::Carried blockers_;  // what a later window's operations may wait behind
};

// `d` (of `ops`, TraceIndex::device_ops()) from `from_ns` on (the steady state after start-up, start_up.h): its active span starts
// there, busy time, gaps and pieces are cut there, and only operations that start there or later
// are kept. Unchanged when `from_ns` is before its first operation; an empty active span when it
// is at or after its last operation's end.
DeviceIdle From(DeviceIdle d, const std::vector<DeviceOp>& ops, uint64_t from_ns);

// From's cut alone, whatever `d`'s own active span (a window's part of a device, whose first gap
// may begin before its operations): operations that start before `from_ns` are dropped, busy
// periods, gaps and pieces are cut there. `active` is left as it was.
void CutBefore(DeviceIdle* d, const std::vector<DeviceOp>& ops, uint64_t from_ns);

// `d` without its idle time inside `holes` (merged, sorted intervals: module loading after
// start-up): idle pieces are cut there. Busy time, gaps and operations are unchanged.
DeviceIdle WithoutIdleIn(DeviceIdle d, const std::vector<Interval>& holes);

// The pieces' time inside [from, to), by cause.
IdleTotals SumIdle(std::span<const IdlePiece> pieces, uint64_t from_ns, uint64_t to_ns);

}  // namespace libprof::analysis
