// TraceReader: walks the top-level fields of a TraceFile one at a time (tag, length, bytes) so
// that memory stays bounded by one chunk, and sorts what it finds into three outcomes: clean end,
// truncation (the file ends inside a field: a crashed writer) and corruption (error()).
#include "proto/trace_reader.h"

#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <protozero/pbf_reader.hpp>

#include "proto/chunk_decoder.h"

namespace libprof {
namespace {

// The writer closes chunks at about 1 MiB; anything near this is corrupt, and refusing it keeps
// a damaged length from making us allocate gigabytes.
constexpr uint64_t kMaxFieldBytes = uint64_t{1} << 30;

constexpr uint32_t kHeaderField = 1;
constexpr uint32_t kChunkField = 2;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Parses without libprotobuf's own stderr lines ("invalid UTF-8 ..."): the reader reports a
// corrupt chunk itself, in one sentence that names the file and the offset.
bool ParseQuietly(const std::string& bytes, google::protobuf::Message* message) {
  google::protobuf::LogSilencer silence;
  return message->ParseFromString(bytes);
}

// Chunk.process_index (field 1) without parsing the rest; 0 when absent, as proto3 reads it.
uint32_t PeekProcessIndex(const std::string& bytes) {
  try {
    protozero::pbf_reader chunk(bytes.data(), bytes.size());
    uint32_t index = 0;
    while (chunk.next(1)) {  // the last occurrence wins, as in protobuf
      if (chunk.wire_type() == protozero::pbf_wire_type::varint) {
        index = chunk.get_uint32();
      } else {
        chunk.skip();  // protobuf takes it for an unknown field
      }
    }
    return index;
  } catch (const protozero::exception&) {
    return 0;  // the damage is reported by DecodeNvtxChunk
  }
}

const std::string& EmptyString() {
  static const std::string* empty = new std::string;
  return *empty;
}

}  // namespace

struct TraceReader::ProcessState : ProcessTables {
  // DefineChunk's last copy of the decoding tables, shared until a chunk adds to them.
  std::shared_ptr<const ProcessTables> tables_copy;
};

// Outcome of reading one varint or one run of bytes.
enum class TraceReader::Read { kOk, kEnd, kTruncated, kBad };

TraceReader::~TraceReader() = default;

TraceReader::Read TraceReader::ReadVarint(uint64_t* value) {
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    const int byte = file_.get();
    if (byte == std::char_traits<char>::eof()) return i == 0 ? Read::kEnd : Read::kTruncated;
    ++offset_;
    result |= uint64_t{static_cast<uint8_t>(byte) & 0x7Fu} << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = result;
      return Read::kOk;
    }
  }
  return Read::kBad;  // more than 10 bytes: not a varint
}

TraceReader::Read TraceReader::ReadBytes(uint64_t size, std::string* out) {
  if (size > kMaxFieldBytes) return Read::kBad;
  // Checked against the size before allocating: a cut file must not cost a huge buffer.
  if (size > file_size_ - std::min(offset_, file_size_)) return Read::kTruncated;
  out->resize(size);
  file_.read(out->data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(file_.gcount()) != size) return Read::kTruncated;
  offset_ += size;
  return Read::kOk;
}

TraceReader::Read TraceReader::ReadField(Field* field) {
  *field = Field{.offset = offset_, .bytes = std::move(field->bytes)};  // keeps the buffer
  uint64_t tag = 0;
  if (Read r = ReadVarint(&tag); r != Read::kOk) return r;
  field->number = tag >> 3;
  field->wire_type = tag & 7;
  if (field->number == 0 || field->number > 0x1FFFFFFF) return Read::kBad;
  uint64_t size = 0;
  Read r = Read::kBad;
  switch (field->wire_type) {
    case kVarint:
      r = ReadVarint(&size);
      if (r == Read::kOk) field->bytes.clear();
      break;
    case kFixed64:
      r = ReadBytes(8, &field->bytes);
      break;
    case kFixed32:
      r = ReadBytes(4, &field->bytes);
      break;
    case kLengthDelimited:
      r = ReadVarint(&size);
      if (r == Read::kOk) r = ReadBytes(size, &field->bytes);
      if (r == Read::kBad && size > kMaxFieldBytes) field->oversized = size;
      break;
    default:
      return Read::kBad;  // groups (deprecated) and invalid wire types
  }
  return r == Read::kEnd ? Read::kTruncated : r;
}

