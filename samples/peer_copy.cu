// Copies between two GPUs with and without peer access. Without it (cudaDeviceEnablePeerAccess
// not called, or not possible) the driver stages each copy through host memory: the call holds
// the host for the whole copy, and CUPTI records a DtoH on the source GPU and an HtoD on the
// destination, each with the copy's bytes and only its last piece's time. With peer access the
// copy is one PtoP record and the call returns at once.
//
// A profiler should show: a staged-peer-copy finding per staged copy, naming both GPUs and the
// call's host time (7.85 ms for 256 MiB on two H200s, 34 GB/s), and none for the direct copies
// (0.68 ms each over NVLink there).
//
// Usage: peer_copy [mib=256] [copies=5]
// Prints: "needs 2 GPUs" and exits 0 with fewer; else the size, the copies, whether peer access
// was possible and a checksum of what arrived on GPU 1 (stdout).
#include <vector>

#include "sample_util.cuh"

namespace {

__global__ void Fill(float* data, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    data[i] = static_cast<float>(i % 7);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? ParsePositive(argv[1], "mib") : 256;
  const int copies = argc > 2 ? static_cast<int>(ParsePositive(argv[2], "copies")) : 5;
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    std::printf("peer_copy: needs 2 GPUs, found %d\n", devices);
    return 0;
  }
  const size_t n = mib << 18;  // floats
  float *src = nullptr, *dst = nullptr;
  cudaStream_t stream;
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaMalloc(&dst, n * sizeof(float)));
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaMalloc(&src, n * sizeof(float)));
  CHECK_CUDA(cudaStreamCreate(&stream));
  Fill<<<1024, 256, 0, stream>>>(src, n);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(stream));

  // Staged: no peer access yet.
  for (int i = 0; i < copies; ++i) {
    CHECK_CUDA(cudaMemcpyPeerAsync(dst, 1, src, 0, n * sizeof(float), stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));

  // Direct, where the GPUs can reach each other.
  int can_0_to_1 = 0, can_1_to_0 = 0;
  CHECK_CUDA(cudaDeviceCanAccessPeer(&can_0_to_1, 0, 1));
  CHECK_CUDA(cudaDeviceCanAccessPeer(&can_1_to_0, 1, 0));
  const bool peer = can_0_to_1 && can_1_to_0;
  if (peer) {
    CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 0));
    CHECK_CUDA(cudaSetDevice(1));
    CHECK_CUDA(cudaDeviceEnablePeerAccess(0, 0));
    CHECK_CUDA(cudaSetDevice(0));
    for (int i = 0; i < copies; ++i) {
      CHECK_CUDA(cudaMemcpyPeerAsync(dst, 1, src, 0, n * sizeof(float), stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }

  std::vector<float> back(1024);
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaMemcpy(back.data(), dst, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : back) sum += v;
  std::printf("peer_copy: mib=%zu copies=%d peer_access=%s checksum=%.1f\n", mib, copies,
              peer ? "yes" : "no", sum);
  return 0;
}
