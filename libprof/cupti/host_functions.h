// The calls that enqueue a host function on a stream: cudaLaunchHostFunc, cudaStreamAddCallback
// and the driver's cuLaunchHostFunc and cuStreamAddCallback, each also in its per-thread-stream
// form. Work queued behind a host function waits on the device until the function has returned
// on CUDA's callback thread, and nothing CUPTI records shows that run: no activity record, and
// the API records carry no parameters. So libprof reads the stream from the call's parameters in
// its API callback and records it on the call (ApiCall::stream_id); profview then tells device
// idle time spent behind a host function from launch overhead (analysis/metrics/idle_breakdown.h).
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
std::span<const CUpti_CallbackId> HostFunctionCbids(bool runtime);

// The stream argument of such a call, as cuptiGetStreamIdEx takes it: the handle (nullptr for
// the default stream) and whether a null handle means the calling thread's per-thread stream.
struct StreamArgument {
  CUstream stream = nullptr;
  bool per_thread = false;
};

// The stream that call `cbid` (of that domain) named, read from its parameters
// (CUpti_CallbackData::functionParams, may be null); nullopt for any other call or no parameters.
std::optional<StreamArgument> HostFunctionStream(bool runtime, CUpti_CallbackId cbid,
                                                 const void* params);

// The streams noted at the calls' entry (any thread), until their API records are decoded (the
// writer thread): a record completes after its call returned, so its stream is noted by then.
// Host functions are few, so one lock is cheap; ids whose record never comes (a call made while
// not recording) go once more than kMaxPending wait, the oldest half first.
class HostFunctionStreams {
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
