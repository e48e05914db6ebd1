// Streams that wait on the host. Each step issues a kernel, a host function that works on
// the host for a while (or a wait on a memory value the host writes), and another kernel; the host issues every step at once and then
// synchronises. The second kernel of a step cannot start before the host function has returned
// on CUDA's callback thread, so the GPU idles for as long as the function runs, though the
// program's host thread issued everything long before. Three ways to be held (the mode):
//   stream  the function and both kernels on one stream (cudaLaunchHostFunc on even steps, the
//           older cudaStreamAddCallback on odd ones);
//   event   the function on a second stream, recorded there by an event that the first stream
//           waits for (cudaStreamWaitEvent) before its second kernel;
//   legacy  the function on the legacy default stream (stream 0), which the kernels' blocking
//           stream waits for;
//   graph   a CUDA graph of kernel, host node (cudaGraphAddHostNode), kernel, launched per step;
//   memory_wait  no host function: the stream waits (cuStreamWaitValue32) for a counter in mapped
//           host memory that the host thread raises once per step, host_us apart, after issuing
//           every step.
//
// A profiler should show: the GPU idle most of the steady state, that time spent behind the host
// functions (stream, event), inside the graphs (graph) or behind the memory waits (memory_wait),
// not "launching the next work": the launches all came in the first milliseconds.
//
// Usage: host_function [steps=60] [host_us=2000] [mode=stream|event|legacy|graph|memory_wait]
// Prints: the steps, the mode, the host functions that ran (memory_wait: the counter's raises)
// and a checksum of the data (stdout).
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include <cuda.h>

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
  const char* mode = argc > 3 ? argv[3] : "stream";
  if (std::strcmp(mode, "stream") != 0 && std::strcmp(mode, "event") != 0 &&
      std::strcmp(mode, "legacy") != 0 && std::strcmp(mode, "graph") != 0 &&
      std::strcmp(mode, "memory_wait") != 0) {
    std::fprintf(stderr, "bad mode: '%s' (want stream, event, legacy, graph or memory_wait)\n",
                 mode);
    return 2;
  }
  const bool memory_wait = std::strcmp(mode, "memory_wait") == 0;
  const size_t n = size_t{1} << 24;
  float* data = nullptr;
  cudaStream_t stream, side;
  cudaEvent_t done;
  CHECK_CUDA(cudaMalloc(&data, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(data, 0, n * sizeof(float)));
  CHECK_CUDA(cudaStreamCreate(&stream));
  CHECK_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  // memory_wait's counter, in mapped host memory the device reads.
  volatile cuuint32_t* counter = nullptr;
  CUdeviceptr counter_on_device = 0;
  if (memory_wait) {
    CHECK_CUDA(cudaHostAlloc(const_cast<cuuint32_t**>(&counter), sizeof(cuuint32_t),
                             cudaHostAllocMapped));
    *counter = 0;
    CHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&counter_on_device),
                                        const_cast<cuuint32_t*>(counter), 0));
  }
  cudaGraphExec_t graph = nullptr;
  if (std::strcmp(mode, "graph") == 0) {
    // Captured from the stream: kernel, host node, kernel.
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    Scale<<<1024, 256, 0, stream>>>(data, n, 0.5f);
    CHECK_CUDA(cudaLaunchHostFunc(stream, OnHost, &work));
    Scale<<<1024, 256, 0, stream>>>(data, n, 0.5f);
    CHECK_CUDA(cudaStreamEndCapture(stream, &g));
    CHECK_CUDA(cudaGraphInstantiate(&graph, g, 0));
    CHECK_CUDA(cudaGraphDestroy(g));
  }
  for (int step = 0; step < steps; ++step) {
    if (graph != nullptr) {
      CHECK_CUDA(cudaGraphLaunch(graph, stream));
      continue;
    }
    Scale<<<1024, 256, 0, stream>>>(data, n, 0.5f);
    CHECK_LAUNCH();
    if (memory_wait) {
      const CUresult waited = cuStreamWaitValue32(stream, counter_on_device,
                                                  static_cast<cuuint32_t>(step + 1),
                                                  CU_STREAM_WAIT_VALUE_GEQ);
      if (waited != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuStreamWaitValue32 failed: %d\n", static_cast<int>(waited));
        return 1;
      }
    } else if (std::strcmp(mode, "event") == 0) {
      CHECK_CUDA(cudaLaunchHostFunc(side, OnHost, &work));
      CHECK_CUDA(cudaEventRecord(done, side));
      CHECK_CUDA(cudaStreamWaitEvent(stream, done, 0));
    } else if (std::strcmp(mode, "legacy") == 0) {
      CHECK_CUDA(cudaLaunchHostFunc(nullptr, OnHost, &work));
    } else if (step % 2 == 0) {
      CHECK_CUDA(cudaLaunchHostFunc(stream, OnHost, &work));
    } else {
      CHECK_CUDA(cudaStreamAddCallback(stream, OnStream, &work, 0));
    }
    Scale<<<1024, 256, 0, stream>>>(data, n, 0.5f);
    CHECK_LAUNCH();
  }
  for (int step = 0; memory_wait && step < steps; ++step) {  // the host's side of the waits
    usleep(static_cast<useconds_t>(work.host_us));
    *counter = static_cast<cuuint32_t>(step + 1);
    work.ran.fetch_add(1);
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaStreamSynchronize(side));
  std::vector<float> back(1024);
  CHECK_CUDA(cudaMemcpy(back.data(), data, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : back) sum += v;
  std::printf("host_function: steps=%d mode=%s host_functions=%d checksum=%.3f\n", steps, mode,
              work.ran.load(), sum);
  if (graph != nullptr) CHECK_CUDA(cudaGraphExecDestroy(graph));
  if (memory_wait) CHECK_CUDA(cudaFreeHost(const_cast<cuuint32_t*>(counter)));
  CHECK_CUDA(cudaEventDestroy(done));
  CHECK_CUDA(cudaStreamDestroy(side));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(data));
  return 0;
}