std::expected<std::unique_ptr<TraceReader>, std::string> TraceReader::Open(
    const std::string& path) {
  std::unique_ptr<TraceReader> reader;
  std::string error;
  try {
    reader.reset(new TraceReader());
    error = reader->OpenAndReadHeaders(path);
  } catch (const std::exception& e) {
    error = path + ": cannot be read (" + e.what() + ")";
  }
  if (!error.empty()) return std::unexpected(std::move(error));
  return reader;
}

std::string TraceReader::OpenAndReadHeaders(const std::string& path) {
  path_ = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return path + ": is a directory, not a trace file";
  errno = 0;
  file_.open(path, std::ios::binary);
  if (!file_.is_open()) {
    return path + ": cannot open (" + std::strerror(errno != 0 ? errno : ENOENT) + ")";
  }
  file_size_ = std::filesystem::file_size(path, ec);
  if (ec) return path + ": cannot read its size (" + ec.message() + ")";
  if (file_size_ == 0) return path + ": empty file, not a libprof trace";

  Field field;
  switch (ReadField(&field)) {
    case Read::kOk:
      break;
    case Read::kEnd:
    case Read::kTruncated:
      // A first byte that opens a header is a trace cut short; anything else is another file.
      if (field.number == kHeaderField && field.wire_type == kLengthDelimited) {
        return path + ": file ends inside the header";
      }
      return path + ": not a libprof trace (no header)";
    case Read::kBad:
      return path + ": not a libprof trace (no header)";
  }
  if (field.number != kHeaderField || field.wire_type != kLengthDelimited) {
    return path + ": not a libprof trace (no header)";
  }
  // All headers (one per process of a merged file) come before the first chunk.
  while (true) {
    trace::Header header;
    if (!ParseQuietly(field.bytes, &header) || header.format() != kTraceFormat) {
      if (headers_.empty()) return path + ": not a libprof trace (no header)";
      return path + ": header at byte " + std::to_string(field.offset) + " is corrupt";
    }
    if (header.schema_version() != kSchemaVersion) {
      return path + ": schema version " + std::to_string(header.schema_version()) +
             " is not supported (this profview reads " + std::to_string(kSchemaVersion) + ")";
    }
    headers_.push_back(DecodeHeader(header));
    processes_.push_back(std::make_unique<ProcessState>());
    bytes_read_ = offset_;
    const Read next = ReadField(&field);
    if (next == Read::kOk && field.number == kHeaderField && field.wire_type == kLengthDelimited) {
      continue;
    }
    if (next == Read::kTruncated && field.number == kHeaderField) {
      return path + ": file ends inside the header";
    }
    // Anything else is Next()'s business: step back to the start of that field.
    file_.clear();
    file_.seekg(static_cast<std::streamoff>(field.offset));
    offset_ = field.offset;
    return "";
  }
}

TraceReader::ChunkInFlight::ChunkInFlight() = default;
TraceReader::ChunkInFlight::~ChunkInFlight() = default;

bool TraceReader::Next(TraceRecords* out) { return NextChunk(Mode::kRecords, out, {}, nullptr); }

bool TraceReader::NextNvtx(TraceRecords* out) { return NextChunk(Mode::kNvtx, out, {}, nullptr); }

bool TraceReader::AppendNext(std::span<TraceRecords* const> into, uint32_t* process_index) {
  return NextChunk(Mode::kAppend, nullptr, into, process_index);
}

