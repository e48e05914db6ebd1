// Reproduces seed 001 (NVIDIA's "How to Overlap Data Transfers"): a pinned buffer processed in
// chunks, each chunk copied HtoD, transformed by a kernel and copied back DtoH, on 4 streams.
//   --order per-chunk  for each chunk: H2D, kernel, D2H on its stream (the blog's version 1)
//   --order by-stage   all H2D, then all kernels, then all D2H (version 2)
//   --order serial     everything on the legacy default stream, no overlap
// Streams 0 and 1 are created with default flags, 2 and 3 with cudaStreamNonBlocking, so that a
// trace shows both stream types.
//
// A profiler should show: copies and kernels of different streams overlapping in time for
// per-chunk and by-stage, one stream and no overlap for serial; HtoD and DtoH copies overlapping
// each other only where the GPU has two copy engines.
//
// Usage: stream_overlap [--order per-chunk|by-stage|serial] [mib=64]
// Prints: the order, the shape of the work and a checksum of the results (spot-checked on the
// host; the same for every order); the elapsed GPU time goes to stderr.
#include <cstring>
#include <string>

#include "sample_util.cuh"

namespace {

constexpr int kStreams = 4;
constexpr int kChunks = 8;  // chunk c runs on stream c % kStreams
// xorshift32 rounds per element, so that a chunk's kernel takes about as long as its copies:
// ~0.16 ms per 8 MiB chunk on an H100, whose pinned copies run at ~55 GB/s (~0.15 ms a chunk).
// Measured: serial 4.0 ms, per-chunk 1.8 ms, by-stage 3.3 ms. Not an LCG: nvcc folds an LCG
// loop into one multiply-add.
constexpr int kRounds = 256;
constexpr size_t kVerifyStride = 1021;  // the host recomputes every 1021st element

__host__ __device__ uint32_t Transform(uint32_t v) {
  v += 0x9E3779B9u;  // xorshift maps 0 to 0
  for (int k = 0; k < kRounds; ++k) {
    v ^= v << 13;
    v ^= v >> 17;
    v ^= v << 5;
  }
  return v;
}

__global__ void TransformKernel(const uint32_t* in, uint32_t* out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = Transform(in[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string order = "per-chunk";
  long mib = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--order") == 0 && i + 1 < argc) {
      order = argv[++i];
    } else {
      mib = ParsePositive(argv[i], "mib");
    }
  }
  if (order != "per-chunk" && order != "by-stage" && order != "serial") {
    std::fprintf(stderr, "bad --order '%s' (per-chunk, by-stage or serial)\n", order.c_str());
    return 2;
  }

  const size_t n = (static_cast<size_t>(mib) << 20) / sizeof(uint32_t) / kChunks * kChunks;
  const size_t chunk = n / kChunks;
  const size_t chunk_bytes = chunk * sizeof(uint32_t);
  uint32_t *host_in, *host_out, *dev_in, *dev_out;
  CHECK_CUDA(cudaMallocHost(&host_in, n * sizeof(uint32_t)));
  CHECK_CUDA(cudaMallocHost(&host_out, n * sizeof(uint32_t)));
  CHECK_CUDA(cudaMalloc(&dev_in, n * sizeof(uint32_t)));
  CHECK_CUDA(cudaMalloc(&dev_out, n * sizeof(uint32_t)));
  for (size_t i = 0; i < n; ++i) host_in[i] = static_cast<uint32_t>(i);
  std::memset(host_out, 0, n * sizeof(uint32_t));

  cudaStream_t streams[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    CHECK_CUDA(
        cudaStreamCreateWithFlags(&streams[s], s < 2 ? cudaStreamDefault : cudaStreamNonBlocking));
  }
  auto stream_of = [&](int c) {
    return order == "serial" ? cudaStream_t{0} : streams[c % kStreams];
  };
  auto h2d = [&](int c) {
    CHECK_CUDA(cudaMemcpyAsync(dev_in + c * chunk, host_in + c * chunk, chunk_bytes,
                               cudaMemcpyHostToDevice, stream_of(c)));
  };
  auto kernel = [&](int c) {
    TransformKernel<<<256, 256, 0, stream_of(c)>>>(dev_in + c * chunk, dev_out + c * chunk, chunk);
    CHECK_LAUNCH();
  };
  auto d2h = [&](int c) {
    CHECK_CUDA(cudaMemcpyAsync(host_out + c * chunk, dev_out + c * chunk, chunk_bytes,
                               cudaMemcpyDeviceToHost, stream_of(c)));
  };

  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaEventRecord(start, 0));
  if (order == "by-stage") {
    for (int c = 0; c < kChunks; ++c) h2d(c);
    for (int c = 0; c < kChunks; ++c) kernel(c);
    for (int c = 0; c < kChunks; ++c) d2h(c);
  } else {  // per-chunk and serial issue in the same order; serial has a single stream
    for (int c = 0; c < kChunks; ++c) {
      h2d(c);
      kernel(c);
      d2h(c);
    }
  }
  // The legacy default stream waits for the blocking streams only, so wait for all explicitly.
  for (int s = 0; s < kStreams; ++s) CHECK_CUDA(cudaStreamSynchronize(streams[s]));
  CHECK_CUDA(cudaEventRecord(stop, 0));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  std::fprintf(stderr, "stream_overlap: order=%s %.3f ms\n", order.c_str(), ms);

  for (size_t i = 0; i < n; i += kVerifyStride) {
    CHECK_TRUE(host_out[i] == Transform(static_cast<uint32_t>(i)), "wrong result at %zu", i);
  }
  uint64_t checksum = 0;
  for (size_t i = 0; i < n; ++i) checksum += host_out[i];

  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  for (int s = 0; s < kStreams; ++s) CHECK_CUDA(cudaStreamDestroy(streams[s]));
  CHECK_CUDA(cudaFree(dev_in));
  CHECK_CUDA(cudaFree(dev_out));
  CHECK_CUDA(cudaFreeHost(host_in));
  CHECK_CUDA(cudaFreeHost(host_out));
  std::printf("stream_overlap: order=%s streams=%d chunks=%d elements=%zu checksum=%016llx\n",
              order.c_str(), order == "serial" ? 1 : kStreams, kChunks, n,
              static_cast<unsigned long long>(checksum));
  return 0;
}
