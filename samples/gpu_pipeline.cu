// A pipeline over two GPUs that takes turns: each step GPU 1 runs a long stage and records an
// event, and GPU 0's stream waits for it (cudaStreamWaitEvent across devices) before its own
// short stage. The host issues every step at once and then synchronises, so GPU 0 idles while
// GPU 1 works, not while the host launches.
//
// A profiler should show: GPU 0 idle most of its steady state, that time waiting for the other
// GPU (the event recorded there), not launch overhead.
//
// Usage: gpu_pipeline [steps=40] [reps=4000]
// Prints: "needs 2 GPUs" and exits 0 with fewer; else the steps and a checksum (stdout).
#include <vector>

#include "sample_util.cuh"

namespace {

__global__ void Stage(float* data, size_t n, int reps) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = data[i];
    for (int k = 0; k < reps; ++k) v = v * 0.999f + 1.0f;
    data[i] = v;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? static_cast<int>(ParsePositive(argv[1], "steps")) : 40;
  const int reps = argc > 2 ? static_cast<int>(ParsePositive(argv[2], "reps")) : 4000;
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    std::printf("gpu_pipeline: needs 2 GPUs, found %d\n", devices);
    return 0;
  }
  const size_t n = size_t{1} << 20;
  float *first = nullptr, *second = nullptr;
  cudaStream_t on0, on1;
  std::vector<cudaEvent_t> done(static_cast<size_t>(steps));
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaMalloc(&second, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(second, 0, n * sizeof(float)));
  CHECK_CUDA(cudaStreamCreate(&on1));
  for (cudaEvent_t& e : done) CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaMalloc(&first, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(first, 0, n * sizeof(float)));
  CHECK_CUDA(cudaStreamCreate(&on0));
  for (int step = 0; step < steps; ++step) {
    CHECK_CUDA(cudaSetDevice(1));
    Stage<<<1024, 256, 0, on1>>>(second, n, reps);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaEventRecord(done[static_cast<size_t>(step)], on1));
    CHECK_CUDA(cudaSetDevice(0));
    CHECK_CUDA(cudaStreamWaitEvent(on0, done[static_cast<size_t>(step)], 0));
    Stage<<<1024, 256, 0, on0>>>(first, n, 20);
    CHECK_LAUNCH();
  }
  CHECK_CUDA(cudaStreamSynchronize(on0));
  std::vector<float> back(1024);
  CHECK_CUDA(cudaMemcpy(back.data(), first, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : back) sum += v;
  std::printf("gpu_pipeline: steps=%d checksum=%.3f\n", steps, sum);
  for (cudaEvent_t e : done) CHECK_CUDA(cudaEventDestroy(e));
  CHECK_CUDA(cudaStreamDestroy(on0));
  CHECK_CUDA(cudaFree(first));
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaStreamDestroy(on1));
  CHECK_CUDA(cudaFree(second));
  return 0;
}
