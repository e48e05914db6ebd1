// A stand-in for one NVTX instance's export tables, laid out as nvtxImpl.h lays out the real
// ones: per module an array of slot pointers (index 0 and the last entry null) and
// GetModuleFunctionTable reporting (entries - 1). Each kInstance is a separate instance, as each
// DSO that includes NVTX is.
#pragma once

#include <cstring>

#include "libprof/nvtx/nvtx_api.h"

namespace libprof::nvtx_test {

template <int kInstance>
struct FakeNvtx {
  // Defined first: the static members below point at them.
  static void Link(NvtxFunctionPointer* slots, NvtxFunctionPointer** table, int size) {
    table[0] = nullptr;
    for (int i = 1; i < size; ++i) table[i] = &slots[i];
    table[size] = nullptr;
  }

  static int GetModuleFunctionTable(NvtxCallbackModule module, NvtxFunctionTable* out_table,
                                    unsigned int* out_size) {
    switch (module) {
      case NVTX_CB_MODULE_CORE:
        *out_table = core_table;
        *out_size = core_size_reported;
        return 1;
      case NVTX_CB_MODULE_CORE2:
        if (!has_core2) return 0;
        *out_table = core2_table;
        *out_size = NVTX_CBID_CORE2_SIZE;
        return 1;
      case NVTX_CB_MODULE_CUDA:
        *out_table = cuda_table;
        *out_size = NVTX_CBID_CUDA_SIZE;
        return 1;
      default:
        return 0;
    }
  }

  static void SetVersion(uint32_t version) { reported_version = version; }

 public:
  // The slots the tool writes through (what nvtxGlobals' *_impl_fnptr members are).
  static inline NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE];
  static inline NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE];
  static inline NvtxFunctionPointer cuda[NVTX_CBID_CUDA_SIZE];
  static inline NvtxFunctionPointer* core_table[NVTX_CBID_CORE_SIZE + 1];
  static inline NvtxFunctionPointer* core2_table[NVTX_CBID_CORE2_SIZE + 1];
  static inline NvtxFunctionPointer* cuda_table[NVTX_CBID_CUDA_SIZE + 1];
  // Test knobs: the CORE size reported, whether CORE2 exists, the callbacks struct_size.
  static inline unsigned core_size_reported = NVTX_CBID_CORE_SIZE;
  static inline bool has_core2 = true;
  static inline uint32_t reported_version = 0;
  static inline NvtxExportTableCallbacks callbacks{sizeof(NvtxExportTableCallbacks),
                                                   &GetModuleFunctionTable};
  static inline NvtxExportTableVersionInfo version_info{sizeof(NvtxExportTableVersionInfo),
                                                        NVTX_VERSION, 0, &SetVersion};

  static void Reset() {
    std::memset(core, 0, sizeof(core));
    std::memset(core2, 0, sizeof(core2));
    std::memset(cuda, 0, sizeof(cuda));
    Link(core, core_table, NVTX_CBID_CORE_SIZE);
    Link(core2, core2_table, NVTX_CBID_CORE2_SIZE);
    Link(cuda, cuda_table, NVTX_CBID_CUDA_SIZE);
    core_size_reported = NVTX_CBID_CORE_SIZE;
    has_core2 = true;
    reported_version = 0;
    callbacks.struct_size = sizeof(NvtxExportTableCallbacks);
  }

  static const void* GetExportTable(uint32_t id) {
    if (id == NVTX_ETID_CALLBACKS) return &callbacks;
    if (id == NVTX_ETID_VERSIONINFO) return &version_info;
    return nullptr;
  }

  // The slot `id` of `slots`, as the NVTX function type the application would call.
  template <typename Function>
  static Function At(NvtxFunctionPointer* slots, int id) {
    return reinterpret_cast<Function>(slots[id]);
  }
};

}  // namespace libprof::nvtx_test
