#include "analysis/model/api_names.h"

#include <algorithm>
#include <array>
#include <set>

namespace libprof::analysis {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool Contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

// Strips a trailing version suffix such as "_v2" or "_v3" (cuStreamGetCaptureInfo_v2).
std::string_view WithoutVersion(std::string_view name) {
  const size_t pos = name.rfind("_v");
  if (pos == std::string_view::npos || pos + 2 >= name.size()) return name;
  for (size_t i = pos + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, pos);
}

std::string_view Base(std::string_view name) {
  return WithoutVersion(WithoutPerThreadSuffix(WithoutVersion(name)));
}

}  // namespace

std::string_view WithoutPerThreadSuffix(std::string_view name) {
  if (EndsWith(name, "_ptsz") || EndsWith(name, "_ptds")) return name.substr(0, name.size() - 5);
  return name;
}

bool IsPerThreadApi(std::string_view name) {
  const std::string_view n = WithoutVersion(name);
  return EndsWith(n, "_ptsz") || EndsWith(n, "_ptds");
}

bool IsNoiseApi(std::string_view name) {
  // Kept a superset of libprof/cupti/api_filter.cc's InsignificantRuntimeCbids and
  // InsignificantDriverCbids (by clean name), plus the families matched below.
  static const std::set<std::string_view> kNoise = {"cuCtxGetApiVersion",
                                                    "cuCtxGetCurrent",
                                                    "cuCtxGetDevice",
                                                    "cuCtxGetFlags",
                                                    "cuCtxGetId",
                                                    "cuCtxGetStreamPriorityRange",
                                                    "cuDeviceGet",
                                                    "cuDeviceGetAttribute",
                                                    "cuDeviceGetCount",
                                                    "cuDevicePrimaryCtxGetState",
                                                    "cuDriverGetVersion",
                                                    "cuFuncGetAttribute",
                                                    "cuFuncGetName",
                                                    "cuFuncGetParamInfo",
                                                    "cuGetErrorName",
                                                    "cuGetErrorString",
                                                    "cuGetExportTable",
                                                    "cuGetProcAddress",
                                                    "cuKernelGetAttribute",
                                                    "cuKernelGetFunction",
                                                    "cuKernelGetName",
                                                    "cuKernelGetParamInfo",
                                                    "cuMemGetAddressRange",
                                                    "cuModuleGetLoadingMode",
                                                    "cuPointerGetAttribute",
                                                    "cuPointerGetAttributes",
                                                    "cuStreamGetAttribute",
                                                    "cuStreamGetCtx",
                                                    "cuStreamGetDevice",
                                                    "cuStreamGetFlags",
                                                    "cuStreamGetId",
                                                    "cuStreamGetPriority",
                                                    "cuThreadExchangeStreamCaptureMode",
                                                    "cudaDeviceGetAttribute",
                                                    "cudaDeviceGetStreamPriorityRange",
                                                    "cudaDriverGetVersion",
                                                    "cudaFuncGetAttributes",
                                                    "cudaFuncGetName",
                                                    "cudaFuncGetParamInfo",
                                                    "cudaGetDevice",
                                                    "cudaGetDeviceCount",
                                                    "cudaGetDeviceFlags",
                                                    "cudaGetDriverEntryPoint",
                                                    "cudaGetDriverEntryPointByVersion",
                                                    "cudaGetExportTable",
                                                    "cudaGetLastError",
                                                    "cudaPeekAtLastError",
                                                    "cudaPointerGetAttributes",
                                                    "cudaRuntimeGetVersion",
                                                    "cudaStreamGetAttribute",
                                                    "cudaStreamGetDevice",
                                                    "cudaStreamGetFlags",
                                                    "cudaStreamGetId",
                                                    "cudaStreamGetPriority",
                                                    "cudaThreadExchangeStreamCaptureMode"};
  const std::string_view n = Base(name);
  if (kNoise.contains(n)) return true;
  // Capture-state, error-string and occupancy queries: libraries (cuBLAS, PyTorch, CUDA.jl) ask
  // before every operation.
  return Contains(n, "GetCaptureInfo") || n.ends_with("IsCapturing") ||
         n.ends_with("GetErrorString") || n.ends_with("GetErrorName") ||
         StartsWith(n, "cudaOccupancy") || StartsWith(n, "cuOccupancy");
}

bool CreatedInside(const ApiCall& call, const ContextInfo& context) {
  return context.created_ns != 0 && context.created_thread_id == call.thread_id &&
         call.start_ns <= context.created_ns && context.created_ns <= call.end_ns;
}

