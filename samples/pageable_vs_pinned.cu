// Reproduces seeds 002 and 003 (PyTorch transfers from pageable memory at a third of the pinned
// speed; .to(non_blocking=True) that still blocks). Copies a buffer (64 MiB by default) HtoD and
// DtoH from pageable (malloc) and pinned (cudaMallocHost) memory with cudaMemcpy and
// cudaMemcpyAsync, then one 4-byte DtoH cudaMemcpyAsync to pageable and one to pinned memory,
// each queued behind a 2 ms SpinKernel.
//
// A profiler should show: memcpys labelled pageable and pinned, the pageable ones slower (staged
// through a driver buffer); the 4-byte async copy to pageable memory holding the host ~2 ms (it
// waits for SpinKernel), the one to pinned memory returning at once.
//
// --host pageable or --host pinned runs only the cases from that kind of host memory (the
// other buffer is not allocated), so that a pair of runs shows what moving from pageable to
// pinned memory changes (`profview diff`, samples/traces/pageable_vs_pinned_*.pb).
//
// Usage: pageable_vs_pinned [mib=64] [reps=3] [--host pageable|pinned|both]
// Prints: the size, the repetitions, the cases run and a checksum of the data after the round
// trips (stdout); the bandwidth of each case and the host time of the small copies go to stderr.
#include <chrono>
#include <cstring>
#include <vector>

#include "sample_util.cuh"

namespace {

constexpr uint64_t kSpinNs = 2'000'000;  // 2 ms before each small copy

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Buffers {
  size_t bytes;
  unsigned char* pageable;
  unsigned char* pinned;
  unsigned char* device;
  cudaStream_t stream;
};

// Runs one case `reps` times and reports its bandwidth on stderr. Async cases are timed up to
// the stream synchronisation that completes them.
void RunCase(const Buffers& b, long reps, cudaMemcpyKind kind, bool pinned, bool async) {
  unsigned char* host = pinned ? b.pinned : b.pageable;
  void* dst = kind == cudaMemcpyHostToDevice ? static_cast<void*>(b.device) : host;
  const void* src = kind == cudaMemcpyHostToDevice ? static_cast<void*>(host) : b.device;
  auto start = std::chrono::steady_clock::now();
  for (long r = 0; r < reps; ++r) {
    if (async) {
      CHECK_CUDA(cudaMemcpyAsync(dst, src, b.bytes, kind, b.stream));
      CHECK_CUDA(cudaStreamSynchronize(b.stream));
    } else {
      CHECK_CUDA(cudaMemcpy(dst, src, b.bytes, kind));
    }
  }
  const double seconds = Seconds(start);
  std::fprintf(stderr, "%s %-8s %-15s %7.2f GB/s\n",
               kind == cudaMemcpyHostToDevice ? "HtoD" : "DtoH", pinned ? "pinned" : "pageable",
               async ? "cudaMemcpyAsync" : "cudaMemcpy",
               static_cast<double>(b.bytes) * reps / seconds / 1e9);
}

// Queues a 2 ms kernel, then a 4-byte DtoH async copy into `host`; reports how long the copy
// call held the host.
void SmallCopyAfterSpin(const Buffers& b, unsigned char* host, const char* label) {
  SpinKernel<<<1, 1, 0, b.stream>>>(kSpinNs);
  CHECK_LAUNCH();
  auto start = std::chrono::steady_clock::now();
  CHECK_CUDA(cudaMemcpyAsync(host, b.device, 4, cudaMemcpyDeviceToHost, b.stream));
  const double call_us = Seconds(start) * 1e6;
  CHECK_CUDA(cudaStreamSynchronize(b.stream));
  std::fprintf(stderr, "4-byte DtoH cudaMemcpyAsync to %s after a 2 ms kernel: call took %.0f us\n",
               label, call_us);
}

}  // namespace

