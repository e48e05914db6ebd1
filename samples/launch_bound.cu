// Reproduces seed 002, puzzler 3 (a loop of tiny kernels leaves the GPU 90% idle: launch
// overhead, not work, sets the pace). Launches a kernel that increments 32 ints `count` times,
// then synchronises once. With --graph, 100 launches are captured into a CUDA graph that is
// launched count/100 times (rounded up), the usual cure.
//
// A profiler should show: thousands of ~2 us kernels separated by gaps, host launch API time
// about equal to the GPU time (launch-bound); with --graph, far fewer launch API calls, the
// kernels tagged with the graph's id and packed closer together.
//
// Usage: launch_bound [count=20000] [--graph]
// Prints: the mode, the number of kernels that ran and the final counter value (== launches).
#include <cstring>

#include "sample_util.cuh"

namespace {

constexpr int kElements = 32;
constexpr long kLaunchesPerGraph = 100;

__global__ void IncrementKernel(int* values) { values[threadIdx.x] += 1; }

}  // namespace

int main(int argc, char** argv) {
  long count = 20000;
  bool graph = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--graph") == 0) {
      graph = true;
    } else {
      count = ParsePositive(argv[i], "count");
    }
  }

  int* values = nullptr;
  CHECK_CUDA(cudaMalloc(&values, kElements * sizeof(int)));
  CHECK_CUDA(cudaMemset(values, 0, kElements * sizeof(int)));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  long launches = 0;
  if (!graph) {
    for (long i = 0; i < count; ++i) {
      IncrementKernel<<<1, kElements, 0, stream>>>(values);
      CHECK_LAUNCH();
    }
    launches = count;
  } else {
    cudaGraph_t captured;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (long i = 0; i < kLaunchesPerGraph; ++i) {
      IncrementKernel<<<1, kElements, 0, stream>>>(values);
      CHECK_LAUNCH();
    }
    CHECK_CUDA(cudaStreamEndCapture(stream, &captured));
    CHECK_CUDA(cudaGraphInstantiate(&exec, captured, 0));
    const long graph_launches = (count + kLaunchesPerGraph - 1) / kLaunchesPerGraph;
    for (long i = 0; i < graph_launches; ++i) CHECK_CUDA(cudaGraphLaunch(exec, stream));
    launches = graph_launches * kLaunchesPerGraph;
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(captured));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));

  int host[kElements];
  CHECK_CUDA(cudaMemcpy(host, values, sizeof(host), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kElements; ++i) {
    CHECK_TRUE(host[i] == launches, "values[%d] = %d, want %ld", i, host[i], launches);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(values));
  std::printf("launch_bound: mode=%s kernels=%ld value=%d\n", graph ? "graph" : "stream", launches,
              host[0]);
  return 0;
}
