// Wide (wchar_t) NVTX strings to UTF-8, the encoding of every string in a libprof trace.
//
// Layer: libprof/nvtx/ (CUDA-free, no NVTX headers).
#pragma once

#include <string>

namespace libprof {

// Appends `text` (null-terminated UTF-32, as wchar_t is on Linux) to *out as UTF-8. A null
// `text` appends nothing; surrogates and values above U+10FFFF become U+FFFD.
void AppendWideAsUtf8(const wchar_t* text, std::string* out);

}  // namespace libprof
