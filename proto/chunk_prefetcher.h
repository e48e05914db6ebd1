// Decodes a trace's chunks on threads of its own, a few chunks ahead of the caller, so that the
// caller's work on one chunk overlaps the decoding of the next ones: the streamed summary and
// the windowed reads then take about the longer of the two instead of their sum (profview runs
// on machines with more than one core). With several decoding threads, chunks are decoded at
// once (TraceReader's steps: ReadChunk, DefineChunk and Settle in file order, ParseChunk and
// DecodeDefined on any thread), so that decoding need not be the slowest part of a read.
//
// Memory: at most `ahead` decoded chunks wait or are being decoded, and each decoding thread
// keeps one parsed protobuf message (several times its chunk's bytes) for its room.
//
// Layer: proto/ (CUDA-free). The reader belongs to the prefetcher until Next returns false:
// Next settles each chunk in file order, so that the reader's truncated(), error(),
// chunks_read() etc. then tell how the read ended, as they do after TraceReader::Next returns
// false (its strings() may also hold definitions of chunks read past a damaged one). A
// prefetcher dropped before the end leaves the reader past the chunks it read ahead.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
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
  // Starts decoding `reader`'s chunks (from where it stands) on `decoders` threads, at most
  // `ahead` (at least `decoders`) ahead of Next.
  explicit ChunkPrefetcher(TraceReader& reader, size_t ahead = 2, size_t decoders = 1);
  ~ChunkPrefetcher();  // stops the decoding threads and waits for them
  ChunkPrefetcher(const ChunkPrefetcher&) = delete;
  ChunkPrefetcher& operator=(const ChunkPrefetcher&) = delete;

  // As TraceReader::Next: the next chunk into *out; false at the end or when the rest cannot be
  // read (the reader's truncated() / error() say which).
  bool Next(TraceRecords* out);
  // The string table of a process, as far as the chunks handed out define it.
  const std::vector<std::string>& strings(uint32_t process_index = 0) const;
  const std::string& error() const { return reader_.error(); }

 private:
  // A decoded chunk on its way to the caller, with how its read ended (the strings it defined).
  struct Slot {
    TraceReader::ChunkOutcome outcome;
    TraceRecords records;
  };
  void Decode();
  // Waits for the turn of the chunk read as `ticket` (file order), runs `step`, passes the turn.
  template <typename Step>
  bool InTurn(uint64_t ticket, Step&& step);
  void Stop();

  TraceReader& reader_;
  const size_t ahead_;
  const size_t decoders_;
  std::vector<std::vector<std::string>> strings_;  // the caller's copy
  bool ended_ = false;
  std::mutex read_mutex_;  // held across taking a ticket and ReadChunk: one thread at a time
  bool read_ended_ = false;  // (read_mutex_'s)
  std::mutex mutex_;  // the rest
  std::condition_variable changed_;
  uint64_t next_ticket_ = 0;  // the next chunk read's (taken with both mutexes held)
  uint64_t define_turn_ = 0;  // the ticket whose DefineChunk is next
  uint64_t next_out_ = 0;     // the ticket Next hands out next
  std::map<uint64_t, Slot> ready_;  // decoded, by ticket
  std::vector<Slot> spare_;  // handed back: their lists keep their room
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace libprof
