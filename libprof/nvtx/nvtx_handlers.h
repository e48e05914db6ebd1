// libprof's implementations of the NVTX API, as (callback id, function) pairs for the NVTX
// module tables. They decode NVTX's arguments and call NvtxRecorder::Get().
//
// Layer: libprof/nvtx/. Every handler is noexcept and catches everything: no exception may
// unwind into the application. Handle encodings (opaque to the application):
//   nvtxDomainHandle_t  = the domain id (1, 2, ...); null is the default domain 0.
//   nvtxStringHandle_t  = the recorder-local string id + 1 (never null, even for "").
#pragma once

#include <cstdint>
#include <span>

#include "libprof/nvtx/nvtx_api.h"

namespace libprof {

struct NvtxHandlerSlot {
  uint32_t callback_id;  // NVTX_CBID_CORE_* or NVTX_CBID_CORE2_*
  NvtxFunctionPointer function;
};

// NVTX_CB_MODULE_CORE: marks and ranges of the default domain (the naming calls are left out).
std::span<const NvtxHandlerSlot> CoreHandlerSlots();
// NVTX_CB_MODULE_CORE2: domains, registered strings, domain marks and ranges.
std::span<const NvtxHandlerSlot> Core2HandlerSlots();

}  // namespace libprof
