// InstallNvtxHandlers: points an NVTX instance's function tables at libprof's handlers.
//
// Layer: libprof/nvtx/. Needs no NVTX header: the one NVTX type it uses is declared below.
#pragma once

#include <cstdint>

// Same declaration as nvtx3/nvtxDetail/nvtxTypes.h (a typedef may be repeated for the same type),
// so that entry.cc needs no NVTX include; nvtx_install.cc checks that the two agree.
typedef const void* (*NvtxGetExportTableFunc_t)(uint32_t exportTableId);

namespace libprof {

// Body of InitializeInjectionNvtx2. Called once per NVTX instance (each DSO that includes the
// NVTX headers has its own), from inside that instance's first NVTX call; every instance gets
// the same handlers over one NvtxRecorder. Fills the CORE and CORE2 tables; slots left empty
// (naming of categories, OS threads, CUDA objects; SYNC) become NVTX's own no-ops. Returns
// false, and NVTX then makes that instance a no-op, if the export table is unusable. Never throws.
bool InstallNvtxHandlers(NvtxGetExportTableFunc_t get_export_table) noexcept;

}  // namespace libprof
