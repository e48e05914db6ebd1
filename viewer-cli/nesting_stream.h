// Decides which API calls are nested in another call of their thread while the calls stream in,
// with TraceIndex's rule: the recorded `nested` flag, or the call lies inside the interval of the
// innermost call still open on its thread when the thread's calls are taken in (start, longest
// first, unflagged first) order.
//
// Layer: viewer-cli/ analysis library. Pure.
//
// CUPTI writes one thread's API records as the calls return, so they arrive almost in start order:
// a nested driver call just before the runtime call around it. Each thread keeps its calls
// sorted and decides the earliest once it holds more than `max_pending`, or (ReleaseOld) once it
// started `horizon_ns` before the latest call seen on any thread: a thread that makes few calls
// must not hold them to the end, behind everything else. A call that arrives after a later one
// was decided sets out_of_order(): the caller then reads the trace again with max_pending = 0
// (decide nothing before Finish), which is exact for any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "proto/trace_model.h"

namespace libprof::viewer {

class NestingStream {
 public:
  // `decided(call, seq, nested)` is called once per call, per thread in the order above; `seq` is
  // the number Add was given (the call's position in the file).
  using Decided = std::function<void(const ApiCall& call, uint64_t seq, bool nested)>;

  NestingStream(size_t max_pending, uint64_t horizon_ns, Decided decided);

  void Add(const ApiCall& call, uint64_t seq);
  void ReleaseOld();  // decides what the horizon allows (a no-op with max_pending 0)
  void Finish();      // decides every call still held
  bool out_of_order() const { return out_of_order_; }

 private:
  struct Held {
    ApiCall call;
    uint64_t seq;
  };
  struct Thread {
    std::deque<Held> held;                            // sorted by Before()
    std::vector<std::pair<uint64_t, uint64_t>> open;  // enclosing calls' [start, end]
    bool decided_any = false;
    Held last;  // the last call decided
  };
  static bool Before(const Held& a, const Held& b);
  void Decide(Thread* thread);  // decides the thread's earliest held call

  size_t max_pending_;
  uint64_t horizon_ns_;
  uint64_t latest_start_ns_ = 0;
  Decided decided_;
  std::unordered_map<uint32_t, Thread> threads_;
  bool out_of_order_ = false;
};

}  // namespace libprof::viewer
