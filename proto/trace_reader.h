// Reads a libprof trace chunk by chunk, so that files of any size stream through bounded memory.
//
// Layer: proto/ (CUDA-free). Uses libprotobuf, so it is linked into the tools, never into
// libprof.so. A file cut short (a crashed process) reads up to its last complete chunk and then
// reports the truncation; a corrupt chunk stops reading with an error; neither throws.
#pragma once

#include <cstdint>
#include <expected>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "proto/trace_model.h"

namespace libprof {
namespace trace {
class Chunk;  // generated from proto/trace.proto
}  // namespace trace

class TraceReader {
 public:
  // Opens `path` and reads and validates the header. The error is one sentence that names the
  // file: missing, unreadable, not a libprof trace, unsupported schema version, cut inside the
  // header.
  static std::expected<std::unique_ptr<TraceReader>, std::string> Open(const std::string& path);
  ~TraceReader();

  // Headers of the processes in this file: one for a plain trace, several for a merged one.
  const std::vector<TraceHeader>& headers() const { return headers_; }
  const TraceHeader& header() const { return headers_.front(); }

  // Decodes the next chunk into *out (cleared first): absolute times, thread ids, resolved
  // kernel shapes and API name ids. Returns false at the end of the file or when the rest cannot
  // be read; then truncated() / error() tell which.
  bool Next(TraceRecords* out);
  // Like Next, but decodes only NVTX events and domains (with absolute times and thread ids) and
  // skips every other record without parsing it: a cheap first pass over the NVTX ranges; the
  // string table is read too. Use a reader for either Next or NextNvtx, not both (NextNvtx
  // leaves out the API-name and kernel-shape tables that Next needs).
  bool NextNvtx(TraceRecords* out);
  // Like Next, but appends the chunk's records to *into[p] (AppendChunk), p being the chunk's
  // process (set in *process_index; `into` has one entry per header), instead of handing over a
  // fresh TraceRecords: a whole trace is built without copying each chunk once more. On a
  // corrupt chunk *into[p] may hold part of it.
  bool AppendNext(std::span<TraceRecords* const> into, uint32_t* process_index);

  // The string table of a process, as far as the chunks read so far define it.
  const std::vector<std::string>& strings(uint32_t process_index = 0) const;
  // The ids of the strings the last chunk read defined (in its process's table).
  const std::vector<uint32_t>& strings_defined(uint32_t process_index = 0) const;
  // The string with `id`, or "" for an id not (yet) defined.
  const std::string& String(uint32_t id, uint32_t process_index = 0) const;

  bool truncated() const { return truncated_; }  // the file ends inside a chunk
  const std::string& error() const { return error_; }  // "" unless a chunk was corrupt
  uint64_t bytes_read() const { return bytes_read_; }  // up to the end of the last good chunk
  uint64_t chunks_read() const { return chunks_read_; }
  uint64_t file_size() const { return file_size_; }
  // Fields of the chunks read so far that this reader does not know (a record kind written by a
  // newer libprof): field number -> occurrences (one per record of a repeated field). Next()
  // skips them; a tool that copies whole traces says what it left out.
  const std::map<uint32_t, uint64_t>& unknown_chunk_fields() const { return unknown_chunk_fields_; }

 private:
  struct ProcessState;
  enum class Read;
  // One top-level field of the file: its position, number, wire type and payload.
  struct Field {
    uint64_t offset = 0;
    std::string bytes;
    uint64_t number = 0;
    uint32_t wire_type = 0;
    uint64_t oversized = 0;  // the declared length, when over the limit
  };
  TraceReader() = default;

  std::string OpenAndReadHeaders(const std::string& path);  // "" or Open's error
  Read ReadVarint(uint64_t* value);
  Read ReadBytes(uint64_t size, std::string* out);
  Read ReadField(Field* field);
  bool Fail(const std::string& problem);  // sets error_ to "path: problem"; returns false
  // What NextChunk does with a chunk: Next, NextNvtx or AppendNext.
  enum class Mode { kRecords, kNvtx, kAppend };
  // `out` for kRecords and kNvtx; `into` and `process_index` for kAppend.
  bool NextChunk(Mode mode, TraceRecords* out, std::span<TraceRecords* const> into,
                 uint32_t* process_index);

  std::ifstream file_;
  uint64_t offset_ = 0;  // of the next byte file_ gives
  bool ended_ = false;
  std::unique_ptr<trace::Chunk> chunk_;  // reused: keeps protobuf's allocations across chunks
  std::string path_;
  std::vector<TraceHeader> headers_;
  std::vector<std::unique_ptr<ProcessState>> processes_;
  bool truncated_ = false;
  std::string error_;
  uint64_t bytes_read_ = 0;
  uint64_t chunks_read_ = 0;
  uint64_t file_size_ = 0;
  std::map<uint32_t, uint64_t> unknown_chunk_fields_;
};

}  // namespace libprof
