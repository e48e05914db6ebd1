#include "libprof/backtrace/python_frame_table.h"

#include <algorithm>

namespace libprof {
namespace {

// A few hundred distinct Python frames in a typical training script: 1024 slots hold them with
// short probes, doubling when half full.
constexpr size_t kInitialSlots = 1024;

uint64_t Hash(std::string_view file, std::string_view function, uint32_t line) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then splitmix64's avalanche
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    h ^= 0xff;  // a separator no UTF-8 byte equals, so ("ab","c") and ("a","bc") differ
    h *= 0x100000001b3ULL;
  };
  mix(file);
  mix(function);
  h ^= line;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

PythonFrameTable::PythonFrameTable(size_t max_frames) : max_frames_(max_frames) {
  slots_.assign(kInitialSlots, 0);
}

uint32_t PythonFrameTable::Intern(std::string_view file, std::string_view function,
                                  uint32_t line) {
  const uint64_t hash = Hash(file, function, line);
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t mask = slots_.size() - 1;
  size_t slot = hash & mask;
  while (slots_[slot] != 0) {
    const Entry& e = entries_[slots_[slot] - 1];
    if (e.hash == hash && e.frame.line == line && e.frame.file == file &&
        e.frame.function == function) {
      return slots_[slot];
    }
    slot = (slot + 1) & mask;
  }
  // One slot always stays empty, so that the probe above ends even if Grow could not allocate.
  if (entries_.size() >= max_frames_ || entries_.size() + 2 > slots_.size()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  try {
    entries_.push_back({hash, {std::string(file), std::string(function), line}});
  } catch (...) {  // out of memory: this frame goes unrecorded, the program goes on
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  slots_[slot] = static_cast<uint32_t>(entries_.size());
  if (entries_.size() * 2 > slots_.size()) Grow();
  return static_cast<uint32_t>(entries_.size());
}

void PythonFrameTable::Grow() {
  std::vector<uint32_t> slots;
  try {
    slots.assign(slots_.size() * 2, 0);
  } catch (...) {
    return;
  }
  const size_t mask = slots.size() - 1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size_t slot = entries_[i].hash & mask;
    while (slots[slot] != 0) slot = (slot + 1) & mask;
    slots[slot] = static_cast<uint32_t>(i + 1);
  }
  slots_.swap(slots);
}

PythonFrameTable::Frame PythonFrameTable::Get(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (id == 0 || id > entries_.size()) return {};
  return entries_[id - 1].frame;
}

size_t PythonFrameTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace libprof
