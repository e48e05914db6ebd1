// Shared by the samples: error checks that end the program with status 1 on any failed CUDA or
// cuBLAS call, a spin kernel that keeps the GPU busy for a given time, and argument parsing.
//
// Layer: samples/ (test programs, not part of libprof). Each sample is one .cu including this.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Every CUDA call goes through this: a sample must fail loudly, never print a wrong result.
#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t check_status_ = (call);                                         \
    if (check_status_ != cudaSuccess) {                                         \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(check_status_));                          \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

// After a <<<>>> launch: launch errors show up in cudaGetLastError.
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())

// Fails the program with a message (a wrong result or a bad argument).
#define CHECK_TRUE(condition, ...)                                       \
  do {                                                                   \
    if (!(condition)) {                                                  \
      std::fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                                 \
      std::fprintf(stderr, "\n");                                        \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

// Busy-waits `ns` nanoseconds of GPU time (the %globaltimer clock), so that work queued behind
// it on the same stream waits a known time. Launch with <<<1, 1>>>.
__global__ void SpinKernel(uint64_t ns) {
  uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  uint64_t now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

// Parses a positive integer argument; exits with status 2 on anything else.
inline long ParsePositive(const char* text, const char* what) {
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "bad %s: '%s' (want a positive integer)\n", what, text);
    std::exit(2);
  }
  return value;
}
