// Exercises libprof's capture ranges (LIBPROF_CAPTURE_RANGE, LIBPROF_DELAY_MS/_DURATION_MS and
// collect.sh's --capture-range, --delay, --duration): four phases, each with its own kernel, so a
// trace shows which phases were recorded.
//   1. OutsideKernel x100, then 1.5 s of host sleep;
//   2. cudaProfilerStart, ProfiledKernel x50, cudaProfilerStop;
//   3. inside NVTX range "capture-me": NvtxKernel x30;
//   4. LateKernel x100.
// A profiler should record: with cudaProfilerApi, the 50 ProfiledKernel only; with
// nvtx:capture-me, the 30 NvtxKernel only; with a 1 s delay, phases 2-4; with a 1 s duration,
// phase 1 only (CUDA starts well within the first second).
//
// Usage: capture_ranges
// Prints: the number of kernels of each phase and the final counter.
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <thread>

#include "sample_util.cuh"

namespace {

constexpr int kElements = 32;

__global__ void OutsideKernel(int* v) { v[threadIdx.x] += 1; }
__global__ void ProfiledKernel(int* v) { v[threadIdx.x] += 1; }
__global__ void NvtxKernel(int* v) { v[threadIdx.x] += 1; }
__global__ void LateKernel(int* v) { v[threadIdx.x] += 1; }

template <typename Kernel>
void LaunchAndWait(Kernel kernel, int count, int* values) {
  for (int i = 0; i < count; ++i) {
    kernel<<<1, kElements>>>(values);
    CHECK_LAUNCH();
  }
  CHECK_CUDA(cudaDeviceSynchronize());
}

}  // namespace

int main() {
  int* values = nullptr;
  CHECK_CUDA(cudaMalloc(&values, kElements * sizeof(int)));
  CHECK_CUDA(cudaMemset(values, 0, kElements * sizeof(int)));

  LaunchAndWait(OutsideKernel, 100, values);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));

  CHECK_CUDA(cudaProfilerStart());
  LaunchAndWait(ProfiledKernel, 50, values);
  CHECK_CUDA(cudaProfilerStop());

  nvtxRangePushA("capture-me");
  LaunchAndWait(NvtxKernel, 30, values);
  nvtxRangePop();

  LaunchAndWait(LateKernel, 100, values);

  int host[kElements];
  CHECK_CUDA(cudaMemcpy(host, values, sizeof(host), cudaMemcpyDeviceToHost));
  CHECK_TRUE(host[0] == 280, "counter %d, want 280", host[0]);
  CHECK_CUDA(cudaFree(values));
  std::printf("capture_ranges: outside=100 profiled=50 nvtx=30 late=100 value=%d\n", host[0]);
  return 0;
}
