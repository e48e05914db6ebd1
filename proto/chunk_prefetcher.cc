#include "proto/chunk_prefetcher.h"

#include <exception>

namespace libprof {

ChunkPrefetcher::ChunkPrefetcher(TraceReader& reader, size_t ahead)
    : reader_(reader), ahead_(ahead < 1 ? 1 : ahead) {
  for (uint32_t p = 0; p < reader.headers().size(); ++p) strings_.push_back(reader.strings(p));
  thread_ = std::thread([this] { Decode(); });
}

ChunkPrefetcher::~ChunkPrefetcher() { Stop(); }

void ChunkPrefetcher::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ChunkPrefetcher::Decode() {
  while (true) {
    Slot slot;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || ready_.size() < ahead_; });
      if (stopping_) return;
      if (!spare_.empty()) {
        slot = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    // No exception may leave the thread (it would end the program): a failure ends the read.
    try {
      slot.strings.clear();
      slot.ok = reader_.Next(&slot.records);
      if (slot.ok) {
        const uint32_t p = slot.records.process_index;
        for (uint32_t id : reader_.strings_defined(p)) {
          slot.strings.push_back({id, reader_.strings(p)[id]});
        }
      }
    } catch (const std::exception& e) {
      slot.ok = false;
      slot.failure = std::string("decoding failed: ") + e.what();
    }
    const bool last = !slot.ok;
    {
      std::lock_guard lock(mutex_);
      ready_.push_back(std::move(slot));
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
    changed_.wait(lock, [&] { return !ready_.empty(); });
    slot = std::move(ready_.front());
    ready_.pop_front();
  }
  changed_.notify_all();
  if (!slot.ok) {
    ended_ = true;
    error_ = slot.failure;
    if (thread_.joinable()) thread_.join();  // the reader is the caller's again
    return false;
  }
  const uint32_t p = slot.records.process_index;
  if (p >= strings_.size()) strings_.resize(p + 1, std::vector<std::string>{""});
  for (auto& [id, value] : slot.strings) {
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
