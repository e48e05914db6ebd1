#include "libprof/backtrace/blocking_apis.h"

namespace libprof {
namespace {

// Families, matched as prefixes so that every variant (Async, 2D/3D, Peer, ToSymbol, _ptds,
// the driver's HtoD/DtoH/D8/D16...) is included.
constexpr std::string_view kPrefixes[] = {
    // Copies and memsets: synchronous ones hold the host; *Async ones do with pageable memory
    // or behind earlier work on the legacy default stream (cupti-facts.md 0.8).
    "cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset",
    // Allocations and frees: cudaFree and cudaMalloc may synchronise the device; pinned host
    // memory and registration are slow page-locking system calls.
    "cudaMalloc", "cuMemAlloc", "cudaHostAlloc", "cuMemHostAlloc", "cudaHostRegister",
    "cuMemHostRegister", "cudaHostUnregister", "cuMemHostUnregister", "cudaFree", "cuMemFree",
};

// Explicit synchronisations.
constexpr std::string_view kExact[] = {
    "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
    "cudaEventSynchronize",  "cuCtxSynchronize",      "cuStreamSynchronize",
    "cuEventSynchronize",    "cudaDeviceReset",       "cuArrayDestroy",
};

}  // namespace

bool CanBlockHost(std::string_view name) {
  for (std::string_view prefix : kPrefixes) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  for (std::string_view exact : kExact) {
    if (name == exact) return true;
  }
  return false;
}

}  // namespace libprof
