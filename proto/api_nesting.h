// API nesting: which API calls run inside another call of the same thread, so that host time is
// not counted twice. The one implementation, shared by libprof (flags calls as it writes them)
// and the analysis (TraceIndex in memory, the streamed summary).
//
// Layer: proto/ (libprof_trace_writer): CUDA-free, libprotobuf-free, linked into libprof.so.
// Depends on trace_model.h only.
//
// The rule: a thread's calls are taken in NestingBefore order (start, the longer first, the
// unflagged first, then file order) and each is compared with the innermost call still open on
// its thread (ThreadNesting). ApiNesting applies it while calls stream in, holding each thread's
// calls until their order is settled. Two rules decide who may enclose whom (NestingRule).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "proto/trace_model.h"

namespace libprof {

enum class NestingRule : uint8_t {
  // The analysis: any call inside the innermost open call of its thread is nested, and so is a
  // call recorded as nested (traces lack the flag or were filtered).
  kAnyCall,
  // Capture (the meaning of ApiCall::nested on the wire): a driver call inside a runtime call.
  // Runtime calls of one thread do not overlap, and CUPTI delivers a thread's records in end
  // order, so a runtime call's arrival decides its thread's calls that ended by its end.
  // Internal launches happen outside any API function and pass straight through.
  kDriverInRuntime,
};

// Whether call `a` (at file position `a_seq`) is taken before `b` on their thread.
bool NestingBefore(const ApiCall& a, uint64_t a_seq, const ApiCall& b, uint64_t b_seq);

struct NestingDecision {
  bool nested = false;     // the recorded flag, or inside an enclosing call
  uint64_t outermost = 0;  // seq of the outermost enclosing call (the call's own when top-level)
};

// One thread's open calls. Feed the thread's calls in NestingBefore order.
class ThreadNesting {
 public:
  explicit ThreadNesting(NestingRule rule = NestingRule::kAnyCall) : rule_(rule) {}
  NestingDecision Next(const ApiCall& call, uint64_t seq);

 private:
  struct Open {
    uint64_t start_ns, end_ns, seq;
  };
  NestingRule rule_;
  std::vector<Open> open_;  // enclosing calls, outermost first
};

// ThreadNesting over calls that arrive nearly in start order (a nested driver call just before
// the runtime call around it). Each thread keeps its calls sorted and decides the earliest once
// it holds more than `max_pending`, once it started `horizon_ns` before the latest call seen on
// any thread (ReleaseOld: a quiet thread must not hold its calls to the end), once it ended
// before a given time (ReleaseEndedBefore), or, with kDriverInRuntime, once a runtime call that
// ended after it arrives. A call that arrives after a later one was decided sets out_of_order():
// the caller may then read again with max_pending = 0 (decide nothing before Finish), which is
// exact for any order.
class ApiNesting {
 public:
  // `decided(call, seq, nested)` is called once per call, per thread in NestingBefore order; `seq`
  // is the number Add was given (the call's position in the file).
  using Decided = std::function<void(const ApiCall& call, uint64_t seq, bool nested)>;
  struct Options {
    NestingRule rule = NestingRule::kAnyCall;
    size_t max_pending = 0;  // per thread; 0: hold everything until Finish
    uint64_t horizon_ns = UINT64_MAX;
  };

  ApiNesting(Options options, Decided decided);

  void Add(const ApiCall& call, uint64_t seq);
  void ReleaseOld();  // decides what the horizon allows (a no-op with max_pending 0)
  void ReleaseEndedBefore(uint64_t end_ns);  // decides each thread's calls that ended before
  void Finish();                             // decides every call still held
  bool out_of_order() const { return out_of_order_; }
  size_t pending() const;

 private:
  struct Held {
    ApiCall call;
    uint64_t seq;
  };
  struct Thread {
    explicit Thread(NestingRule rule) : nesting(rule) {}
    std::deque<Held> held;  // sorted by NestingBefore
    ThreadNesting nesting;
    bool decided_any = false;
    Held last;  // the last call decided
  };
  void Decide(Thread* thread);  // decides the thread's earliest held call

  Options options_;
  uint64_t latest_start_ns_ = 0;
  Decided decided_;
  std::unordered_map<uint32_t, Thread> threads_;
  bool out_of_order_ = false;
};

// libprof's recorder: sets ApiCall::nested (kDriverInRuntime) on the calls it writes. Calls come
// out as they are decided, each thread's in NestingBefore order (a runtime call just before the
// driver calls nested in it), internal launches at once. A thread that only calls the driver
// (Triton, JAX) would hold its records forever, so they are also released by age (ReleaseOlderThan,
// from the periodic flush) and by count.
class ApiNestingTracker {
 public:
  // At most this many calls wait per thread; past it the earliest is decided.
  static constexpr size_t kMaxPendingPerThread = 16384;

  ApiNestingTracker();
  ApiNestingTracker(const ApiNestingTracker&) = delete;  // its callback holds `this`
  ApiNestingTracker& operator=(const ApiNestingTracker&) = delete;
  // Takes one API record; appends to *ready every record whose nesting is now decided.
  void Add(const ApiCall& call, std::vector<ApiCall>* ready);
  // Decides the pending calls that ended before `end_ns` (unnested, unless their runtime call
  // came).
  void ReleaseOlderThan(uint64_t end_ns, std::vector<ApiCall>* ready);
  // Decides everything pending (end of recording).
  void ReleaseAll(std::vector<ApiCall>* ready);
  size_t pending() const { return nesting_.pending(); }

 private:
  std::vector<ApiCall>* ready_ = nullptr;
  uint64_t seq_ = 0;
  ApiNesting nesting_;
};

}  // namespace libprof
