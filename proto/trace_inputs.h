// The trace files that a command line names: files as given, and each directory replaced by the
// per-process traces inside it (collect.sh -o DIR/ writes one file per process there).
//
// Layer: proto/, reader side (libprof_trace_reader). Filesystem only; reads no trace.
#pragma once

#include <expected>
#include <string>
#include <vector>

namespace libprof {

// Replaces each directory by the regular "*.pb" files directly inside it (not hidden ones),
// sorted by name; other paths are kept as given. A directory without such a file is an error.
std::expected<std::vector<std::string>, std::string> ExpandTraceInputs(
    const std::vector<std::string>& inputs);

}  // namespace libprof