bool CreatedAContext(const ApiCall& call, std::span<const ContextInfo> contexts) {
  return std::any_of(contexts.begin(), contexts.end(),
                     [&](const ContextInfo& context) { return CreatedInside(call, context); });
}

bool IsNoiseCall(std::string_view name, const ApiCall& call,
                 std::span<const ContextInfo> contexts) {
  return IsNoiseApi(name) && !CreatedAContext(call, contexts);
}

SyncScope ExplicitSyncScope(std::string_view name) {
  const std::string_view n = Base(name);
  if (n == "cudaDeviceSynchronize" || n == "cudaThreadSynchronize") return SyncScope::kDevice;
  if (n == "cuCtxSynchronize") return SyncScope::kContext;
  if (n == "cudaStreamSynchronize" || n == "cuStreamSynchronize") return SyncScope::kStream;
  if (n == "cudaEventSynchronize" || n == "cuEventSynchronize") return SyncScope::kEvent;
  return SyncScope::kNone;
}

bool IsImplicitSyncApi(std::string_view name) {
  const std::string_view n = Base(name);
  static constexpr std::array<std::string_view, 24> kImplicit = {
      "cudaFree",           "cudaFreeHost",        "cudaFreeArray",      "cudaFreeMipmappedArray",
      "cudaMalloc",         "cudaMallocHost",      "cudaHostAlloc",      "cudaMallocManaged",
      "cudaMallocPitch",    "cudaHostRegister",    "cudaHostUnregister", "cudaDeviceReset",
      "cudaDeviceSetLimit", "cuMemFree",           "cuMemFreeHost",      "cuMemAlloc",
      "cuMemAllocHost",     "cuMemHostAlloc",      "cuMemAllocManaged",  "cuMemAllocPitch",
      "cuMemHostRegister",  "cuMemHostUnregister", "cuCtxSetLimit",      "cuArrayDestroy"};
  for (std::string_view e : kImplicit) {
    if (n == e) return true;
  }
  return false;
}

StartUpWork StartUpWorkOf(std::string_view name) {
  const std::string_view n = Base(name);
  for (std::string_view p : {"cuModuleLoad", "cuLibraryLoad", "cudaLibraryLoad", "cuLinkCreate",
                             "cuLinkAddData", "cuLinkAddFile", "cuLinkComplete"}) {
    if (StartsWith(n, p)) return StartUpWork::kModuleLoad;
  }
  for (std::string_view e : {"cuInit", "cuCtxCreate", "cuDevicePrimaryCtxRetain", "cudaInitDevice"}) {
    if (n == e) return StartUpWork::kContext;
  }
  for (std::string_view p : {"cudaMalloc", "cudaHostAlloc", "cuMemAlloc", "cuMemHostAlloc",
                             "cuMemCreate", "cuMemMap", "cuMemAddressReserve"}) {
    if (StartsWith(n, p)) return StartUpWork::kAllocation;
  }
  return StartUpWork::kNone;
}

const char* ToString(StartUpWork work) {
  switch (work) {
    case StartUpWork::kNone:
      return "none";
    case StartUpWork::kModuleLoad:
      return "module loading";
    case StartUpWork::kContext:
      return "context set-up";
    case StartUpWork::kAllocation:
      return "allocation";
  }
  return "?";
}

bool IsMemcpyApi(std::string_view name) {
  return StartsWith(name, "cudaMemcpy") || StartsWith(name, "cuMemcpy");
}

bool IsMemsetApi(std::string_view name) {
  return StartsWith(name, "cudaMemset") || StartsWith(name, "cuMemset");
}

bool IsAsyncApi(std::string_view name) { return Contains(Base(name), "Async"); }

CaptureBound CaptureBoundOf(std::string_view name) {
  if (name.starts_with("cudaStreamBeginCapture") || name.starts_with("cuStreamBeginCapture")) {
    return CaptureBound::kBegin;
  }
  if (name.starts_with("cudaStreamEndCapture") || name.starts_with("cuStreamEndCapture")) {
    return CaptureBound::kEnd;
  }
  return CaptureBound::kNone;
}

bool IsStreamMemoryWait(std::string_view name) {
  return name.starts_with("cuStreamWaitValue") || name.starts_with("cuStreamBatchMemOp");
}

ApiTraits TraitsOf(std::string_view name) {
  return {.explicit_sync = ExplicitSyncScope(name),
          .implicit_sync = IsImplicitSyncApi(name),
          .start_up = StartUpWorkOf(name),
          .async = IsAsyncApi(name),
          .per_thread = IsPerThreadApi(name),
          .capture = CaptureBoundOf(name),
          .memory_wait = IsStreamMemoryWait(name)};
}

}  // namespace libprof::analysis
