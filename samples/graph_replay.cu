// CUDA graph replay as PyTorch's torch.cuda.graphs and CUDA.jl's graph capture use it: a step of
// 8 kernels is captured into a graph once, then replayed `count` times, each replay preceded by a
// device-to-device copy of fresh input into the graph's static input buffer and followed by a
// 4-byte read-back and a stream synchronisation.
//
// A profiler should show: one cudaGraphLaunch per replay and its kernels one per graph node
// (graph id set), each copy before its replay's kernels on the stream, and the host blocked in
// cudaStreamSynchronize behind every replay. CUPTI 13.0 ends the first copy, issued before the
// first launch, tens of milliseconds late; profview ends it where the graph's first kernel
// starts (docs/capture-notes.md, "Records").
//
// Usage: graph_replay [count=200]
// Prints: the number of replays and the value read back after the last one.
#include "sample_util.cuh"

namespace {

constexpr int kElements = 1 << 17;  // 512 KiB of floats, the copy's size
constexpr int kKernelsPerStep = 8;

__global__ void StepKernel(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

}  // namespace

int main(int argc, char** argv) {
  const long count = argc > 1 ? ParsePositive(argv[1], "count") : 200;

  float *input = nullptr, *fresh = nullptr, *result = nullptr;
  CHECK_CUDA(cudaMalloc(&input, kElements * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&fresh, kElements * sizeof(float)));
  CHECK_CUDA(cudaMallocHost(&result, sizeof(float)));
  CHECK_CUDA(cudaMemset(fresh, 0, kElements * sizeof(float)));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaGraph_t captured;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < kKernelsPerStep; ++k) {
    StepKernel<<<kElements / 256, 256, 0, stream>>>(input, kElements);
    CHECK_LAUNCH();
  }
  CHECK_CUDA(cudaStreamEndCapture(stream, &captured));
  CHECK_CUDA(cudaGraphInstantiate(&exec, captured, 0));

  for (long i = 0; i < count; ++i) {
    CHECK_CUDA(cudaMemcpyAsync(input, fresh, kElements * sizeof(float), cudaMemcpyDeviceToDevice,
                               stream));
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaMemcpyAsync(result, input, sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  // Each replay runs 8 steps x -> x/2 + 1 from 0: 2 - 2^-7.
  std::printf("graph_replay: %ld replays, x[0] = %.6f\n", count, result[0]);

  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(captured));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFreeHost(result));
  CHECK_CUDA(cudaFree(fresh));
  CHECK_CUDA(cudaFree(input));
  return 0;
}
