// Reproduces seeds 002 (puzzler 2: cudaMalloc/cudaFree in a loop synchronise and expose launch
// overhead; PyTorch's caching allocator avoids them) and 004 (CUDA.jl's memory management:
// stream-ordered pools, unified memory). Four phases:
//   1. `iterations` times: cudaMalloc, a fill kernel, cudaFree of the same size (16 MiB);
//   2. the same with cudaMallocAsync / cudaFreeAsync on a stream (served from the pool);
//   3. a 1 MiB cudaMallocManaged buffer written by the host, a kernel, then the host again;
//   4. cudaMemset and cudaMemsetAsync on a device buffer.
//
// A profiler should show: one allocation and one release per iteration in phase 1, with
// cudaFree waiting for the kernel before it (the GPU idles between iterations); stream-ordered
// (async) allocations in phase 2 that do not block; a managed allocation; two memsets.
//
// Usage: alloc_loop [iterations=200] [mib=16]
// Prints: the shape of the run and one checked result per phase.
#include "sample_util.cuh"

namespace {

constexpr size_t kManagedBytes = 1 << 20;

// Fills `n` ints with `value`; the first thread also adds `value` to *total, so the phases can
// check that every kernel ran.
__global__ void FillKernel(int* data, size_t n, int value, unsigned long long* total) {
  const size_t first = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (size_t i = first; i < n; i += size_t{gridDim.x} * blockDim.x) data[i] = value;
  if (first == 0) atomicAdd(total, static_cast<unsigned long long>(value));
}

__global__ void IncrementKernel(int* data, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] += 1;
  }
}

unsigned long long ReadTotal(unsigned long long* total) {
  unsigned long long value = 0;
  CHECK_CUDA(cudaMemcpy(&value, total, sizeof(value), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemset(total, 0, sizeof(value)));
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? ParsePositive(argv[1], "iterations") : 200;
  const long mib = argc > 2 ? ParsePositive(argv[2], "mib") : 16;
  const size_t bytes = static_cast<size_t>(mib) << 20;
  const size_t n = bytes / sizeof(int);
  const unsigned long long expected_total =
      static_cast<unsigned long long>(iterations) * (iterations + 1) / 2;

  unsigned long long* total = nullptr;
  CHECK_CUDA(cudaMalloc(&total, sizeof(*total)));
  CHECK_CUDA(cudaMemset(total, 0, sizeof(*total)));

  // Phase 1: synchronous allocations.
  for (long i = 1; i <= iterations; ++i) {
    int* data = nullptr;
    CHECK_CUDA(cudaMalloc(&data, bytes));
    FillKernel<<<512, 256>>>(data, n, static_cast<int>(i), total);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaFree(data));
  }
  const unsigned long long sync_total = ReadTotal(total);
  CHECK_TRUE(sync_total == expected_total, "sync total %llu, want %llu", sync_total,
             expected_total);

  // Phase 2: stream-ordered allocations from the device's default pool.
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (long i = 1; i <= iterations; ++i) {
    int* data = nullptr;
    CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&data), bytes, stream));
    FillKernel<<<512, 256, 0, stream>>>(data, n, static_cast<int>(i), total);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaFreeAsync(data, stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const unsigned long long async_total = ReadTotal(total);
  CHECK_TRUE(async_total == expected_total, "async total %llu, want %llu", async_total,
             expected_total);

  // Phase 3: unified memory touched by the host, the GPU, the host.
  int* managed = nullptr;
  const size_t managed_n = kManagedBytes / sizeof(int);
  CHECK_CUDA(cudaMallocManaged(&managed, kManagedBytes));
  for (size_t i = 0; i < managed_n; ++i) managed[i] = static_cast<int>(i % 1000);
  IncrementKernel<<<64, 256>>>(managed, managed_n);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaDeviceSynchronize());
  long long managed_sum = 0;
  for (size_t i = 0; i < managed_n; ++i) managed_sum += managed[i];
  CHECK_CUDA(cudaFree(managed));

  // Phase 4: memsets, synchronous and stream-ordered.
  int* target = nullptr;
  CHECK_CUDA(cudaMalloc(&target, bytes));
  CHECK_CUDA(cudaMemset(target, 0x01, bytes));
  CHECK_CUDA(cudaMemsetAsync(target, 0x02, bytes / 2, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  int edges[2];
  CHECK_CUDA(cudaMemcpy(&edges[0], target, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&edges[1], target + n - 1, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_TRUE(edges[0] == 0x02020202 && edges[1] == 0x01010101, "memset gave %08x %08x", edges[0],
             edges[1]);

  CHECK_CUDA(cudaFree(target));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(total));
  std::printf(
      "alloc_loop: iterations=%ld bytes=%zu sync_total=%llu async_total=%llu managed_sum=%lld "
      "memset=%08x/%08x\n",
      iterations, bytes, sync_total, async_total, managed_sum, edges[0], edges[1]);
  return 0;
}
