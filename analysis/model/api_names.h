// What profview knows about CUDA API functions by name: which are noise (hidden unless --raw),
// which synchronise explicitly or implicitly, which copy or set memory, and the per-thread
// default stream variants (`_ptsz`/`_ptds`).
//
// Layer: analysis/model/. Pure functions of a clean API name ("cudaMemcpyAsync",
// as proto/trace_model.h's ApiCall::name_id gives it).
#pragma once

#include <span>
#include <string_view>

#include "proto/trace_model.h"

namespace libprof::analysis {

// Calls that neither block nor issue work and that libraries make by the thousand (capture-state
// and error queries, attribute, occupancy and version getters, cuGetProcAddress, context
// getters): a superset of what LIBPROF_API_FILTER=significant skips at capture time, so a trace
// recorded with LIBPROF_API_FILTER=all summarises like one recorded with the default.
bool IsNoiseApi(std::string_view name);

// A call of a noise API is still shown when a context was created inside it (ContextInfo's
// created_ns, on the creating thread): LIBPROF_API_FILTER=significant records a filtered call
// for that reason alone (PyTorch creates its context inside cudaDeviceGetStreamPriorityRange,
// 120 ms of it), and a trace recorded with `all` shows the same one call.
bool CreatedInside(const ApiCall& call, const ContextInfo& context);  // on its thread, in its time
bool CreatedAContext(const ApiCall& call, std::span<const ContextInfo> contexts);
bool IsNoiseCall(std::string_view name, const ApiCall& call,
                 std::span<const ContextInfo> contexts);

// Explicit synchronisation APIs: the host waits for device work by design.
enum class SyncScope { kNone, kDevice, kContext, kStream, kEvent };
SyncScope ExplicitSyncScope(std::string_view name);

// APIs that synchronise the device as a side effect (cudaFree, cudaFreeHost, cudaHostRegister,
// cudaMalloc under memory pressure, ...). Their wait covers every stream of the device.
bool IsImplicitSyncApi(std::string_view name);

// Work a program does once, while it starts, and never again in its steady state
// (analysis/metrics/start_up.h):
//   kModuleLoad  loading device code: cuModuleLoad*, cuLibraryLoad*, cudaLibraryLoad*, the JIT
//                linker (cuLinkCreate/AddData/AddFile/Complete); CUDA's lazy loading calls
//                cuLibraryLoadData inside the first launch of each kernel;
//   kContext     creating a context: cuInit, cuCtxCreate, cuDevicePrimaryCtxRetain,
//                cudaInitDevice;
//   kAllocation  allocating memory: cudaMalloc*, cudaHostAlloc, cuMemAlloc*, cuMemHostAlloc,
//                cuMemCreate, cuMemMap, cuMemAddressReserve (also churn when repeated: only
//                those inside start-up are start-up's).
enum class StartUpWork { kNone, kModuleLoad, kContext, kAllocation };
StartUpWork StartUpWorkOf(std::string_view name);
const char* ToString(StartUpWork work);  // "none", "module loading", "context set-up", "allocation"

bool IsMemcpyApi(std::string_view name);  // cudaMemcpy*, cuMemcpy*
bool IsMemsetApi(std::string_view name);  // cudaMemset*, cuMemset*
bool IsAsyncApi(std::string_view name);   // the name (without _ptsz/_ptds) ends in "Async"

// True for the per-thread default stream entry points (cudaMemcpyAsync_ptsz, cuLaunchKernel_ptsz,
// cudaMemcpy_ptds, ...); their work goes to the calling thread's default stream. libprof's own
// clean names drop the suffix, so this only helps with traces that keep raw names.
bool IsPerThreadApi(std::string_view name);
std::string_view WithoutPerThreadSuffix(std::string_view name);

// A call that enqueues a wait on a memory value: cuStreamWaitValue32/64 and cuStreamBatchMemOp
// (libprof records its stream only when a wait is among its operations). Work behind it waits
// until the host or other work writes the value (stream_blockers.h).
bool IsStreamMemoryWait(std::string_view name);

// Stream capture's bounds: cudaStreamBeginCapture* / cuStreamBeginCapture* (kBegin) and
// cudaStreamEndCapture / cuStreamEndCapture (kEnd). Work issued between them on the capturing
// thread goes into a graph, not onto the stream.
enum class CaptureBound : uint8_t { kNone, kBegin, kEnd };
CaptureBound CaptureBoundOf(std::string_view name);

// The answers above that the analyses ask of every call, for one name: TraceIndex keeps them per
// name id (a trace has a few hundred API names and millions of calls).
struct ApiTraits {
  SyncScope explicit_sync = SyncScope::kNone;
  bool implicit_sync = false;
  StartUpWork start_up = StartUpWork::kNone;
  bool async = false;
  bool per_thread = false;
  CaptureBound capture = CaptureBound::kNone;
  bool memory_wait = false;
};
ApiTraits TraitsOf(std::string_view name);

}  // namespace libprof::analysis
