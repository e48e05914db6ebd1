// Reproduces seed 000 (CUDA.jl's normalize! spending 60% of host time in cudaMemcpyAsync).
// cublasSnrm2 in host pointer mode must bring its scalar result to the host, so its copy waits
// for every kernel queued before it on the stream; here a ~1 ms SpinKernel precedes each nrm2,
// followed by cublasSscal by 1/norm.
//
// A profiler should show, per iteration: a copy API call (cudaMemcpyAsync or a cuMemcpy*) that
// holds the host ~1 ms while its DtoH copy takes ~2 us on the GPU, the wait attributed to
// SpinKernel and the nrm2 kernel before it, and a small GPU idle gap after each copy.
//
// The loop lives in NormalizeLoop, a function with internal linkage (no dynamic symbol), so that
// libprof's call stacks name it from the executable's .symtab: the blocking copies should read
// "cudaMemcpyAsync ← cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)".
//
// Usage: normalize_nrm2 [iterations=50]
// Prints: the vector size, iterations, and the norms nrm2 returned first and last (the last is
// 1.0000 once the vector has been normalised, i.e. from 2 iterations on).
#include <cublas_v2.h>

#include "sample_util.cuh"

#define CHECK_CUBLAS(call)                                                      \
  do {                                                                          \
    cublasStatus_t cublas_status_ = (call);                                     \
    if (cublas_status_ != CUBLAS_STATUS_SUCCESS) {                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cublasGetStatusString(cublas_status_));                      \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

namespace {

constexpr int kElements = 4 << 20;       // 4M floats, 16 MiB
constexpr uint64_t kSpinNs = 1'000'000;  // 1 ms before each nrm2

__global__ void FillKernel(float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    x[i] = 1.0f + static_cast<float>(i % 7);
  }
}

// Normalises x (n floats) `iterations` times; returns the first norm and sets *last_norm.
__attribute__((noinline)) float NormalizeLoop(cublasHandle_t handle, float* x, int n,
                                              long iterations, float* last_norm) {
  float first_norm = 0.0f;
  float norm = 0.0f;
  for (long it = 0; it < iterations; ++it) {
    SpinKernel<<<1, 1>>>(kSpinNs);  // the legacy default stream, as the cuBLAS handle uses
    CHECK_LAUNCH();
    CHECK_CUBLAS(cublasSnrm2(handle, n, x, 1, &norm));
    CHECK_TRUE(norm > 0.0f, "nrm2 returned %f", norm);
    if (it == 0) first_norm = norm;
    const float inverse = 1.0f / norm;
    CHECK_CUBLAS(cublasSscal(handle, n, &inverse, x, 1));
  }
  *last_norm = norm;
  return first_norm;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? ParsePositive(argv[1], "iterations") : 50;

  float* x = nullptr;
  CHECK_CUDA(cudaMalloc(&x, kElements * sizeof(float)));
  FillKernel<<<1024, 256>>>(x, kElements);
  CHECK_LAUNCH();

  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  // Host pointer mode (cuBLAS's default, set explicitly): the result lands in a host float,
  // which is what makes nrm2 synchronous.
  CHECK_CUBLAS(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));

  float norm = 0.0f;
  const float first_norm = NormalizeLoop(handle, x, kElements, iterations, &norm);
  CHECK_CUDA(cudaDeviceSynchronize());

  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaFree(x));
  std::printf("normalize_nrm2: elements=%d iterations=%ld first_norm=%.1f last_norm=%.4f\n",
              kElements, iterations, first_norm, norm);
  return 0;
}
