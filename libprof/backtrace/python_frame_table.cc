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
  return Avalanche(h ^ line);
}

}  // namespace

PythonFrameTable::PythonFrameTable(size_t max_frames)
    : max_frames_(max_frames), slots_(kInitialSlots) {}

uint32_t PythonFrameTable::Intern(std::string_view file, std::string_view function,
                                  uint32_t line) {
  const uint64_t hash = Hash(file, function, line);
  std::lock_guard<std::mutex> lock(mutex_);
  size_t slot = 0;
  const uint32_t found = slots_.Find(
      hash,
      [&](uint32_t index) {
        const Entry& e = entries_[index];
        return e.hash == hash && e.frame.line == line && e.frame.file == file &&
               e.frame.function == function;
      },
      &slot);
  if (found != 0) return found;
  if (entries_.size() >= max_frames_ || !slots_.HasRoomBeside(entries_.size())) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  try {
    entries_.push_back({hash, {std::string(file), std::string(function), line}});
  } catch (...) {  // out of memory: this frame goes unrecorded, the program goes on
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  const uint32_t id = static_cast<uint32_t>(entries_.size());
  slots_.Insert(slot, id, [this](uint32_t index) { return entries_[index].hash; });
  return id;
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
