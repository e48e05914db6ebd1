// Kernel and API names for people: demangled, without the return type that templates carry,
// and abbreviated one way everywhere (every table, explanation and timeline title) by eliding
// argument lists and keeping namespaces: "cudnn::detail::dgrad_engine<…>(…)".
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

// `name` in at most `max_chars` characters (code points), unchanged when it fits. Else, step by
// step until it fits: parameter lists become "(…)"; template arguments become "<…>"
// (namespaces kept: "at::native::vectorized_elementwise_kernel<…>(…)"); leading namespaces
// become "…::" one at a time, never the last name; then the last name alone with "…" for its
// lists ("…::dgrad_engine…"); last, the text is cut with "…", at a word or scope boundary when
// one lies in its last third. Empty "()" and "(anonymous namespace)" stay.
// The tables pass their column's width (table_renderer.h FitName); prose passes
// kProseNameChars.
std::string AbbreviateName(std::string_view name, size_t max_chars);

// The width a name may take in explanations and timeline titles: a qualified kernel name with
// its argument lists elided fits ("(anonymous namespace)::TransformKernel(…)"), a template's
// argument list rarely does.
inline constexpr size_t kProseNameChars = 44;

// Number of characters (UTF-8 code points) in `text`: what a terminal shows.
size_t DisplayWidth(std::string_view text);

}  // namespace libprof::analysis
