#include "libprof/cupti/stream_blocking_calls.h"

// (The parameter structs come with cupti.h: generated_cuda_meta.h and its runtime twin.)
#include <algorithm>
#include <array>

#include "libprof/by_correlation.h"

namespace libprof {
namespace {

constexpr std::array<CUpti_CallbackId, 4> kRuntimeCbids = {
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000};
constexpr std::array<CUpti_CallbackId, 16> kDriverCbids = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback,
    CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2_ptsz};

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
template <typename Params>
std::optional<StreamArgument> WaitValueStream(const void* params, bool ptsz) {
  return Argument(static_cast<const Params*>(params)->stream, ptsz);
}
// A batch holds its stream only with a wait among its operations (the caller's array, valid
// while the call runs).
template <typename Params>
std::optional<StreamArgument> BatchStream(const void* params, bool ptsz) {
  const auto* p = static_cast<const Params*>(params);
  if (p->paramArray == nullptr) return std::nullopt;
  for (unsigned int i = 0; i < p->count; ++i) {
    const CUstreamBatchMemOpType op = p->paramArray[i].operation;
    if (op == CU_STREAM_MEM_OP_WAIT_VALUE_32 || op == CU_STREAM_MEM_OP_WAIT_VALUE_64) {
      return Argument(p->stream, ptsz);
    }
  }
  return std::nullopt;
}

}  // namespace

std::span<const CUpti_CallbackId> StreamBlockingCbids(bool runtime) {
  static_assert(kRuntimeCbids[0] < kRuntimeCbids[1] && kRuntimeCbids[1] < kRuntimeCbids[2] &&
                kRuntimeCbids[2] < kRuntimeCbids[3]);
  static_assert(std::is_sorted(kDriverCbids.begin(), kDriverCbids.end()));
  if (runtime) return kRuntimeCbids;
  return kDriverCbids;
}

std::optional<StreamArgument> StreamBlockingCallStream(bool runtime, CUpti_CallbackId cbid,
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
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32:
      return WaitValueStream<cuStreamWaitValue32_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_ptsz:
      return WaitValueStream<cuStreamWaitValue32_ptsz_params>(params, true);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64:
      return WaitValueStream<cuStreamWaitValue64_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz:
      return WaitValueStream<cuStreamWaitValue64_ptsz_params>(params, true);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2:
      return WaitValueStream<cuStreamWaitValue32_v2_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2_ptsz:
      return WaitValueStream<cuStreamWaitValue32_v2_ptsz_params>(params, true);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2:
      return WaitValueStream<cuStreamWaitValue64_v2_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2_ptsz:
      return WaitValueStream<cuStreamWaitValue64_v2_ptsz_params>(params, true);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp:
      return BatchStream<cuStreamBatchMemOp_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_ptsz:
      return BatchStream<cuStreamBatchMemOp_ptsz_params>(params, true);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2:
      return BatchStream<cuStreamBatchMemOp_v2_params>(params, false);
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2_ptsz:
      return BatchStream<cuStreamBatchMemOp_v2_ptsz_params>(params, true);
    default:
      return std::nullopt;
  }
}

void StreamBlockingCalls::Note(uint64_t correlation_id, uint32_t stream_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_[correlation_id] = stream_id;
  ForgetOlderHalf(&pending_, kMaxPending);
}

void StreamBlockingCalls::Attach(std::span<ApiCall> calls) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) return;
  for (ApiCall& call : calls) {
    if (auto it = pending_.find(call.correlation_id); it != pending_.end()) {
      call.stream_id = it->second;
    }
  }
}

}  // namespace libprof
