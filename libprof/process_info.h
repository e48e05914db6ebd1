// Facts about the process being recorded, for the trace header and output names.
//
// Layer: libprof/ (CUDA-free). Reads /proc and libc only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace libprof {

std::string Hostname();
std::vector<std::string> CommandLine();  // argv from /proc/self/cmdline
// The path libprof.so was loaded from (for NVTX_INJECTION64_PATH in LD_PRELOAD mode).
std::string OwnLibraryPath();

}  // namespace libprof