bool TraceReader::NextChunk(Mode mode, TraceRecords* out, std::span<TraceRecords* const> into,
                            uint32_t* process_index) {
  if (out != nullptr) EmptyKeepingRoom(out);
  for (auto& process : processes_) process->defined.clear();
  if (!error_.empty() || truncated_ || ended_) return false;
  ChunkInFlight& chunk = chunk_;
  using Kind = ChunkOutcome::Kind;
  try {
    ReadChunk(&chunk);
    if (chunk.outcome.kind == Kind::kChunk && mode == Mode::kNvtx) {
      const uint32_t index = PeekProcessIndex(chunk.bytes);
      chunk.outcome.process_index = index;
      std::string problem;
      if (CheckProcess(&chunk, processes_.size()) &&
          !DecodeNvtxChunk(chunk.bytes, processes_[index].get(), out, &problem)) {
        FailChunk(&chunk, problem);
      }
    } else if (chunk.outcome.kind == Kind::kChunk) {
      ParseChunk(&chunk);
      if (mode == Mode::kAppend && chunk.outcome.kind == Kind::kChunk &&
          CheckProcess(&chunk, into.size())) {
        const uint32_t index = chunk.outcome.process_index;
        std::string problem;
        if (!AppendChunk(*chunk.parsed, processes_[index].get(), into[index], &problem)) {
          FailChunk(&chunk, problem);
        } else if (process_index != nullptr) {
          *process_index = index;
        }
      } else if (mode == Mode::kRecords) {
        DefineChunk(&chunk, /*copy_tables=*/false);
        DecodeDefined(&chunk, out);
      }
    }
  } catch (const std::exception& e) {
    chunk.outcome.kind = Kind::kFailed;
    chunk.outcome.error = path_ + ": chunk after byte " + std::to_string(bytes_read_) +
                          " cannot be decoded (" + e.what() + ")";
  }
  if (chunk.outcome.kind == Kind::kFailed && out != nullptr) *out = TraceRecords{};
  return Settle(chunk.outcome);
}

void TraceReader::FailChunk(ChunkInFlight* chunk, const std::string& problem) const {
  chunk->outcome.kind = ChunkOutcome::Kind::kFailed;
  chunk->outcome.end = chunk->offset;  // what was read is good up to the chunk
  chunk->outcome.error = path_ + ": chunk at byte " + std::to_string(chunk->offset) + " " + problem;
}

bool TraceReader::CheckProcess(ChunkInFlight* chunk, size_t asked_for) const {
  const uint32_t index = chunk->outcome.process_index;
  if (index >= processes_.size()) {
    FailChunk(chunk, "belongs to process " + std::to_string(index) + " but the file has " +
                         std::to_string(headers_.size()) + " header(s)");
    return false;
  }
  if (index >= asked_for) {
    FailChunk(chunk, "belongs to process " + std::to_string(index) + " but only " +
                         std::to_string(asked_for) + " were asked for");
    return false;
  }
  return true;
}

void TraceReader::ReadChunk(ChunkInFlight* chunk) {
  ChunkOutcome& outcome = chunk->outcome;
  outcome.kind = ChunkOutcome::Kind::kChunk;
  outcome.end = 0;
  outcome.error.clear();
  outcome.process_index = 0;
  outcome.strings.clear();  // (cleared, not replaced: they keep their room)
  outcome.unknown_fields.clear();
  using Kind = ChunkOutcome::Kind;
  if (read_ended_) {
    outcome.kind = Kind::kEnd;
    return;
  }
  Field field{.bytes = std::move(chunk->bytes)};
  auto fail = [&](const std::string& problem) {
    outcome.kind = Kind::kFailed;
    outcome.error = path_ + ": " + problem;
    read_ended_ = true;
  };
  while (true) {
    switch (ReadField(&field)) {
      case Read::kOk:
        break;
      case Read::kEnd:
        outcome.kind = Kind::kEnd;
        read_ended_ = true;
        return;
      case Read::kTruncated:
        outcome.kind = Kind::kTruncated;
        read_ended_ = true;
        return;
      case Read::kBad:
        if (field.oversized != 0) {
          return fail("field at byte " + std::to_string(field.offset) + " is " +
                      std::to_string(field.oversized) + " bytes long (over the 1 GiB limit)");
        }
        return fail("invalid field tag at byte " + std::to_string(field.offset));
    }
    if (field.number == kHeaderField) {
      return fail("header at byte " + std::to_string(field.offset) +
                  " follows trace data (concatenated trace files are not supported)");
    }
    if (field.number != kChunkField || field.wire_type != kLengthDelimited) {
      outcome.end = offset_;  // a field of a newer schema: skip it
      continue;
    }
    chunk->offset = field.offset;
    chunk->bytes = std::move(field.bytes);
    outcome.end = offset_;
    return;
  }
}

