#include "proto/chunk_parsers.h"

#include <algorithm>
#include <exception>

namespace libprof {

ChunkParsers::ChunkParsers(size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
    threads_.emplace_back([this] { Parse(); });
  }
}

ChunkParsers::~ChunkParsers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

size_t ChunkParsers::ForThisMachine() {
  const size_t cores = std::thread::hardware_concurrency();
  return cores >= 8 ? 3 : cores >= 4 ? 2 : 1;
}

void ChunkParsers::Submit(Job* job) {
  {
    std::lock_guard lock(mutex_);
    job->done = false;
    queue_.push_back(job);
  }
  changed_.notify_all();
}

void ChunkParsers::Wait(Job* job) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return job->done; });
}

void ChunkParsers::Parse() {
  while (true) {
    Job* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = queue_.front();
      queue_.pop_front();
    }
    bool parsed = false;
    std::string failure;
    try {  // no exception may leave the thread (it would end the program)
      parsed = TraceReader::ParseChunk(job->raw.bytes, &job->message);
    } catch (const std::exception& e) {
      failure = std::string("parsing failed: ") + e.what();
    }
    {
      std::lock_guard lock(mutex_);
      job->parsed = parsed;
      job->failure = std::move(failure);
      job->done = true;
    }
    changed_.notify_all();
  }
}

}  // namespace libprof
