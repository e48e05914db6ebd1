// Including both nvtx_install.h and NVTX's nvtxTypes.h (through nvtx_api.h) is the check that the
// two NvtxGetExportTableFunc_t declarations agree: a mismatch would not compile.
#include "libprof/nvtx/nvtx_install.h"

#include <cstddef>

#include "libprof/nvtx/nvtx_api.h"
#include "libprof/nvtx/nvtx_handlers.h"
#include "libprof/nvtx/nvtx_recorder.h"

namespace libprof {
namespace {

// Writes each handler through its slot of `module`'s table. The table has one entry per
// callback id plus a trailing null; `size` (GetModuleFunctionTable's out_size) is the number of
// ids including the unused 0, so an NVTX older than our headers simply has fewer valid ids.
bool FillModule(const NvtxExportTableCallbacks& callbacks, NvtxCallbackModule module,
                std::span<const NvtxHandlerSlot> slots) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks.GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) {
    return false;
  }
  for (const NvtxHandlerSlot& slot : slots) {
    if (slot.callback_id < size && table[slot.callback_id] != nullptr) {
      *table[slot.callback_id] = slot.function;
    }
  }
  return true;
}

// NVTX asks tools to report the NVTX version they were built against (currently unused by NVTX).
void ReportVersion(NvtxGetExportTableFunc_t get_export_table) {
  const auto* info =
      static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
  if (info != nullptr && info->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      info->SetInjectionNvtxVersion != nullptr) {
    info->SetInjectionNvtxVersion(NVTX_VERSION);
  }
}

}  // namespace

bool InstallNvtxHandlers(NvtxGetExportTableFunc_t get_export_table) noexcept {
  try {
    if (get_export_table == nullptr) return false;
    const auto* callbacks =
        static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    constexpr size_t kNeeded = offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) +
                               sizeof(NvtxExportTableCallbacks::GetModuleFunctionTable);
    if (callbacks == nullptr || callbacks->struct_size < kNeeded ||
        callbacks->GetModuleFunctionTable == nullptr) {
      return false;
    }
    NvtxRecorder::Get();  // shared by every instance; built here rather than in a first event
    // CORE2 is optional: an instance without it still gets default-domain ranges.
    const bool core = FillModule(*callbacks, NVTX_CB_MODULE_CORE, CoreHandlerSlots());
    FillModule(*callbacks, NVTX_CB_MODULE_CORE2, Core2HandlerSlots());
    ReportVersion(get_export_table);
    return core;
  } catch (...) {
    return false;
  }
}

}  // namespace libprof
