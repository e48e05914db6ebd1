// The calls that enqueue on a stream something that holds it until the world outside the
// stream acts: a host function (cudaLaunchHostFunc, cudaStreamAddCallback and the driver's
// cuLaunchHostFunc and cuStreamAddCallback), waiting until it has returned on CUDA's callback
// thread, and a wait on a memory value (cuStreamWaitValue32/64, and cuStreamBatchMemOp with a
// wait among its operations), waiting until the host or other work writes it. Each also in its
// per-thread-stream form. Nothing CUPTI records shows those waits: no activity record, and the
// API records carry no parameters. So libprof reads the stream from the call's parameters in
// its API callback and records it on the call (ApiCall::stream_id); profview then tells device
// idle time spent behind such a call from launch overhead (analysis/metrics/idle_breakdown.h).
//
// Layer: libprof/cupti/ (CUPTI types). Pure: no CUPTI call.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>

#include "proto/trace_model.h"

namespace libprof {

// The callback ids of these calls in the runtime (true) or driver (false) domain, ascending.
std::span<const CUpti_CallbackId> StreamBlockingCbids(bool runtime);

// The stream argument of such a call, as cuptiGetStreamIdEx takes it: the handle (nullptr for
// the default stream) and whether a null handle means the calling thread's per-thread stream.
struct StreamArgument {
  CUstream stream = nullptr;
  bool per_thread = false;
};

// The stream that call `cbid` (of that domain) named, read from its parameters
// (CUpti_CallbackData::functionParams, may be null); nullopt for any other call, no parameters,
// or a cuStreamBatchMemOp without a wait among its operations.
std::optional<StreamArgument> StreamBlockingCallStream(bool runtime, CUpti_CallbackId cbid,
                                                       const void* params);

// The streams noted at the calls' entry (any thread), until their API records are decoded (the
// writer thread): a record completes after its call returned, so its stream is noted by then.
// These calls are few, so one lock is cheap; ids whose record never comes (a call made while
// not recording) go once more than kMaxPending wait, the oldest half first.
class StreamBlockingCalls {
 public:
  void Note(uint64_t correlation_id, uint32_t stream_id);
  // Sets stream_id of each call noted (kept: a runtime call and the driver call nested in it
  // may share the id).
  void Attach(std::span<ApiCall> calls);

 private:
  static constexpr size_t kMaxPending = 4096;
  std::mutex mutex_;
  std::unordered_map<uint64_t, uint32_t> pending_;
};

}  // namespace libprof
