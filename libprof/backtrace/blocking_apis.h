// Which CUDA API calls LIBPROF_BACKTRACE=blocking records a call stack for: those that can hold
// the host until the device catches up, where "who called this?" is the question a slow program
// raises (copies, memsets, synchronisations, frees, allocations).
//
// Layer: libprof/backtrace/ (CUDA-free: works on clean API names, so that the session can decide
// per CUPTI callback id once at start, and tests need no CUDA).
#pragma once

#include <string_view>

namespace libprof {

// True for a clean runtime or driver API name ("cudaMemcpyAsync", "cuMemFree") that copies,
// sets memory, synchronises, frees or allocates. Launches, queries and stream/event management
// that never wait (cudaLaunchKernel, cudaEventRecord, cudaStreamWaitEvent) are false.
bool CanBlockHost(std::string_view clean_api_name);

}  // namespace libprof
