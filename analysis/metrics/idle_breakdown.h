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
//   other   anything else: the thread was outside CUDA calls (host computation, I/O, Python) or
//           in calls that issue no work, or the issuing call is not in the trace.
// The thread considered is the one that issued the operation ending the gap.
//
// Layer: analysis/metrics/. Built on TraceIndex; pure interval arithmetic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/model/intervals.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

enum class IdleCause : uint8_t { kLaunch, kSync, kOther };
const char* ToString(IdleCause cause);  // "launch", "sync", "other"

// A stretch of idle time with one cause. `call` is the API call (index into api_calls) the
// thread was in (for kLaunch and kSync, the one that gives the cause); -1 outside calls.
struct IdlePiece {
  Interval span;
  IdleCause cause = IdleCause::kOther;
  int64_t call = -1;
};

struct IdleTotals {
  uint64_t launch_ns = 0;
  uint64_t sync_ns = 0;
  uint64_t other_ns = 0;
  uint64_t total() const { return launch_ns + sync_ns + other_ns; }
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
};

// Per device with operations, by device id.
std::vector<DeviceIdle> ClassifyIdle(const TraceIndex& index);

// `d` (of `ops`, TraceIndex::device_ops()) from `from_ns` on (the steady state after start-up, start_up.h): its active span starts
// there, busy time, gaps and pieces are cut there, and only operations that start there or later
// are kept. Unchanged when `from_ns` is before its first operation; an empty active span when it
// is at or after its last operation's end.
DeviceIdle From(DeviceIdle d, const std::vector<DeviceOp>& ops, uint64_t from_ns);

// `d` without its idle time inside `holes` (merged, sorted intervals: module loading after
// start-up): idle pieces are cut there. Busy time, gaps and operations are unchanged.
DeviceIdle WithoutIdleIn(DeviceIdle d, const std::vector<Interval>& holes);

// The pieces' time inside [from, to), by cause.
IdleTotals SumIdle(std::span<const IdlePiece> pieces, uint64_t from_ns, uint64_t to_ns);

}  // namespace libprof::analysis
