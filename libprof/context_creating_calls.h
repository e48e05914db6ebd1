// Keeps the one call that LIBPROF_API_FILTER=significant would leave out when a context is
// created inside it. PyTorch's context is created inside cudaDeviceGetStreamPriorityRange, a
// filtered query (117-123 ms of it on an H200, docs/capture-notes.md): without that call in the
// trace, start-up cannot say where its context creation went.
//
// Layer: libprof/ (CUDA-free, unit-tested). The CUPTI session enables the callbacks of the
// filtered calls until the first context exists and reports their entries and exits here, on
// the calling thread; the context's creation is reported on the thread that created it. Each
// thread tracks only its outermost filtered call (a filtered runtime call may make filtered
// driver calls). The writer thread takes the kept calls, complete but for their names.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "proto/trace_model.h"

namespace libprof {

class ContextCreatingCalls {
 public:
  // A filtered call begins on this thread.
  void Enter(ApiDomain domain, uint32_t callback_id, uint64_t correlation_id, uint32_t thread_id,
             uint64_t now_ns);
  // A filtered call on this thread returns. True when it was the outermost one and a context was
  // created inside it: the call is kept (Take) and nothing more needs watching on this thread.
  bool Exit(uint64_t now_ns, int32_t return_value, bool keep);
  // A context was created on this thread: whether inside a filtered call (which Exit then keeps).
  bool ContextCreated();
  // The calls kept since the last Take, oldest first (any thread; the writer's).
  std::vector<ApiCall> Take();

 private:
  std::mutex mutex_;
  std::vector<ApiCall> kept_;
};

}  // namespace libprof
