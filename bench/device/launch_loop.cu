// Launch-bound loop (issue 5, "Overhead" 1 and "Exit cost"): N empty kernel launches on one
// stream, timed on the host. The launch loop is where a CUPTI-based tool costs most (every launch
// makes API and kernel records), so its host us per launch is the headline overhead figure.
//
// Usage: launch_loop [launches=1000000]
// Prints: us_per_launch=X (the loop alone, timed with std::chrono before the final
// cudaDeviceSynchronize), then exit_stamp_ns=T, CLOCK_REALTIME just after the last CUDA call: the
// runner subtracts it from the time it sees the process end, which is the exit cost.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

__global__ void EmptyKernel() {}

bool Ok(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return true;
  std::fprintf(stderr, "launch_loop: %s: %s\n", what, cudaGetErrorString(result));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const long launches = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  if (launches <= 0) {
    std::fprintf(stderr, "usage: launch_loop [launches=1000000]\n");
    return 2;
  }
  cudaStream_t stream;
  if (!Ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) return 1;
  // Warm-up: module loading and the first launch's set-up stay out of the timed loop.
  for (int i = 0; i < 1000; ++i) EmptyKernel<<<1, 1, 0, stream>>>();
  if (!Ok(cudaDeviceSynchronize(), "warm-up")) return 1;

  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) EmptyKernel<<<1, 1, 0, stream>>>();
  const auto end = std::chrono::steady_clock::now();
  if (!Ok(cudaGetLastError(), "launch") || !Ok(cudaDeviceSynchronize(), "synchronize")) return 1;
  if (!Ok(cudaStreamDestroy(stream), "cudaStreamDestroy")) return 1;

  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const double us = std::chrono::duration<double, std::micro>(end - start).count();
  std::printf("us_per_launch=%.4f\nexit_stamp_ns=%lld\n", us / launches,
              static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec);
  std::fflush(stdout);
  return 0;
}
