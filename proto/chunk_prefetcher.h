// Decodes a trace's chunks on a second thread, a few chunks ahead of the caller, so that the
// caller's work on one chunk overlaps the decoding of the next: the streamed summary and the
// windowed reads then take about the longer of the two instead of their sum (profview runs on
// machines with more than one core). The chunks and strings it hands out are TraceReader::Next's.
//
// Layer: proto/ (CUDA-free). The reader is used only by the decoding thread until Next returns
// false; after that (the thread has ended) its truncated(), error(), chunks_read() etc. tell
// how the read ended, as they do after TraceReader::Next returns false.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "proto/trace_model.h"
#include "proto/trace_reader.h"

namespace libprof {

class ChunkPrefetcher {
 public:
  // Starts decoding `reader`'s chunks (from where it stands), at most `ahead` ahead of Next.
  explicit ChunkPrefetcher(TraceReader& reader, size_t ahead = 2);
  ~ChunkPrefetcher();  // stops the decoding thread and waits for it
  ChunkPrefetcher(const ChunkPrefetcher&) = delete;
  ChunkPrefetcher& operator=(const ChunkPrefetcher&) = delete;

  // As TraceReader::Next: the next chunk into *out; false at the end or when the rest cannot be
  // read (the reader's truncated() / error() say which; error() here also names a failure of
  // the decoding thread itself).
  bool Next(TraceRecords* out);
  // The string table of a process, as far as the chunks handed out define it.
  const std::vector<std::string>& strings(uint32_t process_index = 0) const;
  const std::string& error() const { return error_.empty() ? reader_.error() : error_; }

 private:
  // A decoded chunk on its way to the caller, with the strings it defined.
  struct Slot {
    bool ok = false;
    TraceRecords records;
    std::vector<std::pair<uint32_t, std::string>> strings;
    std::string failure;  // what the decoding thread threw, if it did
  };
  void Decode();
  void Stop();

  TraceReader& reader_;
  const size_t ahead_;
  std::vector<std::vector<std::string>> strings_;  // the caller's copy
  std::string error_;
  bool ended_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Slot> ready_;       // decoded, in file order
  std::vector<Slot> spare_;      // handed back: their lists keep their room
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace libprof
