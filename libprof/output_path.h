// Expands output path templates (LIBPROF_OUTPUT, collect.sh -o) and picks a free file name.
//
// Layer: libprof/ (CUDA-free). Shared with the collector's tools; no globals.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>

#include "proto/trace_writer.h"

namespace libprof {

struct PathContext {
  uint32_t pid = 0;
  std::string hostname;
  uint32_t sequence = 0;  // %n (OpenOutputFile sets it)
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

struct OutputFile {
  std::unique_ptr<FileSink> sink;
  std::string path;       // the file opened
  std::string requested;  // the name the template asked for, when another one was opened
};

// Expands `templ`, creates the folders it names and creates the file exclusively, so that
// processes racing for one name each get their own:
// - with %n, the sequence counts up from 1 to the first number whose name is free ("run.%n.pb"
//   gives run.1.pb, run.2.pb, ... over the processes of a job and over successive runs);
// - otherwise an existing file is replaced only if `overwrite`, else the next free "stem.N.ext"
//   is taken and `requested` says which name was asked for.
// The error is one sentence (bad template, unusable folder, nothing free).
std::expected<OutputFile, std::string> OpenOutputFile(const std::string& templ,
                                                      PathContext context, bool overwrite);

// LIBPROF_TRACE_LIST: appends `path` (made absolute against the working directory) and a newline
// to the file `list`, created if needed, in one O_APPEND write, so that the processes of a job
// writing at once never interleave. This is how collect.sh --stats learns which traces a run
// wrote without guessing from the template. The error is one sentence.
std::expected<void, std::string> AppendToTraceList(const std::string& list,
                                                   const std::string& path);

}  // namespace libprof
