#include "libprof/nvtx/nvtx_thread_state.h"

#include <mutex>
#include <utility>

#include "libprof/clock.h"

namespace libprof {
namespace {

// Trivially destructible, so the hot path reads them without a TLS-init check.
thread_local uint64_t t_generation = 0;
thread_local NvtxThreadState* t_state = nullptr;
thread_local bool t_exit_guard_destroyed = false;

// Owns the thread's reference; its destructor is what marks the state exited.
struct ThreadExitGuard {
  std::shared_ptr<NvtxThreadState> state;

  ~ThreadExitGuard() {
    Release();
    t_exit_guard_destroyed = true;
  }
  void Release() {
    if (state) {
      std::lock_guard<SpinLock> lock(state->lock);
      state->exited = true;
      state->exit_ns = ReadClockNs(state->clock);
    }
    state.reset();
    t_state = nullptr;
    t_generation = 0;
  }
};
thread_local ThreadExitGuard t_exit_guard;

}  // namespace

NvtxEvent MakeNvtxEvent(NvtxKind kind, uint64_t start_ns, uint64_t end_ns, uint32_t thread_id,
                        uint32_t domain, const NvtxAttributes& attributes) {
  return NvtxEvent{.kind = kind,
                   .start_ns = start_ns,
                   .end_ns = end_ns,
                   .thread_id = thread_id,
                   .domain_id = domain,
                   .message_id = attributes.message_id,
                   .category = attributes.category,
                   .color_argb = attributes.color_argb,
                   .has_color = attributes.has_color,
                   .payloads = attributes.payloads};
}

void NvtxThreadState::AppendOpenFrames(uint64_t end_ns, std::vector<NvtxEvent>* out) const {
  for (size_t domain = 0; domain < stacks.size(); ++domain) {
    for (size_t level = 0; level < stacks[domain].size(); ++level) {
      const Frame& frame = stacks[domain][level];
      if (!frame.recorded) continue;
      NvtxEvent event = MakeNvtxEvent(NvtxKind::kPushPop, frame.start_ns, end_ns, tid,
                                      static_cast<uint32_t>(domain), frame.attributes);
      event.depth = static_cast<uint32_t>(level);
      event.open = true;
      out->push_back(event);
    }
  }
}

NvtxThreadState* BoundThreadState(uint64_t generation) {
  return t_generation == generation ? t_state : nullptr;
}

void BindThreadState(std::shared_ptr<NvtxThreadState> state, uint64_t generation) {
  NvtxThreadState* raw = state.get();
  if (!t_exit_guard_destroyed) {
    t_exit_guard.Release();  // a state of another recorder (tests only)
    t_exit_guard.state = std::move(state);
  }
  t_state = raw;
  t_generation = generation;
}

}  // namespace libprof
