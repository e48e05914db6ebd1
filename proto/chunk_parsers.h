// Threads that parse chunks' bytes (TraceReader::NextChunkBytes) into trace::Chunk messages, so
// that the decoding thread only reads bytes and turns parsed messages into records, in file
// order: protobuf's parse is about half of the decoding (bench/README.md), and it needs nothing
// of earlier chunks.
//
// Layer: proto/ (CUDA-free; libprotobuf).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proto/trace.pb.h"
#include "proto/trace_reader.h"

namespace libprof {

class ChunkParsers {
 public:
  // One chunk's way through: its bytes, then its parsed message.
  struct Job {
    TraceReader::RawChunk raw;
    trace::Chunk message;  // reused from job to job: keeps protobuf's allocations
    bool parsed = false;   // the bytes parsed into `message`
    std::string failure;   // what the parse threw, if it did
    bool done = false;
  };

  // Starts `threads` parsing threads (at least one).
  explicit ChunkParsers(size_t threads);
  ~ChunkParsers();  // stops the threads, after the job they are on, and waits for them
  ChunkParsers(const ChunkParsers&) = delete;
  ChunkParsers& operator=(const ChunkParsers&) = delete;

  // A job whose raw chunk is filled, to parse; the caller keeps it alive until Wait returns.
  void Submit(Job* job);
  // Waits until `job` is parsed.
  void Wait(Job* job);

  // How many threads suit this machine: the decoding thread, the caller and the analysis
  // want cores too.
  static size_t ForThisMachine();

 private:
  void Parse();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job*> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace libprof
