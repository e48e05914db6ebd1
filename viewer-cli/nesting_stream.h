// Decides which API calls are nested in another call of their thread while the calls stream in,
// with TraceIndex's rule: the recorded `nested` flag, or the call lies inside the interval of the
// innermost call still open on its thread when the thread's calls are taken in (start, longest
// first, unflagged first) order.
//
// Layer: viewer-cli/ analysis library. Pure.
//
// CUPTI writes one thread's API records as the calls return, so they arrive almost in start order:
// a nested driver call just before the runtime call around it. Each thread keeps up to
// `max_pending` calls sorted; past that the earliest is decided. A call that arrives after a later
// one was decided sets out_of_order(): the caller then reads the trace again with max_pending = 0
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

  NestingStream(size_t max_pending, Decided decided);

  void Add(const ApiCall& call, uint64_t seq);
  void Finish();  // decides every call still held
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
  Decided decided_;
  std::unordered_map<uint32_t, Thread> threads_;
  bool out_of_order_ = false;
};

}  // namespace libprof::viewer
