// Makes strings valid UTF-8 before they are written as proto3 `string` fields.
//
// Layer: proto/, writer side; no dependencies. Why: libprotobuf refuses to parse a proto3 string
// field holding invalid UTF-8, and then the whole chunk is lost. Kernel names, argv, paths and
// NVTX messages come from other people's processes and may hold any bytes.
#pragma once

#include <string>
#include <string_view>

namespace libprof {

// Returns `value` itself when it is valid UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF); otherwise a copy in *storage with each invalid byte replaced by U+FFFD.
std::string_view ValidUtf8(std::string_view value, std::string* storage);

}  // namespace libprof
