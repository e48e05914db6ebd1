// Kernel names for people: demangled, without the return type that templates carry, and
// shortened for tables by collapsing argument lists ("nrm2_kernel<…>(…)").
//
// Layer: analysis/model/. Pure functions (uses the C++ ABI demangler).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace libprof::analysis {

// The readable full name: `demangled` when CUPTI gave one, else `mangled` demangled here, else
// `mangled` as is; a leading return type ("void ") is dropped: "spin(float*, int, long)".
std::string KernelDisplayName(std::string_view mangled, std::string_view demangled);

// `name` shortened to about `max_chars` characters for a table: first the parameter list becomes
// "(…)", then template arguments become "<…>". Names that fit are returned unchanged; the result
// may still exceed `max_chars` (the table truncates it then).
std::string ShortKernelName(std::string_view name, size_t max_chars = 60);

// Number of characters (UTF-8 code points) in `text`: what a terminal shows.
size_t DisplayWidth(std::string_view text);

}  // namespace libprof::analysis
