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

struct TraceReader::ProcessState : ProcessTables {};

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

bool TraceReader::Fail(const std::string& problem) {
  error_ = path_ + ": " + problem;
  return false;
}

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
  try {
    Field field;
    while (true) {
      switch (ReadField(&field)) {
        case Read::kOk:
          break;
        case Read::kEnd:
          ended_ = true;
          return false;
        case Read::kTruncated:
          truncated_ = true;
          return false;
        case Read::kBad:
          if (field.oversized != 0) {
            return Fail("field at byte " + std::to_string(field.offset) + " is " +
                        std::to_string(field.oversized) + " bytes long (over the 1 GiB limit)");
          }
          return Fail("invalid field tag at byte " + std::to_string(field.offset));
      }
      const std::string at = std::to_string(field.offset);
      if (field.number == kHeaderField) {
        return Fail("header at byte " + at +
                    " follows trace data (concatenated trace files are not supported)");
      }
      if (field.number != kChunkField || field.wire_type != kLengthDelimited) {
        bytes_read_ = offset_;  // a field of a newer schema: skip it
        continue;
      }
      std::string problem;
      if (mode == Mode::kNvtx) {
        const uint32_t index = PeekProcessIndex(field.bytes);
        if (index >= processes_.size()) {
          return Fail("chunk at byte " + at + " belongs to process " + std::to_string(index) +
                      " but the file has " + std::to_string(headers_.size()) + " header(s)");
        }
        if (!DecodeNvtxChunk(field.bytes, processes_[index].get(), out, &problem)) {
          *out = TraceRecords{};
          return Fail("chunk at byte " + at + " " + problem);
        }
      } else {
        if (!chunk_) chunk_ = std::make_unique<trace::Chunk>();
        if (!ParseQuietly(field.bytes, chunk_.get())) {
          return Fail("chunk at byte " + at + " is corrupt");
        }
        if (chunk_->process_index() >= processes_.size()) {
          return Fail("chunk at byte " + at + " belongs to process " +
                      std::to_string(chunk_->process_index()) + " but the file has " +
                      std::to_string(headers_.size()) + " header(s)");
        }
        const uint32_t index = chunk_->process_index();
        if (mode == Mode::kAppend && index >= into.size()) {
          return Fail("chunk at byte " + at + " belongs to process " + std::to_string(index) +
                      " but only " + std::to_string(into.size()) + " were asked for");
        }
        const bool decoded =
            mode == Mode::kAppend
                ? AppendChunk(*chunk_, processes_[index].get(), into[index], &problem)
                : DecodeChunk(*chunk_, processes_[index].get(), out, &problem);
        if (!decoded) {
          if (out != nullptr) *out = TraceRecords{};
          return Fail("chunk at byte " + at + " " + problem);
        }
        if (process_index != nullptr) *process_index = index;
        const auto& unknown = chunk_->GetReflection()->GetUnknownFields(*chunk_);
        for (int i = 0; i < unknown.field_count(); ++i) {
          ++unknown_chunk_fields_[static_cast<uint32_t>(unknown.field(i).number())];
        }
      }
      bytes_read_ = offset_;
      ++chunks_read_;
      return true;
    }
  } catch (const std::exception& e) {
    if (out != nullptr) *out = TraceRecords{};
    return Fail("chunk after byte " + std::to_string(bytes_read_) + " cannot be decoded (" +
                e.what() + ")");
  }
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
