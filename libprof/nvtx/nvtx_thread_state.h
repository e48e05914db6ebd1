// One thread's NVTX state (its buffer of completed events, its push/pop stacks, its message
// cache) and how a thread finds its own: a thread_local pointer, valid for the recorder whose
// generation it was bound with, released (marked exited) when the thread ends.
//
// Layer: libprof/nvtx/ (CUDA-free). Internal to NvtxRecorder.
#pragma once

#include <time.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libprof/nvtx/spin_lock.h"
#include "proto/trace_model.h"

namespace libprof {

// What an NVTX event carries besides its time, thread and domain.
struct NvtxAttributes {
  uint32_t message_id = 0;  // recorder-local string id (InternMessage); 0 = no message
  uint32_t category = 0;
  uint32_t color_argb = 0;
  bool has_color = false;
  // Payload extension: copies of the payloads given with the event (schema ids as given).
  std::vector<NvtxPayload> payloads{};
};

NvtxEvent MakeNvtxEvent(NvtxKind kind, uint64_t start_ns, uint64_t end_ns, uint32_t thread_id,
                        uint32_t domain, const NvtxAttributes& attributes);

struct NvtxThreadState {
  struct Frame {
    uint64_t start_ns = 0;
    NvtxAttributes attributes;
    bool recorded = false;  // false when pushed while recording was off
  };
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };

  // Appends events for the recorded push ranges still open, with open = true, ending at
  // `end_ns`. Caller holds `lock`.
  void AppendOpenFrames(uint64_t end_ns, std::vector<NvtxEvent>* out) const;

  SpinLock lock;
  // Guarded by `lock`: the owner writes them per event; Drain, SetEnabled and fork take them.
  std::vector<NvtxEvent> events;
  std::vector<NvtxEvent> spare;  // empty, with capacity: becomes `events` at the next Drain
  std::vector<std::vector<Frame>> stacks;  // open push ranges, indexed by domain id
  uint32_t unpublished = 0;  // events of `events` not yet added to the recorder's shared count
  bool exited = false;
  uint64_t exit_ns = 0;
  clockid_t clock = CLOCK_MONOTONIC;  // the recorder's clock, which stamps exit_ns
  // Written at creation (and in a fork child, where only this thread exists).
  uint32_t tid = 0;
  // Owner thread only, no lock.
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> intern_cache;
};

// The calling thread's state if it was bound for `generation`, else nullptr.
NvtxThreadState* BoundThreadState(uint64_t generation);

// Makes `state` the calling thread's state for `generation`, releasing any earlier one. At thread
// exit the state is marked exited (glibc runs these destructors for the main thread inside
// exit(), before atexit handlers). A thread already past its TLS destructors (the main thread in
// an atexit handler) stays bound, but is never marked exited.
void BindThreadState(std::shared_ptr<NvtxThreadState> state, uint64_t generation);

}  // namespace libprof
