// A cuBLAS program of the kind libprof is judged on: SGEMMs on two streams joined by an event each
// step (the second stream's GEMM reads the first's result), a host function per step, a CUDA
// graph of five GEMMs captured and replayed ten times, a pageable upload at the start and a
// pageable read-back at the end.
//
// A profiler should show: start-up's context creation inside the first cudaMalloc (the runtime
// creates its context there; it took 128-198 ms of that call on an H200), not an allocation;
// the final cudaStreamSynchronize of the second stream waiting for 40 GEMMs, half of them on the
// first stream through the event waits; the synchronisation after the replays waiting for the
// ten graph launches; both 64 MiB pageable copies as synchronous copies. The two streams never
// overlap: each step's second GEMM depends on its first.
//
// Usage: cublas_two_streams [n=4096]
// Prints: n, how many host functions ran (20) and a checksum of the result.
#include <cublas_v2.h>

#include <vector>

#include "cublas_check.cuh"
#include "sample_util.cuh"

namespace {

constexpr int kSteps = 20;
constexpr int kGraphGemms = 5;
constexpr int kReplays = 10;

void CUDART_CB CountCall(void* count) { ++*static_cast<int*>(count); }

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? static_cast<int>(ParsePositive(argv[1], "n")) : 4096;
  const size_t bytes = size_t(n) * n * sizeof(float);
  std::vector<float> host(size_t(n) * n);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i % 7) * 0.01f;
  float *a, *b, *c, *d;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMalloc(&c, bytes));
  CHECK_CUDA(cudaMalloc(&d, bytes));
  CHECK_CUDA(cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice));  // pageable
  CHECK_CUDA(cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice));
  cudaStream_t first, second;
  CHECK_CUDA(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
  cublasHandle_t on_first, on_second;
  CHECK_CUBLAS(cublasCreate(&on_first));
  CHECK_CUBLAS(cublasCreate(&on_second));
  CHECK_CUBLAS(cublasSetStream(on_first, first));
  CHECK_CUBLAS(cublasSetStream(on_second, second));
  cudaEvent_t done;
  CHECK_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  const float one = 1.f, zero = 0.f;
  int host_calls = 0;
  for (int step = 0; step < kSteps; ++step) {
    CHECK_CUBLAS(cublasSgemm(on_first, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero,
                             c, n));
    CHECK_CUDA(cudaEventRecord(done, first));
    CHECK_CUDA(cudaStreamWaitEvent(second, done, 0));
    CHECK_CUBLAS(cublasSgemm(on_second, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, c, n, b, n,
                             &zero, d, n));
    CHECK_CUDA(cudaLaunchHostFunc(second, CountCall, &host_calls));
  }
  CHECK_CUDA(cudaStreamSynchronize(second));
  cudaGraph_t graph;
  cudaGraphExec_t replay;
  CHECK_CUDA(cudaStreamBeginCapture(first, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < kGraphGemms; ++k) {
    CHECK_CUBLAS(cublasSgemm(on_first, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero,
                             c, n));
  }
  CHECK_CUDA(cudaStreamEndCapture(first, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&replay, graph, 0));
  for (int r = 0; r < kReplays; ++r) CHECK_CUDA(cudaGraphLaunch(replay, first));
  CHECK_CUDA(cudaStreamSynchronize(first));
  CHECK_CUDA(cudaMemcpy(host.data(), d, bytes, cudaMemcpyDeviceToHost));  // pageable
  double checksum = 0;
  for (size_t i = 0; i < host.size(); i += 4099) checksum += host[i];
  std::printf("cublas_two_streams: n=%d host_fn_calls=%d checksum=%.6e\n", n, host_calls,
              checksum);
  return 0;
}
