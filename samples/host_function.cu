// A stream that waits on host functions. Each step issues a kernel, a host function that works
// on the host for a while (cudaLaunchHostFunc on even steps, the older cudaStreamAddCallback on
// odd ones), and another kernel, all on one stream; the host issues every step at once and then
// synchronises. The second kernel of a step cannot start before the host function has returned
// on CUDA's callback thread, so the GPU idles for as long as the function runs, though the
// program's host thread issued everything long before.
//
// A profiler should show: the GPU idle most of the steady state, that time spent behind the host
// functions (not "launching the next work": the launches all came in the first milliseconds),
// and the advice to keep host functions short or move their work off the stream.
//
// Usage: host_function [steps=60] [host_us=2000]
// Prints: the steps, the host functions that ran and a checksum of the data (stdout).
#include <unistd.h>

#include <atomic>
#include <vector>

#include "sample_util.cuh"

namespace {

__global__ void Scale(float* data, size_t n, float factor) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    data[i] = data[i] * factor + 1.0f;
  }
}

struct HostWork {
  long host_us = 0;
  std::atomic<int> ran{0};
};

void CUDART_CB OnHost(void* arg) {  // cudaLaunchHostFunc's kind
  auto* work = static_cast<HostWork*>(arg);
  usleep(static_cast<useconds_t>(work->host_us));
  work->ran.fetch_add(1);
}

void CUDART_CB OnStream(cudaStream_t, cudaError_t, void* arg) {  // cudaStreamAddCallback's kind
  OnHost(arg);
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? static_cast<int>(ParsePositive(argv[1], "steps")) : 60;
  HostWork work;
  work.host_us = argc > 2 ? ParsePositive(argv[2], "host_us") : 2000;
  const size_t n = size_t{1} << 24;
  float* data = nullptr;
  cudaStream_t stream;
  CHECK_CUDA(cudaMalloc(&data, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(data, 0, n * sizeof(float)));
  CHECK_CUDA(cudaStreamCreate(&stream));
  for (int step = 0; step < steps; ++step) {
    Scale<<<1024, 256, 0, stream>>>(data, n, 0.5f);
    CHECK_LAUNCH();
    if (step % 2 == 0) {
      CHECK_CUDA(cudaLaunchHostFunc(stream, OnHost, &work));
    } else {
      CHECK_CUDA(cudaStreamAddCallback(stream, OnStream, &work, 0));
    }
    Scale<<<1024, 256, 0, stream>>>(data, n, 0.5f);
    CHECK_LAUNCH();
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> back(1024);
  CHECK_CUDA(cudaMemcpy(back.data(), data, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : back) sum += v;
  std::printf("host_function: steps=%d host_functions=%d checksum=%.3f\n", steps,
              work.ran.load(), sum);
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(data));
  return 0;
}
