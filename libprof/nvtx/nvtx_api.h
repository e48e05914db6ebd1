// NVTX's C types and callback ids, for the code that talks to NVTX's export tables.
//
// Layer: libprof/nvtx/. NVTX_NO_IMPL gives the declarations without an NVTX instance of our own:
// libprof must not contain one (its calls would be routed back into libprof itself). Include this
// before any other NVTX header in a translation unit.
#pragma once

#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>
