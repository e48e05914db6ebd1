// NVTX annotations and explicit synchronisations, in every form a profiler must record (the
// seeds' "add NVTX ranges to find who calls cudaMemcpyAsync" advice, seed 000):
//   - "before-cuda-init": pushed before the first CUDA call (which runs cuInit) and popped after;
//   - "outer" > "inner": nested push/pop around a kernel and a copy (depths 0 and 1);
//   - domain "libprof-sample": nvtxDomainRangePushEx with the registered string
//     "registered-range" and the colour 0xFF00FF00 (ARGB, green);
//   - "cross-thread": nvtxRangeStartA on the main thread, nvtxRangeEnd on a std::thread;
//   - "checkpoint": nvtxMarkA;
//   - cudaStreamSynchronize, cudaEventRecord + cudaEventSynchronize, cudaStreamWaitEvent and
//     cudaDeviceSynchronize, each behind a short SpinKernel so that it really waits.
//
// A profiler should show all of the above with their threads, depths, domain, colour and the
// range opened before CUDA initialised; plus one synchronisation record of each of the four types.
//
// Usage: nvtx_ranges
// Prints: the final value of the counter the kernels increment.
#include <nvtx3/nvToolsExt.h>

#include <thread>

#include "sample_util.cuh"

namespace {

constexpr uint64_t kSpinNs = 200'000;  // each synchronisation waits ~0.2 ms
constexpr uint32_t kGreenArgb = 0xFF00FF00;

// Atomic: kernels of the two streams may run at the same time.
__global__ void AddKernel(int* value, int amount) { atomicAdd(value, amount); }

}  // namespace

int main() {
  nvtxRangePushA("before-cuda-init");
  CHECK_CUDA(cudaFree(nullptr));  // initialises CUDA (cuInit, context)
  nvtxRangePop();

  int* value = nullptr;
  CHECK_CUDA(cudaMalloc(&value, sizeof(int)));
  CHECK_CUDA(cudaMemset(value, 0, sizeof(int)));
  cudaStream_t stream, other;
  CHECK_CUDA(cudaStreamCreate(&stream));
  CHECK_CUDA(cudaStreamCreate(&other));

  nvtxRangePushA("outer");
  AddKernel<<<1, 1, 0, stream>>>(value, 1);
  CHECK_LAUNCH();
  nvtxRangePushA("inner");
  AddKernel<<<1, 1, 0, stream>>>(value, 10);
  CHECK_LAUNCH();
  int host_value = 0;
  CHECK_CUDA(cudaMemcpyAsync(&host_value, value, sizeof(int), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  nvtxRangePop();  // inner
  nvtxRangePop();  // outer
  CHECK_TRUE(host_value == 11, "value %d after outer/inner, want 11", host_value);

  nvtxDomainHandle_t domain = nvtxDomainCreateA("libprof-sample");
  nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered-range");
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.colorType = NVTX_COLOR_ARGB;
  attributes.color = kGreenArgb;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = registered;
  nvtxDomainRangePushEx(domain, &attributes);
  AddKernel<<<1, 1, 0, stream>>>(value, 100);
  CHECK_LAUNCH();
  nvtxDomainRangePop(domain);

  // Opened here, closed by another thread after its own GPU work.
  nvtxRangeId_t cross_thread = nvtxRangeStartA("cross-thread");
  std::thread worker([&] {
    AddKernel<<<1, 1, 0, other>>>(value, 1000);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaStreamSynchronize(other));
    nvtxRangeEnd(cross_thread);
  });
  worker.join();

  nvtxMarkA("checkpoint");

  // One synchronisation of each kind, each with work to wait for.
  cudaEvent_t event;
  CHECK_CUDA(cudaEventCreate(&event));
  SpinKernel<<<1, 1, 0, stream>>>(kSpinNs);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(stream));  // stream synchronize
  SpinKernel<<<1, 1, 0, stream>>>(kSpinNs);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaEventRecord(event, stream));
  CHECK_CUDA(cudaEventSynchronize(event));  // event synchronize
  SpinKernel<<<1, 1, 0, stream>>>(kSpinNs);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaEventRecord(event, stream));
  CHECK_CUDA(cudaStreamWaitEvent(other, event, 0));  // stream wait event
  AddKernel<<<1, 1, 0, other>>>(value, 10000);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaDeviceSynchronize());  // context synchronize

  CHECK_CUDA(cudaMemcpy(&host_value, value, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_TRUE(host_value == 11111, "final value %d, want 11111", host_value);
  nvtxDomainDestroy(domain);
  CHECK_CUDA(cudaEventDestroy(event));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaStreamDestroy(other));
  CHECK_CUDA(cudaFree(value));
  std::printf("nvtx_ranges: value=%d\n", host_value);
  return 0;
}
