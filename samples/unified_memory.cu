// Reproduces seed 004 (CUDA.jl 5.4: unified memory that CPU code iterates over): managed memory
// touched by the host, then by a kernel, then read back by the host, twice:
//   1. faulting:   the kernel's accesses fault the pages over to the GPU (GPU page-fault groups,
//                  host→device migrations), the host's read-back faults them back (CPU page
//                  faults, device→host migrations);
//   2. prefetched: the same, with cudaMemPrefetchAsync to the GPU before the kernel and back to
//                  the host before the read-back: the migrations happen in bulk, with far fewer
//                  faults.
// `none` instead runs the kernel on plain device memory (cudaMalloc + cudaMemcpy): a program
// with no managed memory, which must produce no unified-memory record.
//
// A profiler should show: for phase 1, at least `mib` MiB migrated host→device during the
// kernel in many GPU fault groups, and CPU faults on the read-back; for phase 2 fewer faults.
//
// Never asks for more than a quarter of the free device memory (the size is reduced, and said).
// Usage: unified_memory [mib=256] [both|fault|prefetch|none]
// Prints: the size used and one checked sum per phase.
#include <string>

#include "sample_util.cuh"

namespace {

__global__ void IncrementKernel(int* data, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] += 1;
  }
}

// Host touch, kernel, host read-back on `bytes` of managed memory; returns the checked sum.
long long ManagedRound(size_t bytes, bool prefetch, int device, cudaStream_t stream) {
  const size_t n = bytes / sizeof(int);
  int* data = nullptr;
  CHECK_CUDA(cudaMallocManaged(&data, bytes));
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<int>(i % 1000);
  if (prefetch) {
    cudaMemLocation gpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = device;
    CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, gpu, 0, stream));
  }
  IncrementKernel<<<1024, 256, 0, stream>>>(data, n);
  CHECK_LAUNCH();
  if (prefetch) {
    cudaMemLocation host{};
    host.type = cudaMemLocationTypeHost;
    CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, host, 0, stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  long long sum = 0;
  for (size_t i = 0; i < n; ++i) sum += data[i];
  CHECK_CUDA(cudaFree(data));
  return sum;
}

long long DeviceRound(size_t bytes, cudaStream_t stream) {
  const size_t n = bytes / sizeof(int);
  int* host = static_cast<int*>(std::malloc(bytes));
  CHECK_TRUE(host != nullptr, "out of host memory");
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i % 1000);
  int* data = nullptr;
  CHECK_CUDA(cudaMalloc(&data, bytes));
  CHECK_CUDA(cudaMemcpy(data, host, bytes, cudaMemcpyHostToDevice));
  IncrementKernel<<<1024, 256, 0, stream>>>(data, n);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaMemcpy(host, data, bytes, cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (size_t i = 0; i < n; ++i) sum += host[i];
  CHECK_CUDA(cudaFree(data));
  std::free(host);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  long mib = argc > 1 ? ParsePositive(argv[1], "mib") : 256;
  const std::string mode = argc > 2 ? argv[2] : "both";
  CHECK_TRUE(mode == "both" || mode == "fault" || mode == "prefetch" || mode == "none",
             "mode must be both, fault, prefetch or none, not %s", mode.c_str());
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  size_t free_bytes = 0, total_bytes = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const long most = static_cast<long>((free_bytes / 4) >> 20);
  if (mib > most) {
    std::fprintf(stderr, "unified_memory: %ld MiB asked, %ld MiB free: using %ld MiB\n", mib,
                 static_cast<long>(free_bytes >> 20), most);
    mib = most;
  }
  CHECK_TRUE(mib > 0, "no device memory free");
  const size_t bytes = static_cast<size_t>(mib) << 20;
  const size_t n = bytes / sizeof(int);
  // Each element i holds i % 1000, plus 1 from the kernel.
  long long expected = 0;
  for (size_t i = 0; i < n; ++i) expected += static_cast<long long>(i % 1000) + 1;

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("unified_memory: mib=%ld mode=%s", mib, mode.c_str());
  if (mode == "none") {
    const long long sum = DeviceRound(bytes, stream);
    CHECK_TRUE(sum == expected, "device sum %lld, want %lld", sum, expected);
    std::printf(" device_sum=%lld", sum);
  }
  if (mode == "both" || mode == "fault") {
    const long long sum = ManagedRound(bytes, /*prefetch=*/false, device, stream);
    CHECK_TRUE(sum == expected, "faulting sum %lld, want %lld", sum, expected);
    std::printf(" faulting_sum=%lld", sum);
  }
  if (mode == "both" || mode == "prefetch") {
    const long long sum = ManagedRound(bytes, /*prefetch=*/true, device, stream);
    CHECK_TRUE(sum == expected, "prefetched sum %lld, want %lld", sum, expected);
    std::printf(" prefetched_sum=%lld", sum);
  }
  std::printf("\n");
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
