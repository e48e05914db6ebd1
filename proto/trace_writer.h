// Streams a libprof trace: a header, then delta-encoded chunks (see proto/trace.proto).
//
// Layer: proto/. CUDA-free and libprotobuf-free (it writes the wire format with protozero), so it
// can be linked into libprof.so, which must not carry libprotobuf. Only Intern() and the
// StringInterner are thread-safe; everything else is called from one thread (libprof's writer
// thread, or a tool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "proto/trace_model.h"

namespace libprof {

// Where encoded bytes go. Write returns false on an error that loses data (disk full, EIO).
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual bool Write(const void* data, size_t size) = 0;
};

// Appends to a file descriptor it owns. Retries short writes and EINTR.
class FileSink : public ByteSink {
 public:
  // Creates `path` (O_EXCL unless `overwrite`). On failure returns nullptr, sets *error to a
  // sentence naming the path and strerror, and leaves errno as open() set it.
  static std::unique_ptr<FileSink> Create(const std::string& path, bool overwrite,
                                          std::string* error);
  ~FileSink() override;
  bool Write(const void* data, size_t size) override;
  const std::string& error() const { return error_; }

 private:
  explicit FileSink(int fd) : fd_(fd) {}
  int fd_;
  std::string error_;
};

// Thread-safe string -> id table. Id 0 is "". Ids are dense and never reused.
class StringInterner {
 public:
  StringInterner();
  uint32_t Intern(std::string_view value);
  uint32_t size() const;
  // Copies the strings with ids in [first, size()) into *out (appends (id, value) pairs).
  void CollectFrom(uint32_t first, std::vector<std::pair<uint32_t, std::string>>* out) const;

 private:
  // Transparent, so that looking up a string_view allocates nothing (NVTX interns per range).
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view value) const { return std::hash<std::string_view>{}(value); }
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<const std::string*> by_id_;
};

class TraceWriter {
 public:
  struct Options {
    // A chunk is closed and written once its encoded records pass this size. 1 MiB keeps the loss
    // on a crash small and the reader's working set bounded.
    size_t chunk_bytes = 1 << 20;
    uint32_t process_index = 0;
  };

  // `strings` may be shared with code that interns before the writer exists (NVTX handlers);
  // when null the writer owns its own table. Strings interned anywhere before a chunk is closed
  // are defined in that chunk or an earlier one.
  TraceWriter(ByteSink* sink, Options options, StringInterner* strings = nullptr);
  ~TraceWriter();

  // Must be called once, before any record. Returns false if the sink failed.
  bool WriteHeader(const TraceHeader& header);

  StringInterner& strings() { return *strings_; }
  uint32_t Intern(std::string_view value) { return strings_->Intern(value); }

  // Appends one record of any kind of proto/record_kinds.h to the chunk under construction; the
  // chunk is written when it is full.
  template <RecordKindType Record>
  void Add(const Record& record);
  void SetRuntimeVersion(uint32_t cuda_runtime_version);
  void AddAll(const TraceRecords& records);  // every list of `records`, and its run_end if set

  // Writes `run_end` into the current chunk and flushes it. Call last.
  bool Finish(const RunEnd& run_end);

  // Closes the chunk under construction (if it holds anything) and writes it.
  bool Flush();

  bool failed() const { return failed_; }
  // Timed records accepted so far, the chunk under construction included (so that a RunEnd built
  // before Finish counts them), as TraceRecords::RecordCount counts.
  uint64_t records_written() const { return records_written_; }
  uint64_t chunks_written() const { return chunks_written_; }
  // Bytes of the header and chunks written completely; a failed write is not counted.
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  class ChunkEncoder;
  void MaybeFlush();

  ByteSink* sink_;
  Options options_;
  std::unique_ptr<StringInterner> owned_strings_;
  StringInterner* strings_;
  std::unique_ptr<ChunkEncoder> chunk_;
  bool failed_ = false;
  uint64_t records_written_ = 0;
  uint64_t chunks_written_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace libprof
