// What work queued on a stream may wait for outside the device: a host function enqueued on the
// stream before it (cudaLaunchHostFunc, cudaStreamAddCallback: libprof records their stream,
// ApiCall::stream_id), a wait on a memory value (cuStreamWaitValue32/64, cuStreamBatchMemOp
// with a wait: recorded alike), or an event wait (cudaStreamWaitEvent) on a recording that was
// itself queued behind one of those on its own stream, or on a recording of another device's
// stream (the work before it there runs while this device idles: a pipeline across GPUs). Each
// holds the stream until the function has run on CUDA's callback thread, or until the host or other
// work writes the value; nothing CUPTI records shows that, so idle_breakdown.h would otherwise
// count the time as launch latency.
//
// Order is by correlation id (CUDA numbers calls as they start, so in issue order): an operation
// waits behind the last blocker of its stream issued after the operation before it there. The
// legacy default stream and the blocking streams of its context wait for each other's earlier
// work (stream_deps.h), so an operation on one of them also waits behind such a blocker of the
// other kind, issued after the operations before it on both streams. A
// trace read in windows (trace_windows.h) may cut while a host function runs, so what a later
// window's operations may still wait behind is carried (Carried): per stream the last blocker
// with no operation after it yet, and the recordings found behind a host function.
//
// A host function enqueued while its thread captures a stream (between cudaStreamBeginCapture
// and cudaStreamEndCapture) goes into the graph, not onto the stream: not a blocker (the graph's
// host node holds the graph instead: idle_breakdown.h's "in graph"). Threads that were
// capturing when a window ended are carried too.
//
// Layer: analysis/metrics/. Built on TraceIndex.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/model/device_ops.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

class StreamBlockers {
 public:
  // What holds the stream: a host function, a wait on a memory value (api_names.h
  // IsStreamMemoryWait), or an event wait on a recording of another device's stream, behind
  // work there that ends at `until_ns` (that device was busy meanwhile; an event wait on the
  // same device holds nothing while its device is idle).
  enum class Kind : uint8_t { kHostFunction, kMemoryWait, kOtherDevice };
  struct Blocker {
    uint64_t correlation_id = 0;
    uint32_t name_id = 0;  // the call that enqueued the host function or wait (string id)
    Kind kind = Kind::kHostFunction;
    uint64_t until_ns = UINT64_MAX;  // kOtherDevice: when the awaited work ended
    bool operator<(const Blocker& o) const { return correlation_id < o.correlation_id; }
  };
  struct Carried {
    std::map<uint32_t, Blocker> pending;                 // by stream
    std::unordered_map<uint64_t, Blocker> held_events;   // recording's sync id -> what held it
    std::map<uint32_t, bool> capturing;                  // by thread, at the window's end
  };

  // The window's blockers, with those `carried` from earlier windows (updated for the next;
  // nullptr: one window, the whole trace). Costs nothing where no call named a stream and
  // nothing is carried.
  StreamBlockers(const TraceIndex& index, Carried* carried);

  // The host function's or memory wait's call that `op` waited behind (for an event wait, the
  // call that held the recording), or the event wait on another device's work, if any.
  std::optional<Blocker> Behind(const DeviceOp& op) const;

 private:
  struct Stream {
    std::vector<Blocker> blockers;  // by correlation id
    std::vector<uint64_t> ops;      // correlation ids, sorted
  };
  const Blocker* BehindIn(const Stream& s, uint64_t correlation_id) const;
  // Whether the window's event waits may cross devices (it has waits, and contexts or
  // recordings of more than one device); the blockers of those that do (true if any).
  static bool SeveralDevices(const TraceIndex& index);
  bool AddOtherDeviceWaits(const TraceIndex& index);
  // The legacy-stream links of `stream`: for a blocking stream its context's legacy stream, for
  // a legacy stream the blocking streams of its context that have blockers.
  std::vector<uint32_t> LinkedStreams(uint32_t stream, uint32_t context) const;
  std::unordered_map<uint32_t, Stream> streams_;
  std::unordered_map<uint32_t, uint32_t> legacy_of_context_;
  std::unordered_map<uint32_t, uint32_t> context_of_;
  std::optional<StreamClassifier> classifier_;  // set where some stream has a blocker
};

}  // namespace libprof::analysis
