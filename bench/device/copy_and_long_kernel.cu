// Programs where a profiler's cost should vanish in the noise (issue 5, "Overhead" 3): few API
// calls, each doing a lot of work. `copy` moves 64 MiB host<->device from pageable and pinned
// memory, both directions, `reps` times; `long` runs a ~50 ms spin kernel 20 times, synchronising
// after each (a slow training step). Allocation and warm-up are not timed.
//
// Usage: copy_and_long_kernel copy [reps=20] | long [reps=20]
// Prints: copy_ms=X or long_ms=X, the host wall time of the timed part.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr size_t kCopyBytes = size_t{64} << 20;
constexpr unsigned long long kSpinNs = 50'000'000;  // 50 ms per kernel

bool Ok(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return true;
  std::fprintf(stderr, "copy_and_long_kernel: %s: %s\n", what, cudaGetErrorString(result));
  return false;
}

// Spins on the GPU's global nanosecond timer, so the length does not depend on the clock rate.
__global__ void SpinKernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// One repetition: HtoD and DtoH from pageable, then from pinned memory.
bool CopyOnce(void* device, void* pageable, void* pinned) {
  return Ok(cudaMemcpy(device, pageable, kCopyBytes, cudaMemcpyHostToDevice), "HtoD pageable") &&
         Ok(cudaMemcpy(pageable, device, kCopyBytes, cudaMemcpyDeviceToHost), "DtoH pageable") &&
         Ok(cudaMemcpy(device, pinned, kCopyBytes, cudaMemcpyHostToDevice), "HtoD pinned") &&
         Ok(cudaMemcpy(pinned, device, kCopyBytes, cudaMemcpyDeviceToHost), "DtoH pinned");
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const bool copy = argc > 1 && std::strcmp(argv[1], "copy") == 0;
  const bool spin = argc > 1 && std::strcmp(argv[1], "long") == 0;
  const long reps = argc > 2 ? std::atol(argv[2]) : 20;
  if ((!copy && !spin) || reps <= 0) {
    std::fprintf(stderr, "usage: copy_and_long_kernel copy|long [reps=20]\n");
    return 2;
  }
  if (copy) {
    void* device = nullptr;
    void* pinned = nullptr;
    void* pageable = std::malloc(kCopyBytes);
    if (pageable == nullptr) return 1;
    std::memset(pageable, 1, kCopyBytes);  // fault the pages in before timing
    if (!Ok(cudaMalloc(&device, kCopyBytes), "cudaMalloc") ||
        !Ok(cudaMallocHost(&pinned, kCopyBytes), "cudaMallocHost") ||
        !CopyOnce(device, pageable, pinned)) {
      return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < reps; ++i) {
      if (!CopyOnce(device, pageable, pinned)) return 1;
    }
    const double ms = MsSince(start);
    cudaFreeHost(pinned);
    cudaFree(device);
    std::free(pageable);
    std::printf("copy_ms=%.3f\n", ms);
    return 0;
  }
  SpinKernel<<<1, 1>>>(1000);  // warm-up: module loading
  if (!Ok(cudaDeviceSynchronize(), "warm-up")) return 1;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < reps; ++i) {
    SpinKernel<<<1, 1>>>(kSpinNs);
    if (!Ok(cudaDeviceSynchronize(), "spin")) return 1;
  }
  std::printf("long_ms=%.3f\n", MsSince(start));
  return 0;
}
