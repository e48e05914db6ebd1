// Trace merging in two streaming passes: first the headers of every input (they all precede the
// first chunk of the output), then the chunks of each input in turn, copied as bytes with their
// process index rewritten. Only the framing of the file and of each chunk's fields is examined.
#include "proto/trace_merge.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "proto/chunk_decoder.h"
#include "proto/trace.pb.h"
#include "proto/trace_wire.h"

namespace libprof {
namespace {

namespace fs = std::filesystem;

// As TraceReader: a field near this size is corrupt, and refusing it bounds what we allocate.
constexpr uint64_t kMaxFieldBytes = uint64_t{1} << 30;
// Output buffering: large writes, few system calls (chunks are ~1 MiB, see TraceWriter).
constexpr size_t kOutputBufferBytes = size_t{1} << 20;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

std::string ErrnoText() { return std::strerror(errno); }

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Reads a varint from bytes[*pos...]; false if it runs past the end or over 10 bytes.
bool ParseVarint(std::string_view bytes, size_t* pos, uint64_t* value) {
  uint64_t result = 0;
  for (int i = 0; i < 10 && *pos < bytes.size(); ++i) {
    const uint8_t byte = static_cast<uint8_t>(bytes[(*pos)++]);
    result |= uint64_t{byte & 0x7Fu} << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

// Walks the fields of a serialised Chunk without decoding them: every tag, wire type and length
// must be well formed and stay inside the chunk. Sets *process_index to the value the protobuf
// parser would take (the last varint field 1; 0 when absent). False on broken framing.
bool ScanChunk(std::string_view bytes, uint32_t* process_index) {
  *process_index = 0;
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t tag = 0, value = 0;
    if (!ParseVarint(bytes, &pos, &tag)) return false;
    const uint64_t number = tag >> 3;
    if (number == 0 || number > 0x1FFFFFFF) return false;
    switch (tag & 7) {
      case kVarint:
        if (!ParseVarint(bytes, &pos, &value)) return false;
        // A uint32 field keeps the low 32 bits of a wider varint, as protobuf does.
        if (number == wire::chunk::kProcessIndex) *process_index = static_cast<uint32_t>(value);
        break;
      case kFixed64:
        if (bytes.size() - pos < 8) return false;
        pos += 8;
        break;
      case kFixed32:
        if (bytes.size() - pos < 4) return false;
        pos += 4;
        break;
      case kLengthDelimited:
        if (!ParseVarint(bytes, &pos, &value) || value > bytes.size() - pos) return false;
        pos += value;
        break;
      default:
        return false;  // groups: not in this schema
    }
  }
  return true;
}

// One top-level field of a trace file, kept as the exact bytes read: `prefix` (tag and, for
// length-delimited fields, length) then `payload`.
struct RawField {
  uint64_t offset = 0;
  uint64_t number = 0;
  uint32_t wire_type = 0;
  std::string prefix;
  std::string payload;
};

// Reads the top-level fields of a trace file one at a time.
class FieldStream {
 public:
  enum class Read { kOk, kEnd, kTruncated, kBad };

  // "" or an error naming the file.
  std::string Open(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return path + ": is a directory, not a trace file";
    errno = 0;
    file_.open(path, std::ios::binary);
    if (!file_.is_open()) {
      return path + ": cannot open (" + std::strerror(errno != 0 ? errno : ENOENT) + ")";
    }
    size_ = fs::file_size(path, ec);
    if (ec) return path + ": cannot read its size (" + ec.message() + ")";
    return "";
  }

  uint64_t size() const { return size_; }
  uint64_t offset() const { return offset_; }

  void Seek(uint64_t offset) {
    file_.clear();
    file_.seekg(static_cast<std::streamoff>(offset));
    offset_ = offset;
  }

  Read Next(RawField* field) {
    field->offset = offset_;
    field->prefix.clear();
    field->payload.clear();
    uint64_t tag = 0;
    if (Read r = ReadVarint(&tag, &field->prefix); r != Read::kOk) return r;
    field->number = tag >> 3;
    field->wire_type = static_cast<uint32_t>(tag & 7);
    if (field->number == 0 || field->number > 0x1FFFFFFF) return Read::kBad;
    uint64_t size = 0;
    Read r = Read::kBad;
    switch (field->wire_type) {
      case kVarint:
        r = ReadVarint(&size, &field->prefix);
        break;
      case kFixed64:
        r = ReadPayload(8, &field->payload);
        break;
      case kFixed32:
        r = ReadPayload(4, &field->payload);
        break;
      case kLengthDelimited:
        r = ReadVarint(&size, &field->prefix);
        if (r == Read::kOk) r = ReadPayload(size, &field->payload);
        break;
      default:
        return Read::kBad;
    }
    return r == Read::kEnd ? Read::kTruncated : r;
  }

 private:
  Read ReadVarint(uint64_t* value, std::string* raw) {
    uint64_t result = 0;
    for (int i = 0; i < 10; ++i) {
      const int byte = file_.get();
      if (byte == std::char_traits<char>::eof()) return i == 0 ? Read::kEnd : Read::kTruncated;
      ++offset_;
      raw->push_back(static_cast<char>(byte));
      result |= uint64_t{static_cast<uint8_t>(byte) & 0x7Fu} << (7 * i);
      if ((byte & 0x80) == 0) {
        *value = result;
        return Read::kOk;
      }
    }
    return Read::kBad;
  }

  Read ReadPayload(uint64_t size, std::string* out) {
    if (size > kMaxFieldBytes) return Read::kBad;
    // Checked before allocating: a cut or damaged length must not cost a huge buffer.
    if (size > size_ - std::min(offset_, size_)) return Read::kTruncated;
    out->resize(size);
    file_.read(out->data(), static_cast<std::streamsize>(size));
    if (static_cast<uint64_t>(file_.gcount()) != size) return Read::kTruncated;
    offset_ += size;
    return Read::kOk;
  }

  std::ifstream file_;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
};

// What the first pass learns about an input.
struct Input {
  std::string path;
  std::vector<std::string> header_fields;  // exact bytes, prefix included
  std::vector<TraceHeader> headers;
  uint64_t chunks_offset = 0;  // where the first field after the headers starts
  uint64_t size = 0;
};

// Reads and checks the headers of `path` (the same checks as TraceReader::Open). "" or an error.
std::string ReadHeaders(const std::string& path, Input* input) {
  input->path = path;
  FieldStream stream;
  if (std::string error = stream.Open(path); !error.empty()) return error;
  input->size = stream.size();
  if (stream.size() == 0) return path + ": empty file, not a libprof trace";
  RawField field;
  while (true) {
    const FieldStream::Read r = stream.Next(&field);
    const bool is_header =
        field.number == wire::trace_file::kHeader && field.wire_type == kLengthDelimited;
    if (r == FieldStream::Read::kTruncated && is_header) {
      return path + ": file ends inside the header at byte " + std::to_string(field.offset);
    }
    if (r != FieldStream::Read::kOk || !is_header) {
      if (input->headers.empty()) return path + ": not a libprof trace (no header)";
      input->chunks_offset = field.offset;  // the rest is the second pass's business
      return "";
    }
    trace::Header header;
    if (!header.ParseFromString(field.payload) || header.format() != kTraceFormat) {
      if (input->headers.empty()) return path + ": not a libprof trace (no header)";
      return path + ": header at byte " + std::to_string(field.offset) + " is corrupt";
    }
    if (header.schema_version() != kSchemaVersion) {
      return path + ": schema version " + std::to_string(header.schema_version()) +
             " is not supported (this merge handles " + std::to_string(kSchemaVersion) + ")";
    }
    input->headers.push_back(DecodeHeader(header));
    input->header_fields.push_back(field.prefix + field.payload);
  }
}

// The merged file while it is written: a temporary file beside `path`, renamed into place by
// Commit() and removed if never committed.
class OutputFile {
 public:
  ~OutputFile() {
    if (file_ != nullptr) fclose(file_);
    if (!temp_.empty()) unlink(temp_.c_str());
  }

  std::string Create(const std::string& path, bool overwrite) {
    path_ = path;
    overwrite_ = overwrite;
    struct stat st;
    if (stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return path + ": is a directory; name the merged file";
      if (!overwrite) return path + ": already exists (--force replaces it)";
    }
    const fs::path target(path);
    const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
    std::string name = dir + "/." + target.filename().string() + ".merge-XXXXXX";
    const int fd = mkstemp(name.data());
    if (fd < 0) return path + ": cannot be created (" + ErrnoText() + " in " + dir + ")";
    temp_ = name;
    // mkstemp makes the file private; give it the mode an ordinary new file gets.
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    file_ = fdopen(fd, "wb");
    if (file_ == nullptr) {
      close(fd);
      return path + ": cannot be created (" + ErrnoText() + ")";
    }
    buffer_.resize(kOutputBufferBytes);
    setvbuf(file_, buffer_.data(), _IOFBF, buffer_.size());
    return "";
  }

  // Appends bytes; false (with error()) when the disk refuses them.
  bool Write(std::string_view bytes) {
    if (!error_.empty()) return false;
    if (fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
      error_ = path_ + ": write failed (" + ErrnoText() + ")";
      return false;
    }
    written_ += bytes.size();
    return true;
  }

  // Closes the file and moves it to its name. "" or an error.
  std::string Commit() {
    if (!error_.empty()) return error_;
    const int closed = fclose(file_);
    file_ = nullptr;
    if (closed != 0) return path_ + ": write failed (" + ErrnoText() + ")";
    // Without overwrite, refuse to replace a file that appeared meanwhile (RENAME_NOREPLACE);
    // a file system that cannot do that gets a plain rename after a last check.
    int renamed = -1;
    if (!overwrite_) {
      renamed = renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
      if (renamed != 0 && errno == EEXIST) return path_ + ": already exists (--force replaces it)";
      if (renamed != 0 && errno != EINVAL && errno != ENOSYS) {
        return path_ + ": cannot be created (" + ErrnoText() + ")";
      }
      if (renamed != 0 && access(path_.c_str(), F_OK) == 0) {
        return path_ + ": already exists (--force replaces it)";
      }
    }
    if (renamed != 0 && rename(temp_.c_str(), path_.c_str()) != 0) {
      return path_ + ": cannot be created (" + ErrnoText() + ")";
    }
    temp_.clear();
    return "";
  }

  uint64_t written() const { return written_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  bool overwrite_ = false;
  std::string temp_;
  FILE* file_ = nullptr;
  std::vector<char> buffer_;
  std::string error_;
  uint64_t written_ = 0;
};

// (device, inode) of an existing file, to recognise one file under two names.
std::optional<std::pair<dev_t, ino_t>> FileId(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::pair{st.st_dev, st.st_ino};
}

// Refuses an input given twice and an output that is one of the inputs. "" or an error.
std::string CheckPaths(const std::vector<std::string>& inputs, const std::string& output) {
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  const auto output_id = FileId(output);
  for (const std::string& path : inputs) {
    const auto id = FileId(path);
    if (!id) continue;  // reported as missing when it is opened
    if (output_id && *id == *output_id) {
      return output + ": is also an input; merge never overwrites an input";
    }
    auto [it, inserted] = seen.emplace(*id, path);
    if (!inserted) return path + ": given twice (also as " + it->second + ")";
  }
  return "";
}

// Copies the chunks (and any other top-level field) of `input`, its process i becoming process
// base + i. Adds to *report; "" or an error.
std::string CopyChunks(const Input& input, uint32_t base, const MergeOptions& options,
                       OutputFile* out, MergeReport* report) {
  FieldStream stream;
  if (std::string error = stream.Open(input.path); !error.empty()) return error;
  if (stream.size() != input.size) return input.path + ": changed while being merged";
  stream.Seek(input.chunks_offset);
  RawField field;
  std::string framed;
  while (true) {
    switch (stream.Next(&field)) {
      case FieldStream::Read::kOk:
        break;
      case FieldStream::Read::kEnd:
        return "";
      case FieldStream::Read::kTruncated: {
        uint64_t complete = 0;
        for (uint32_t i = 0; i < input.headers.size(); ++i) {
          complete += report->processes[base + i].chunks;
        }
        const std::string what = input.path + ": the file ends inside the chunk at byte " +
                                 std::to_string(field.offset) +
                                 " (its process did not finish writing)";
        if (!options.allow_truncated) {
          return what + "; --allow-truncated merges its " + std::to_string(complete) +
                 " complete chunk(s)";
        }
        report->warnings.push_back(what + "; merged its " + std::to_string(complete) +
                                   " complete chunk(s)");
        return "";
      }
      case FieldStream::Read::kBad:
        return input.path + ": invalid field at byte " + std::to_string(field.offset) +
               " (corrupt file)";
    }
    const std::string at = std::to_string(field.offset);
    if (field.number == wire::trace_file::kHeader) {
      return input.path + ": header at byte " + at +
             " follows trace data (concatenated trace files are not supported)";
    }
    if (field.number != wire::trace_file::kChunk || field.wire_type != kLengthDelimited) {
      // A top-level field of a newer schema: kept as it is.
      if (!out->Write(field.prefix) || !out->Write(field.payload)) return out->error();
      continue;
    }
    uint32_t index = 0;
    if (!ScanChunk(field.payload, &index)) {
      return input.path + ": chunk at byte " + at + " is corrupt";
    }
    if (index >= input.headers.size()) {
      return input.path + ": chunk at byte " + at + " belongs to process " + std::to_string(index) +
             " but the file has " + std::to_string(input.headers.size()) + " header(s)";
    }
    const uint32_t merged_index = base + index;
    if (merged_index == index) {
      // Already right (the first input): the chunk's bytes unchanged.
      if (!out->Write(field.prefix) || !out->Write(field.payload)) return out->error();
    } else {
      std::string suffix;
      AppendVarint(uint64_t{wire::chunk::kProcessIndex} << 3 | kVarint, &suffix);
      AppendVarint(merged_index, &suffix);
      framed.clear();
      AppendVarint(uint64_t{wire::trace_file::kChunk} << 3 | kLengthDelimited, &framed);
      AppendVarint(field.payload.size() + suffix.size(), &framed);
      if (!out->Write(framed) || !out->Write(field.payload) || !out->Write(suffix)) {
        return out->error();
      }
    }
    ++report->processes[merged_index].chunks;
    ++report->chunks;
  }
}

// Warns when one recording (pid, host, start time) is merged twice, e.g. from a file and from a
// merged file that already holds it.
void WarnDuplicates(MergeReport* report) {
  std::map<std::tuple<uint32_t, std::string, uint64_t>, const MergedProcess*> seen;
  for (const MergedProcess& p : report->processes) {
    auto [it, inserted] =
        seen.emplace(std::tuple{p.header.pid, p.header.hostname, p.header.start_time_ns}, &p);
    if (!inserted) {
      report->warnings.push_back(p.source + ": process " + std::to_string(p.header.pid) + " on " +
                                 p.header.hostname + " is also in " + it->second->source +
                                 "; it is now listed twice");
    }
  }
}

}  // namespace

std::expected<MergeReport, std::string> MergeTraceFiles(const std::vector<std::string>& inputs,
                                                        const std::string& output,
                                                        const MergeOptions& options) {
  if (inputs.empty()) return std::unexpected("no trace file to merge");
  if (output.empty()) return std::unexpected("no output file given");
  if (std::string error = CheckPaths(inputs, output); !error.empty()) {
    return std::unexpected(error);
  }
  try {
    std::vector<Input> files(inputs.size());
    MergeReport report;
    report.input_files = inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (std::string error = ReadHeaders(inputs[i], &files[i]); !error.empty()) {
        return std::unexpected(error);
      }
      for (const TraceHeader& header : files[i].headers) {
        report.processes.push_back(MergedProcess{.source = inputs[i], .header = header});
      }
    }
    if (report.processes.size() > UINT32_MAX) return std::unexpected("too many processes");

    OutputFile out;
    if (std::string error = out.Create(output, options.overwrite); !error.empty()) {
      return std::unexpected(error);
    }
    for (const Input& input : files) {
      for (const std::string& header : input.header_fields) {
        if (!out.Write(header)) return std::unexpected(out.error());
      }
    }
    uint32_t base = 0;
    for (const Input& input : files) {
      if (std::string error = CopyChunks(input, base, options, &out, &report); !error.empty()) {
        return std::unexpected(error);
      }
      base += static_cast<uint32_t>(input.headers.size());
    }
    if (std::string error = out.Commit(); !error.empty()) return std::unexpected(error);
    report.bytes_written = out.written();
    WarnDuplicates(&report);
    return report;
  } catch (const std::exception& e) {
    return std::unexpected(output + ": merge failed (" + e.what() + ")");
  }
}

}  // namespace libprof
