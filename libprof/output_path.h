// Expands output path templates (LIBPROF_OUTPUT, collect.sh -o) and picks a free file name.
//
// Layer: libprof/ (CUDA-free). Shared with the collector's tools; no globals.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace libprof {

struct PathContext {
  uint32_t pid = 0;
  std::string hostname;
  uint32_t sequence = 0;  // %n
  std::function<const char*(const char*)> getenv_fn;  // for %q{VAR}; unset variables expand to ""
};

// Expands %p, %h, %n, %q{VAR} and %%. A template naming an existing directory (or ending in '/')
// gets "libprof-%h-%p.pb" appended. Returns false and sets *error for a malformed template
// (unterminated %q{, unknown %x).
bool ExpandOutputTemplate(const std::string& templ, const PathContext& context, std::string* out,
                          std::string* error);

// When `path` exists and !overwrite, returns the first free "stem.N.ext" (N = 1, 2, ...);
// otherwise `path` itself. `exists` is injectable for tests.
std::string PickFreePath(const std::string& path, bool overwrite,
                         const std::function<bool(const std::string&)>& exists);

}  // namespace libprof
