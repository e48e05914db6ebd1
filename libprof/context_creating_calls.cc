#include "libprof/context_creating_calls.h"

#include <utility>

namespace libprof {
namespace {

// This thread's outermost filtered call, while one is open.
struct OpenCall {
  uint32_t depth = 0;  // filtered calls open, the outermost included
  bool created_context = false;
  ApiCall call;
};
thread_local OpenCall t_open;

}  // namespace

void ContextCreatingCalls::Enter(ApiDomain domain, uint32_t callback_id, uint64_t correlation_id,
                                 uint32_t thread_id, uint64_t now_ns) {
  if (t_open.depth++ > 0) return;
  t_open.created_context = false;
  t_open.call = ApiCall{};
  t_open.call.domain = domain;
  t_open.call.callback_id = callback_id;
  t_open.call.correlation_id = correlation_id;
  t_open.call.thread_id = thread_id;
  t_open.call.start_ns = now_ns;
}

bool ContextCreatingCalls::Exit(uint64_t now_ns, int32_t return_value, bool keep) {
  if (t_open.depth == 0) return false;  // entered before the watch began
  if (--t_open.depth > 0 || !t_open.created_context) return false;
  t_open.created_context = false;
  if (keep) {
    ApiCall call = t_open.call;
    call.end_ns = now_ns;
    call.return_value = return_value;
    std::lock_guard<std::mutex> lock(mutex_);
    kept_.push_back(call);
  }
  return true;
}

bool ContextCreatingCalls::ContextCreated() {
  if (t_open.depth == 0) return false;
  t_open.created_context = true;
  return true;
}

std::vector<ApiCall> ContextCreatingCalls::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(kept_, {});
}

}  // namespace libprof