void TraceReader::ParseChunk(ChunkInFlight* chunk) const {
  if (chunk->outcome.kind != ChunkOutcome::Kind::kChunk) return;
  if (!chunk->parsed) chunk->parsed = std::make_unique<trace::Chunk>();
  if (!ParseQuietly(chunk->bytes, chunk->parsed.get())) return FailChunk(chunk, "is corrupt");
  chunk->outcome.process_index = chunk->parsed->process_index();
  const auto& unknown = chunk->parsed->GetReflection()->GetUnknownFields(*chunk->parsed);
  for (int i = 0; i < unknown.field_count(); ++i) {
    chunk->outcome.unknown_fields.push_back(static_cast<uint32_t>(unknown.field(i).number()));
  }
}

void TraceReader::DefineChunk(ChunkInFlight* chunk, bool copy_tables) {
  if (chunk->outcome.kind != ChunkOutcome::Kind::kChunk) return;
  if (!CheckProcess(chunk, processes_.size())) return;
  ProcessState& state = *processes_[chunk->outcome.process_index];
  const size_t defined_before = state.defined.size();
  std::string problem;
  if (!AddDefinitions(*chunk->parsed, &state, &problem)) return FailChunk(chunk, problem);
  for (size_t i = defined_before; i < state.defined.size(); ++i) {
    chunk->outcome.strings.push_back({state.defined[i], state.strings[state.defined[i]]});
  }
  if (copy_tables) {
    state.defined.resize(defined_before);  // no Next clears it, and no one asks meanwhile
    if (!state.tables_copy || DefinesDecodingTables(*chunk->parsed)) {
      state.tables_copy = std::make_shared<const ProcessTables>(DecodingTables(state));
    }
    chunk->tables = state.tables_copy;
  } else {
    chunk->tables.reset();
  }
}

void TraceReader::DecodeDefined(ChunkInFlight* chunk, TraceRecords* out) const {
  EmptyKeepingRoom(out);
  if (chunk->outcome.kind != ChunkOutcome::Kind::kChunk) return;
  const trace::Chunk& parsed = *chunk->parsed;
  const ProcessTables& tables =
      chunk->tables ? *chunk->tables : *processes_[chunk->outcome.process_index];
  out->process_index = parsed.process_index();
  out->sequence = parsed.sequence();
  std::string problem;
  if (!DecodeRecordLists(parsed, tables, out, &problem)) {
    FailChunk(chunk, problem);
    *out = TraceRecords{};
  }
}

bool TraceReader::Settle(const ChunkOutcome& outcome) {
  if (outcome.end != 0) bytes_read_ = outcome.end;  // (a chunk's; skipped fields' at the end)
  switch (outcome.kind) {
    case ChunkOutcome::Kind::kChunk:
      ++chunks_read_;
      for (uint32_t number : outcome.unknown_fields) ++unknown_chunk_fields_[number];
      return true;
    case ChunkOutcome::Kind::kEnd:
      ended_ = true;
      return false;
    case ChunkOutcome::Kind::kTruncated:
      truncated_ = true;
      return false;
    case ChunkOutcome::Kind::kFailed:
      error_ = outcome.error;
      return false;
  }
  return false;
}

const std::vector<std::string>& TraceReader::strings(uint32_t process_index) const {
  static const std::vector<std::string>* none = new std::vector<std::string>{""};
  return process_index < processes_.size() ? processes_[process_index]->strings : *none;
}

const std::vector<uint32_t>& TraceReader::strings_defined(uint32_t process_index) const {
  static const std::vector<uint32_t>* none = new std::vector<uint32_t>;
  return process_index < processes_.size() ? processes_[process_index]->defined : *none;
}

const std::string& TraceReader::String(uint32_t id, uint32_t process_index) const {
  const std::vector<std::string>& table = strings(process_index);
  return id < table.size() ? table[id] : EmptyString();
}

}  // namespace libprof
