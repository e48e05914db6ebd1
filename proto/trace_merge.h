// Merges libprof trace files (one per process, or already merged) into one multi-process trace
// file: every header first, in input order, then every chunk of every input with
// Chunk.process_index set to its header's position in the output (proto/trace.proto).
//
// Layer: proto/, reader side (libprof_trace_reader), shared by `profview merge` and tests; never
// linked into libprof.so. It streams: chunks are copied as bytes, never decoded into records, so
// memory stays bounded by one chunk and the output keeps every field of the inputs, including fields of
// a newer schema. A chunk moves to another process index by appending the varint field
// process_index to its bytes (protobuf keeps the last value of a scalar field).
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "proto/trace_inputs.h"
#include "proto/trace_model.h"

namespace libprof {

struct MergeOptions {
  // Replace an existing output file. An input is never replaced, whatever this says.
  bool overwrite = false;
  // Keep the complete chunks of an input that ends inside a chunk (a process that crashed while
  // writing), with a warning; otherwise such an input is an error.
  bool allow_truncated = false;
};

// One process of the merged file, in output order (its index is its process_index).
struct MergedProcess {
  std::string source;  // the input file it came from
  TraceHeader header;
  uint64_t chunks = 0;
};

struct MergeReport {
  std::vector<MergedProcess> processes;
  uint64_t input_files = 0;
  uint64_t chunks = 0;
  uint64_t bytes_written = 0;
  std::vector<std::string> warnings;  // one sentence each, naming the input
};

// Merges `inputs` (files; see ExpandTraceInputs for directories) into `output`. The output is
// written to a temporary file beside it and renamed into place, so it appears whole or not at
// all. Errors are one sentence naming the file: an input missing, not a trace, of another schema
// version, corrupt (a chunk whose field framing is broken) or cut short (unless allowed); the
// same input given twice; the output existing (unless overwrite), being an input, a directory,
// or not writable.
std::expected<MergeReport, std::string> MergeTraceFiles(const std::vector<std::string>& inputs,
                                                        const std::string& output,
                                                        const MergeOptions& options);

}  // namespace libprof
