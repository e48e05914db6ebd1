#include "viewer-cli/nesting_stream.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace libprof::viewer {

NestingStream::NestingStream(size_t max_pending, uint64_t horizon_ns, Decided decided)
    : max_pending_(max_pending), horizon_ns_(horizon_ns), decided_(std::move(decided)) {}

bool NestingStream::Before(const Held& a, const Held& b) {
  // Start first; of two with the same start the enclosing (longer) one; then unflagged first;
  // then file order, so that the result is fully determined.
  return std::make_tuple(a.call.start_ns, b.call.end_ns, a.call.nested, a.seq) <
         std::make_tuple(b.call.start_ns, a.call.end_ns, b.call.nested, b.seq);
}

void NestingStream::Add(const ApiCall& call, uint64_t seq) {
  Thread& t = threads_[call.thread_id];
  const Held held{call, seq};
  latest_start_ns_ = std::max(latest_start_ns_, call.start_ns);
  if (t.decided_any && Before(held, t.last)) out_of_order_ = true;
  // Arrivals are nearly sorted: walk back from the end.
  auto pos = t.held.end();
  while (pos != t.held.begin() && Before(held, *std::prev(pos))) --pos;
  t.held.insert(pos, held);
  if (max_pending_ != 0 && t.held.size() > max_pending_) Decide(&t);
}

void NestingStream::Decide(Thread* t) {
  const Held h = t->held.front();
  t->held.pop_front();
  const ApiCall& c = h.call;
  while (!t->open.empty() && t->open.back().second <= c.start_ns) t->open.pop_back();
  const bool inside =
      !t->open.empty() && c.end_ns <= t->open.back().second && c.start_ns >= t->open.back().first;
  if (!inside) t->open.clear();
  t->open.emplace_back(c.start_ns, c.end_ns);
  t->decided_any = true;
  t->last = h;
  decided_(c, h.seq, c.nested || inside);
}

void NestingStream::ReleaseOld() {
  if (max_pending_ == 0 || latest_start_ns_ <= horizon_ns_) return;
  const uint64_t old_before = latest_start_ns_ - horizon_ns_;
  for (auto& [tid, thread] : threads_) {
    while (!thread.held.empty() && thread.held.front().call.start_ns < old_before) Decide(&thread);
  }
}

void NestingStream::Finish() {
  for (auto& [tid, thread] : threads_) {
    while (!thread.held.empty()) Decide(&thread);
  }
}

}  // namespace libprof::viewer
