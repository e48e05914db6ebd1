// The injection entry points: the only symbols libprof.so exports (see libprof.map).
//
// Layer: libprof/. Each entry point catches everything: an exception must never reach the CUDA
// driver, NVTX or the application.
#include <exception>

#include "libprof/log.h"
#include "libprof/nvtx/nvtx_payload_handlers.h"
#include "libprof/nvtx/nvtx_recorder.h"
#include "libprof/profiler.h"

extern "C" {

// CUDA_INJECTION64_PATH: called by the driver inside cuInit, once per process.
__attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    return libprof::Profiler::Get().OnCudaInjection();
  } catch (const std::exception& e) {
    libprof::Log().warn("internal error while starting ({}); not recording", e.what());
  } catch (...) {
    libprof::Log().warn("internal error while starting; not recording");
  }
  return 1;
}

// NVTX_INJECTION64_PATH: called by each NVTX instance (one per DSO using NVTX) at its first call.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  try {
    return libprof::InstallNvtxHandlers(get_export_table) ? 1 : 0;
  } catch (...) {
    return 0;  // NVTX then turns its calls into no-ops: the application runs on.
  }
}

// The same library, for each NVTX extension module of each instance (nvtxDetail/nvtxExtInit.h):
// libprof takes the payload extension (schemas and payloads, which NCCL uses) and declines the
// others, whose calls NVTX then turns into no-ops.
__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(
    nvtxExtModuleInfo_t* module_info) {
  return libprof::InstallNvtxExtension(module_info);  // noexcept
}

}  // extern "C"

namespace {

// LD_PRELOAD mode: cheap, CUDA-free set-up before main (cupti-facts.md 1.3: full CUPTI set-up
// in a constructor costs ~7 ms in every process, CUDA or not).
__attribute__((constructor)) void OnLoad() {
  try {
    libprof::Profiler::Get().OnLibraryLoaded();
  } catch (...) {
  }
}

}  // namespace
