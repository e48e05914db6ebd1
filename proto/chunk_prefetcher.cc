#include "proto/chunk_prefetcher.h"

#include <algorithm>
#include <exception>

namespace libprof {

ChunkPrefetcher::ChunkPrefetcher(TraceReader& reader, size_t ahead, size_t decoders)
    : reader_(reader),
      ahead_(std::max({ahead, decoders, size_t{1}})),
      decoders_(std::max<size_t>(decoders, 1)) {
  for (uint32_t p = 0; p < reader.headers().size(); ++p) strings_.push_back(reader.strings(p));
  for (size_t i = 0; i < decoders_; ++i) threads_.emplace_back([this] { Decode(); });
}

ChunkPrefetcher::~ChunkPrefetcher() { Stop(); }

void ChunkPrefetcher::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

template <typename Step>
bool ChunkPrefetcher::InTurn(uint64_t ticket, Step&& step) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopping_ || define_turn_ == ticket; });
  if (stopping_) return false;
  step();  // (does not throw: see Decode)
  ++define_turn_;
  changed_.notify_all();
  return true;
}

void ChunkPrefetcher::Decode() {
  // This thread's chunk between the steps: its parsed message keeps its room across chunks.
  TraceReader::ChunkInFlight chunk;
  // No exception may leave the thread (it would end the program): one fails the chunk it met.
  auto guarded = [&](auto&& step) {
    try {
      step();
    } catch (const std::exception& e) {
      chunk.outcome.kind = TraceReader::ChunkOutcome::Kind::kFailed;
      chunk.outcome.error = reader_.path() + ": chunk at byte " + std::to_string(chunk.offset) +
                            " cannot be decoded (" + e.what() + ")";
      chunk.outcome.end = chunk.offset;
    }
  };
  // One thread decodes each chunk right after defining it: with the reader's own tables.
  const bool copy_tables = decoders_ > 1;
  while (true) {
    Slot slot;
    uint64_t ticket = 0;
    {
      // Tickets number the chunks in file order: a ticket and its read go together.
      std::lock_guard read(read_mutex_);
      if (read_ended_) return;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || next_ticket_ < next_out_ + ahead_; });
        if (stopping_) return;
        ticket = next_ticket_++;
        if (!spare_.empty()) {
          slot = std::move(spare_.back());
          spare_.pop_back();
        }
      }
      guarded([&] { reader_.ReadChunk(&chunk); });
      read_ended_ = chunk.outcome.kind != TraceReader::ChunkOutcome::Kind::kChunk;
    }
    guarded([&] { reader_.ParseChunk(&chunk); });
    if (!InTurn(ticket, [&] { guarded([&] { reader_.DefineChunk(&chunk, copy_tables); }); })) {
      return;
    }
    guarded([&] { reader_.DecodeDefined(&chunk, &slot.records); });
    slot.outcome = chunk.outcome;
    const bool last = slot.outcome.kind != TraceReader::ChunkOutcome::Kind::kChunk;
    {
      std::lock_guard lock(mutex_);
      ready_.emplace(ticket, std::move(slot));
    }
    changed_.notify_all();
    if (last) return;
  }
}

bool ChunkPrefetcher::Next(TraceRecords* out) {
  if (ended_) return false;
  Slot slot;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_.contains(next_out_); });
    auto it = ready_.find(next_out_);
    slot = std::move(it->second);
    ready_.erase(it);
    ++next_out_;
  }
  changed_.notify_all();
  if (!reader_.Settle(slot.outcome)) {
    ended_ = true;
    Stop();  // the reader is the caller's again
    return false;
  }
  const uint32_t p = slot.records.process_index;
  if (p >= strings_.size()) strings_.resize(p + 1, std::vector<std::string>{""});
  for (auto& [id, value] : slot.outcome.strings) {
    if (id >= strings_[p].size()) strings_[p].resize(id + 1);
    strings_[p][id] = std::move(value);
  }
  std::swap(*out, slot.records);  // the caller's last chunk goes back for its room
  {
    std::lock_guard lock(mutex_);
    spare_.push_back(std::move(slot));
  }
  return true;
}

const std::vector<std::string>& ChunkPrefetcher::strings(uint32_t process_index) const {
  static const std::vector<std::string>* none = new std::vector<std::string>{""};
  return process_index < strings_.size() ? strings_[process_index] : *none;
}

}  // namespace libprof
