// The CUPTI callback ids the session reacts to: kernel launches (counted for the takeover watch)
// and cudaProfilerStart/Stop (the cudaProfilerApi capture range), in the runtime and driver
// domains.
//
// Layer: libprof/cupti/ (includes CUPTI). Header-only.
#pragma once

#include <cupti.h>

#include <cstddef>

namespace libprof {

inline constexpr CUpti_CallbackId kRuntimeLaunchCbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
};
inline constexpr CUpti_CallbackId kDriverLaunchCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};
template <size_t N>
inline bool ContainsCallbackId(const CUpti_CallbackId (&ids)[N], CUpti_CallbackId cbid) {
  for (CUpti_CallbackId id : ids) {
    if (id == cbid) return true;
  }
  return false;
}

inline bool IsLaunch(bool runtime, CUpti_CallbackId cbid) {
  return runtime ? ContainsCallbackId(kRuntimeLaunchCbids, cbid)
                 : ContainsCallbackId(kDriverLaunchCbids, cbid);
}

inline bool IsProfilerStart(bool runtime, CUpti_CallbackId cbid) {
  return runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                 : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
}

inline bool IsProfilerStop(bool runtime, CUpti_CallbackId cbid) {
  return runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                 : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
}

}  // namespace libprof