int main(int argc, char** argv) {
  long mib = 64;
  long reps = 3;
  const char* host = "both";
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
      host = argv[++i];
    } else if (positional++ == 0) {
      mib = ParsePositive(argv[i], "mib");
    } else {
      reps = ParsePositive(argv[i], "reps");
    }
  }
  CHECK_TRUE(std::strcmp(host, "pageable") == 0 || std::strcmp(host, "pinned") == 0 ||
                 std::strcmp(host, "both") == 0,
             "bad --host: '%s' (want pageable, pinned or both)", host);
  const bool use_pageable = std::strcmp(host, "pinned") != 0;
  const bool use_pinned = std::strcmp(host, "pageable") != 0;

  Buffers b{static_cast<size_t>(mib) << 20, nullptr, nullptr, nullptr, nullptr};
  // The same pattern in both host buffers: every copy below moves the same bytes, so the
  // buffers must still hold it at the end.
  std::vector<unsigned char> pattern(b.bytes);
  for (size_t i = 0; i < b.bytes; ++i) pattern[i] = static_cast<unsigned char>((i * 131) >> 3);
  if (use_pageable) {
    b.pageable = static_cast<unsigned char*>(std::malloc(b.bytes));
    CHECK_TRUE(b.pageable != nullptr, "malloc of %zu bytes failed", b.bytes);
    std::memcpy(b.pageable, pattern.data(), b.bytes);
  }
  if (use_pinned) {
    CHECK_CUDA(cudaMallocHost(&b.pinned, b.bytes));
    std::memcpy(b.pinned, pattern.data(), b.bytes);
  }
  CHECK_CUDA(cudaMalloc(&b.device, b.bytes));
  CHECK_CUDA(cudaStreamCreate(&b.stream));

  int cases = 0;
  for (bool async : {false, true}) {
    for (bool pinned : {false, true}) {
      if (!(pinned ? use_pinned : use_pageable)) continue;
      cases += 2;
      RunCase(b, reps, cudaMemcpyHostToDevice, pinned, async);
      RunCase(b, reps, cudaMemcpyDeviceToHost, pinned, async);
    }
  }

  unsigned char small_pageable[4] = {};  // on the stack: pageable
  unsigned char* small_pinned = nullptr;
  int small_copies = 0;
  if (use_pageable) {
    SmallCopyAfterSpin(b, small_pageable, "pageable");
    ++small_copies;
  }
  if (use_pinned) {
    CHECK_CUDA(cudaMallocHost(&small_pinned, 4));
    SmallCopyAfterSpin(b, small_pinned, "pinned");
    ++small_copies;
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  CHECK_TRUE(!use_pageable || std::memcmp(b.pageable, pattern.data(), b.bytes) == 0,
             "pageable buffer corrupted");
  CHECK_TRUE(!use_pinned || std::memcmp(b.pinned, pattern.data(), b.bytes) == 0,
             "pinned buffer corrupted");
  CHECK_TRUE((!use_pageable || std::memcmp(small_pageable, pattern.data(), 4) == 0) &&
                 (!use_pinned || std::memcmp(small_pinned, pattern.data(), 4) == 0),
             "small copies returned wrong bytes");
  const unsigned char* result = use_pinned ? b.pinned : b.pageable;
  uint64_t checksum = 14695981039346656037ull;  // FNV-1a over the whole buffer
  for (size_t i = 0; i < b.bytes; ++i) checksum = (checksum ^ result[i]) * 1099511628211ull;

  if (small_pinned != nullptr) CHECK_CUDA(cudaFreeHost(small_pinned));
  CHECK_CUDA(cudaStreamDestroy(b.stream));
  CHECK_CUDA(cudaFree(b.device));
  if (b.pinned != nullptr) CHECK_CUDA(cudaFreeHost(b.pinned));
  std::free(b.pageable);
  std::printf("pageable_vs_pinned: bytes=%zu reps=%ld cases=%d small_copies=%d checksum=%016llx\n",
              b.bytes, reps, cases, small_copies, static_cast<unsigned long long>(checksum));
  return 0;
}
