#include "libprof/api_nesting.h"

#include <algorithm>

namespace libprof {

void ApiNestingTracker::Add(const ApiCall& call, std::vector<ApiCall>* ready) {
  // Internal launches happen outside any API function by definition: nothing to decide.
  if (call.domain != ApiDomain::kRuntime && call.domain != ApiDomain::kDriver) {
    ready->push_back(call);
    return;
  }
  if (call.domain == ApiDomain::kDriver) {
    std::deque<ApiCall>& pending = pending_by_thread_[call.thread_id];
    if (pending.size() >= kMaxPendingPerThread) {
      ready->push_back(pending.front());
      pending.pop_front();
    }
    pending.push_back(call);
    return;
  }
  auto it = pending_by_thread_.find(call.thread_id);
  if (it != pending_by_thread_.end()) {
    std::deque<ApiCall>& pending = it->second;
    // Calls that ended after this runtime call (not expected with ordered delivery) keep waiting.
    auto keep = std::stable_partition(pending.begin(), pending.end(),
                                      [&](const ApiCall& d) { return d.end_ns <= call.end_ns; });
    for (auto d = pending.begin(); d != keep; ++d) {
      d->nested = d->start_ns >= call.start_ns && d->end_ns <= call.end_ns;
      ready->push_back(*d);
    }
    pending.erase(pending.begin(), keep);
    if (pending.empty()) pending_by_thread_.erase(it);
  }
  ready->push_back(call);
}

void ApiNestingTracker::ReleaseOlderThan(uint64_t end_ns, std::vector<ApiCall>* ready) {
  for (auto it = pending_by_thread_.begin(); it != pending_by_thread_.end();) {
    std::deque<ApiCall>& pending = it->second;
    auto keep = std::stable_partition(pending.begin(), pending.end(),
                                      [&](const ApiCall& d) { return d.end_ns < end_ns; });
    ready->insert(ready->end(), pending.begin(), keep);
    pending.erase(pending.begin(), keep);
    it = pending.empty() ? pending_by_thread_.erase(it) : std::next(it);
  }
}

void ApiNestingTracker::ReleaseAll(std::vector<ApiCall>* ready) {
  for (auto& [thread, pending] : pending_by_thread_) {
    ready->insert(ready->end(), pending.begin(), pending.end());
  }
  pending_by_thread_.clear();
}

size_t ApiNestingTracker::pending() const {
  size_t n = 0;
  for (const auto& [thread, pending] : pending_by_thread_) n += pending.size();
  return n;
}

}  // namespace libprof
