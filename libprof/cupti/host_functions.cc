#include "libprof/cupti/host_functions.h"

// (The parameter structs come with cupti.h: generated_cuda_meta.h and its runtime twin.)
#include <array>

#include "libprof/by_correlation.h"

namespace libprof {
namespace {

constexpr std::array<CUpti_CallbackId, 4> kRuntimeCbids = {
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000};
constexpr std::array<CUpti_CallbackId, 4> kDriverCbids = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback, CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz};

// The special handles name the stream they stand for: the legacy default stream, or the calling
// thread's per-thread one (what a null handle means in a _ptsz call).
StreamArgument Argument(CUstream stream, bool ptsz) {
  if (stream == CU_STREAM_LEGACY) return {nullptr, false};
  if (stream == CU_STREAM_PER_THREAD) return {nullptr, true};
  return {stream, ptsz && stream == nullptr};
}

template <typename Params>
std::optional<StreamArgument> RuntimeStream(const void* params, bool ptsz) {
  return Argument(static_cast<CUstream>(static_cast<const Params*>(params)->stream), ptsz);
}
template <typename Params>
std::optional<StreamArgument> DriverStream(const void* params, bool ptsz) {
  return Argument(static_cast<const Params*>(params)->hStream, ptsz);
}

}  // namespace

std::span<const CUpti_CallbackId> HostFunctionCbids(bool runtime) {
  static_assert(kRuntimeCbids[0] < kRuntimeCbids[1] && kRuntimeCbids[1] < kRuntimeCbids[2] &&
                kRuntimeCbids[2] < kRuntimeCbids[3]);
  static_assert(kDriverCbids[0] < kDriverCbids[1] && kDriverCbids[1] < kDriverCbids[2] &&
                kDriverCbids[2] < kDriverCbids[3]);
  if (runtime) return kRuntimeCbids;
  return kDriverCbids;
}

std::optional<StreamArgument> HostFunctionStream(bool runtime, CUpti_CallbackId cbid,
                                                 const void* params) {
  if (params == nullptr) return std::nullopt;
  if (runtime) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_v5000:
        return RuntimeStream<cudaStreamAddCallback_v5000_params>(params, false);
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_ptsz_v7000:
        return RuntimeStream<cudaStreamAddCallback_ptsz_v7000_params>(params, true);
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000:
        return RuntimeStream<cudaLaunchHostFunc_v10000_params>(params, false);
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000:
        return RuntimeStream<cudaLaunchHostFunc_ptsz_v10000_params>(params, true);
      default:
        return std::nullopt;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback:
      return DriverStream<cuStreamAddCallback_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback_ptsz:
      return DriverStream<cuStreamAddCallback_ptsz_params>(params, true);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc:
      return DriverStream<cuLaunchHostFunc_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz:
      return DriverStream<cuLaunchHostFunc_ptsz_params>(params, true);
    default:
      return std::nullopt;
  }
}

void HostFunctionStreams::Note(uint64_t correlation_id, uint32_t stream_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_[correlation_id] = stream_id;
  ForgetOlderHalf(&pending_, kMaxPending);
}

void HostFunctionStreams::Attach(std::span<ApiCall> calls) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) return;
  for (ApiCall& call : calls) {
    if (auto it = pending_.find(call.correlation_id); it != pending_.end()) {
      call.stream_id = it->second;
    }
  }
}

}  // namespace libprof
