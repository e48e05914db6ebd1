// Marks driver API calls made inside a runtime API call of the same thread as nested, so that
// host time is not counted twice, while records stream through in CUPTI's delivery order.
//
// Layer: libprof/ (CUDA-free). CUPTI writes an API record when the call returns, into per-thread
// buffers, so one thread's records arrive ordered by end time and a nested driver call arrives
// before the runtime call that contains it. Driver calls are therefore held per thread until the
// next runtime call of that thread arrives: it either contains them (nested) or starts after
// them, and then no later runtime call can contain them (runtime calls of one thread do not
// overlap). A thread that only calls the driver (Triton, JAX) would hold records forever, so they
// are also released by age (ReleaseOlderThan, from the periodic flush) and by count.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "proto/trace_model.h"

namespace libprof {

class ApiNestingTracker {
 public:
  // At most this many driver calls wait per thread; past it the oldest is released unnested.
  static constexpr size_t kMaxPendingPerThread = 16384;

  // Takes one API record; appends to *ready every record whose nesting is now decided.
  void Add(const ApiCall& call, std::vector<ApiCall>* ready);
  // Releases, unnested, pending driver calls that ended before `end_ns`.
  void ReleaseOlderThan(uint64_t end_ns, std::vector<ApiCall>* ready);
  // Releases everything pending (end of recording).
  void ReleaseAll(std::vector<ApiCall>* ready);
  size_t pending() const;

 private:
  std::unordered_map<uint32_t, std::deque<ApiCall>> pending_by_thread_;
};

}  // namespace libprof
