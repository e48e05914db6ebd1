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
#include <utility>
#include <vector>

#include "proto/trace_model.h"

namespace libprof {
namespace trace {
class Chunk;  // generated from proto/trace.proto
}  // namespace trace
struct ProcessTables;  // chunk_decoder.h

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

  const std::string& path() const { return path_; }
  bool truncated() const { return truncated_; }  // the file ends inside a chunk
  const std::string& error() const { return error_; }  // "" unless a chunk was corrupt
  uint64_t bytes_read() const { return bytes_read_; }  // up to the end of the last good chunk
  uint64_t chunks_read() const { return chunks_read_; }
  uint64_t file_size() const { return file_size_; }
  // Fields of the chunks read so far that this reader does not know (a record kind written by a
  // newer libprof): field number -> occurrences (one per record of a repeated field). Next()
  // skips them; a tool that copies whole traces says what it left out.
  const std::map<uint32_t, uint64_t>& unknown_chunk_fields() const { return unknown_chunk_fields_; }

  // Next in steps, so that chunk_prefetcher.h can decode several chunks at once. Next is, for one
  // chunk: ReadChunk, ParseChunk, DefineChunk, DecodeDefined, Settle. ReadChunk, DefineChunk and
  // Settle take the chunks in file order, one thread at a time (each step may be on its own
  // thread: they touch different members); ParseChunk and DecodeDefined touch only their chunk
  // (and the file's path) and may run at once on several threads. A step meeting damage marks
  // the chunk failed and the later steps pass it on to Settle, which ends the read as Next would
  // have: so the first damage in file order is the one error() names, whichever thread met it.
  struct ChunkOutcome {
    enum class Kind { kChunk, kEnd, kTruncated, kFailed };
    Kind kind = Kind::kChunk;
    uint64_t end = 0;  // of the bytes read up to and with this chunk (0: none beyond the last)
    std::string error;  // kFailed: what error() becomes
    uint32_t process_index = 0;
    std::vector<std::pair<uint32_t, std::string>> strings;  // the string ids it defined, values
    std::vector<uint32_t> unknown_fields;  // numbers of the chunk fields this reader does not know
  };
  struct ChunkInFlight {  // a chunk between the steps; reused, it keeps its buffers' room
    ChunkInFlight();
    ~ChunkInFlight();
    ChunkOutcome outcome;
    uint64_t offset = 0;  // of its field in the file
    std::string bytes;
    std::unique_ptr<trace::Chunk> parsed;
    // DefineChunk's copy of the tables its records are decoded with (shared with the chunks
    // after it until one adds to them); none: the reader's own (Next, one thread).
    std::shared_ptr<const ProcessTables> tables;
  };
  // The next chunk's bytes, or the end of the read (kEnd, kTruncated, kFailed).
  void ReadChunk(ChunkInFlight* chunk);
  void ParseChunk(ChunkInFlight* chunk) const;
  // Adds the chunk's definitions to its process's tables (the strings it defined also to its
  // outcome); with `copy_tables`, chunk->tables then holds what DecodeDefined needs, so that
  // later chunks may be defined meanwhile.
  void DefineChunk(ChunkInFlight* chunk, bool copy_tables);
  // The chunk's records into *out (cleared first).
  void DecodeDefined(ChunkInFlight* chunk, TraceRecords* out) const;
  // Counts the chunk as read, or ends the read as its outcome says: true for a chunk.
  bool Settle(const ChunkOutcome& outcome);

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
  // What NextChunk does with a chunk: Next, NextNvtx or AppendNext.
  enum class Mode { kRecords, kNvtx, kAppend };
  // `out` for kRecords and kNvtx; `into` and `process_index` for kAppend.
  bool NextChunk(Mode mode, TraceRecords* out, std::span<TraceRecords* const> into,
                 uint32_t* process_index);
  // Marks `chunk` failed with "path: chunk at byte N <problem>".
  void FailChunk(ChunkInFlight* chunk, const std::string& problem) const;
  // The process of a parsed chunk, checked against the headers (and against `into`, if given).
  bool CheckProcess(ChunkInFlight* chunk, size_t asked_for) const;

  std::ifstream file_;
  uint64_t offset_ = 0;  // of the next byte file_ gives
  bool ended_ = false;
  ChunkInFlight chunk_;  // Next's, reused: keeps protobuf's allocations across chunks
  bool read_ended_ = false;  // ReadChunk met the end of what can be read
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
