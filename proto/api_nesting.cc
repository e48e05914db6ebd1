#include "proto/api_nesting.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

namespace libprof {

bool NestingBefore(const ApiCall& a, uint64_t a_seq, const ApiCall& b, uint64_t b_seq) {
  // Start first; of two with the same start the enclosing (longer) one; then unflagged first;
  // then file order, so that the result is fully determined.
  return std::make_tuple(a.start_ns, b.end_ns, a.nested, a_seq) <
         std::make_tuple(b.start_ns, a.end_ns, b.nested, b_seq);
}

NestingDecision ThreadNesting::Next(const ApiCall& c, uint64_t seq) {
  if (rule_ == NestingRule::kDriverInRuntime) {
    // Runtime calls of a thread do not overlap: the last one that started is the only candidate.
    if (c.domain == ApiDomain::kRuntime) {
      open_.assign(1, {c.start_ns, c.end_ns, seq});
      return {c.nested, seq};
    }
    const bool inside = c.domain == ApiDomain::kDriver && !open_.empty() &&
                        c.start_ns >= open_.back().start_ns && c.end_ns <= open_.back().end_ns;
    return {c.nested || inside, inside ? open_.back().seq : seq};
  }
  while (!open_.empty() && open_.back().end_ns <= c.start_ns) open_.pop_back();
  const bool inside =
      !open_.empty() && c.end_ns <= open_.back().end_ns && c.start_ns >= open_.back().start_ns;
  // The front is a top-level call: a call that is not inside clears the stack.
  const uint64_t outermost = inside ? open_.front().seq : seq;
  if (!inside) open_.clear();
  open_.push_back({c.start_ns, c.end_ns, seq});
  return {c.nested || inside, outermost};
}

ApiNesting::ApiNesting(Options options, Decided decided)
    : options_(options), decided_(std::move(decided)) {}

void ApiNesting::Add(const ApiCall& call, uint64_t seq) {
  if (options_.rule == NestingRule::kDriverInRuntime && call.domain != ApiDomain::kRuntime &&
      call.domain != ApiDomain::kDriver) {
    decided_(call, seq, call.nested);  // neither encloses nor is enclosed: nothing to decide
    return;
  }
  Thread& t = threads_.try_emplace(call.thread_id, options_.rule).first->second;
  const Held held{call, seq};
  latest_start_ns_ = std::max(latest_start_ns_, call.start_ns);
  auto before = [](const Held& a, const Held& b) {
    return NestingBefore(a.call, a.seq, b.call, b.seq);
  };
  if (t.decided_any && before(held, t.last)) out_of_order_ = true;
  // Arrivals are nearly sorted: walk back from the end.
  auto pos = t.held.end();
  while (pos != t.held.begin() && before(held, *std::prev(pos))) --pos;
  t.held.insert(pos, held);
  if (options_.rule == NestingRule::kDriverInRuntime && call.domain == ApiDomain::kRuntime) {
    while (!t.held.empty() && t.held.front().call.end_ns <= call.end_ns) Decide(&t);
  }
  if (options_.max_pending != 0 && t.held.size() > options_.max_pending) Decide(&t);
}

void ApiNesting::Decide(Thread* t) {
  const Held h = t->held.front();
  t->held.pop_front();
  const NestingDecision d = t->nesting.Next(h.call, h.seq);
  t->decided_any = true;
  t->last = h;
  decided_(h.call, h.seq, d.nested);
}

void ApiNesting::ReleaseOld() {
  if (options_.max_pending == 0 || latest_start_ns_ <= options_.horizon_ns) return;
  const uint64_t old_before = latest_start_ns_ - options_.horizon_ns;
  for (auto& [tid, thread] : threads_) {
    while (!thread.held.empty() && thread.held.front().call.start_ns < old_before) Decide(&thread);
  }
}

void ApiNesting::ReleaseEndedBefore(uint64_t end_ns) {
  for (auto& [tid, thread] : threads_) {
    while (!thread.held.empty() && thread.held.front().call.end_ns < end_ns) Decide(&thread);
  }
}

void ApiNesting::Finish() {
  for (auto& [tid, thread] : threads_) {
    while (!thread.held.empty()) Decide(&thread);
  }
}

size_t ApiNesting::pending() const {
  size_t n = 0;
  for (const auto& [tid, thread] : threads_) n += thread.held.size();
  return n;
}

ApiNestingTracker::ApiNestingTracker()
    : nesting_({.rule = NestingRule::kDriverInRuntime, .max_pending = kMaxPendingPerThread},
               [this](const ApiCall& call, uint64_t, bool nested) {
                 ready_->push_back(call);
                 ready_->back().nested = nested;
               }) {}

void ApiNestingTracker::Add(const ApiCall& call, std::vector<ApiCall>* ready) {
  ready_ = ready;
  nesting_.Add(call, seq_++);
}

void ApiNestingTracker::ReleaseOlderThan(uint64_t end_ns, std::vector<ApiCall>* ready) {
  ready_ = ready;
  nesting_.ReleaseEndedBefore(end_ns);
}

void ApiNestingTracker::ReleaseAll(std::vector<ApiCall>* ready) {
  ready_ = ready;
  nesting_.Finish();
}

}  // namespace libprof
