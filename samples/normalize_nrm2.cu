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
// With --result-on-device the same loop keeps the norm on the GPU (device pointer mode, the fix
// for seed 000): nrm2 writes into device memory, a one-thread kernel turns it into 1/norm and
// cublasSscal reads that scale from device memory, so nothing holds the host inside the loop;
// the wait moves to the final cudaDeviceSynchronize. The pair of runs is what `profview diff`
// should explain (samples/traces/normalize_nrm2_*.pb).
//
// Usage: normalize_nrm2 [iterations=50] [--result-on-device]
// Prints (the same line in both modes): the vector size, iterations, and the norms nrm2 returned first and last (the last is
// 1.0000 once the vector has been normalised, i.e. from 2 iterations on).
#include <cublas_v2.h>

#include "cublas_check.cuh"
#include "sample_util.cuh"

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

// 1/norm, computed where the norm is (device pointer mode).
__global__ void InverseKernel(const float* norm, float* inverse) { *inverse = 1.0f / *norm; }

// NormalizeLoop without the read-back: every norm stays in device memory (norms[iterations]).
// Returns the first norm and sets *last_norm, read back once after the loop.
__attribute__((noinline)) float NormalizeLoopOnDevice(cublasHandle_t handle, float* x, int n,
                                                      long iterations, float* last_norm) {
  float* norms = nullptr;    // one per iteration, so the first and the last can be printed
  float* inverse = nullptr;  // the scale cublasSscal reads
  CHECK_CUDA(cudaMalloc(&norms, iterations * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&inverse, sizeof(float)));
  for (long it = 0; it < iterations; ++it) {
    SpinKernel<<<1, 1>>>(kSpinNs);
    CHECK_LAUNCH();
    CHECK_CUBLAS(cublasSnrm2(handle, n, x, 1, norms + it));
    InverseKernel<<<1, 1>>>(norms + it, inverse);
    CHECK_LAUNCH();
    CHECK_CUBLAS(cublasSscal(handle, n, inverse, x, 1));
  }
  float first_norm = 0.0f;
  CHECK_CUDA(cudaMemcpy(&first_norm, norms, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(last_norm, norms + iterations - 1, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_TRUE(first_norm > 0.0f && *last_norm > 0.0f, "nrm2 returned %f, %f", first_norm,
             *last_norm);
  CHECK_CUDA(cudaFree(inverse));
  CHECK_CUDA(cudaFree(norms));
  return first_norm;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 50;
  bool result_on_device = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--result-on-device") == 0) {
      result_on_device = true;
    } else {
      iterations = ParsePositive(argv[i], "iterations");
    }
  }

  float* x = nullptr;
  CHECK_CUDA(cudaMalloc(&x, kElements * sizeof(float)));
  FillKernel<<<1024, 256>>>(x, kElements);
  CHECK_LAUNCH();

  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  // Host pointer mode (cuBLAS's default, set explicitly): the result lands in a host float,
  // which is what makes nrm2 synchronous. Device pointer mode leaves it on the GPU.
  CHECK_CUBLAS(cublasSetPointerMode(
      handle, result_on_device ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));

  float norm = 0.0f;
  const float first_norm =
      result_on_device ? NormalizeLoopOnDevice(handle, x, kElements, iterations, &norm)
                       : NormalizeLoop(handle, x, kElements, iterations, &norm);
  CHECK_CUDA(cudaDeviceSynchronize());

  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaFree(x));
  std::printf("normalize_nrm2: elements=%d iterations=%ld first_norm=%.1f last_norm=%.4f\n",
              kElements, iterations, first_norm, norm);
  return 0;
}
