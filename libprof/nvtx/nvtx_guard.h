// The exception barrier of every NVTX handler: no exception crosses into the program.
//
// Layer: libprof/nvtx. Shared by the core handlers (nvtx_handlers.cc) and the payload module's
// (nvtx_payload_handlers.cc).
#pragma once

#include "libprof/nvtx/nvtx_recorder.h"

namespace libprof {

// Runs `body`; a handler that fails (only std::bad_alloc is possible) loses its event, counted
// as dropped, and returns `on_error`.
template <typename Result, typename Body>
Result Guarded(Result on_error, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    try {
      NvtxRecorder::Get().CountDropped();
    } catch (...) {
    }
    return on_error;
  }
}

}  // namespace libprof
