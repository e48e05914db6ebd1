#include "libprof/cupti/api_filter.h"

#include <cupti.h>

#include <algorithm>

namespace libprof {
namespace {

std::vector<uint32_t> SortedUnique(std::vector<uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

// Names are the CUDA 13.0 enum names, so a renamed or removed id breaks the build instead of
// silently filtering something else. Ids are stable across CUPTI versions; an id that an older
// CUPTI does not know is refused by it, and the session ignores that.
std::vector<uint32_t> InsignificantRuntimeCbids() {
  return SortedUnique({
      // Kineto turns off cudaGetDevice (CuptiActivityApi.cpp, cupti-facts.md 2.1): the current
      // device is thread-local state in cudart; so are the device count, flags and the cached
      // attributes. cudaGetDeviceProperties is kept: it queries every attribute and is slow
      // enough that calling it in a loop is a real finding.
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceFlags_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetStreamPriorityRange_v5050,
      // Error state and versions: thread-local or constant, never touch the device.
      CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorName_v6050,
      CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
      // Stream-capture state: PyTorch asks before most operations whether the stream is being
      // captured into a graph; a host-side flag, the capture itself is not affected.
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v10010,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
      CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
      // Stream properties fixed at creation.
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetPriority_v5050,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetPriority_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetFlags_v5050,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetFlags_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetId_v12000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetId_ptsz_v12000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetDevice_v12080,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetDevice_ptsz_v12080,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetAttribute_v11000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetAttribute_ptsz_v11000,
      // Pointer and function metadata (the UVA table, the function's static attributes).
      CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
      CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetName_v12030,
      CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetParamInfo_v12040,
      // Occupancy calculators: arithmetic on the device's limits, on the host.
      CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000,
      CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050,
      CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyAvailableDynamicSMemPerBlock_v10200,
      CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveClusters_v11070,
      CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxPotentialClusterSize_v11070,
      // Entry-point lookups: symbol-table reads.
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPoint_v11030,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPoint_ptsz_v11030,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPointByVersion_v12050,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPointByVersion_ptsz_v12050,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetExportTable_v13000,
  });
}

std::vector<uint32_t> InsignificantDriverCbids() {
  return SortedUnique({
      // Entry-point lookups: cudart resolves the driver through cuGetProcAddress, hundreds of
      // times at start-up (880 records in one run, cupti-facts.md 2.3).
      CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
      CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
      CUPTI_DRIVER_TRACE_CBID_cuGetExportTable,
      // Errors and versions.
      CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
      CUPTI_DRIVER_TRACE_CBID_cuGetErrorName,
      CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
      // Context and device state. Kineto turns off cuCtxGetCurrent and
      // cuDevicePrimaryCtxGetState. Setting the current context (cuCtxSetCurrent, Push/Pop) is
      // kept: it changes which context later work goes to.
      CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
      CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
      CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2,
      CUPTI_DRIVER_TRACE_CBID_cuCtxGetId,
      CUPTI_DRIVER_TRACE_CBID_cuCtxGetFlags,
      CUPTI_DRIVER_TRACE_CBID_cuCtxGetApiVersion,
      CUPTI_DRIVER_TRACE_CBID_cuCtxGetStreamPriorityRange,
      CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
      CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,
      CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount,
      CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
      CUPTI_DRIVER_TRACE_CBID_cuModuleGetLoadingMode,
      // Kernel and function metadata: cudart calls cuKernelGetName once per launch (cupti-facts.md
      // 2.3); Kineto turns off cuKernelGetAttribute. Handle lookups that may load a module
      // (cuLibraryGetKernel, cuKernelGetFunction, cuModuleGetFunction) are kept: rare, and their
      // time can be real.
      CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
      CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
      CUPTI_DRIVER_TRACE_CBID_cuKernelGetParamInfo,
      CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
      CUPTI_DRIVER_TRACE_CBID_cuFuncGetName,
      CUPTI_DRIVER_TRACE_CBID_cuFuncGetParamInfo,
      // Stream-capture state and stream properties, as on the runtime side.
      CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
      CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuThreadExchangeStreamCaptureMode,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetPriority,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetPriority_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetFlags,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetFlags_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetId,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetId_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetDevice,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetDevice_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_v2,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_v2_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetAttribute,
      CUPTI_DRIVER_TRACE_CBID_cuStreamGetAttribute_ptsz,
      // Pointer queries (the UVA table): NCCL and PyTorch ask per buffer.
      CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
      CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
      CUPTI_DRIVER_TRACE_CBID_cuMemGetAddressRange,
      CUPTI_DRIVER_TRACE_CBID_cuMemGetAddressRange_v2,
      // Occupancy calculators.
      CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxActiveBlocksPerMultiprocessor,
      CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
      CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxPotentialBlockSize,
      CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxPotentialBlockSizeWithFlags,
      CUPTI_DRIVER_TRACE_CBID_cuOccupancyAvailableDynamicSMemPerBlock,
      CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxActiveClusters,
      CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxPotentialClusterSize,
  });
}

}  // namespace libprof
