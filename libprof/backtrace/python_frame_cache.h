// One thread's memo of the Python frames it read before: PythonFrameKey -> the frame's id in the
// PythonFrameTable. A frame seen again (the same code at the same instruction: a loop's frames,
// every step of a training loop) then costs a lookup instead of reading its names, looking up
// its line and interning them (most of a frame's cost: bench/README.md, "Python frames").
//
// Direct-mapped: a key's slot is a hash of its code object and byte offset; a collision replaces
// the older entry. Keys hold the code object's names and first line, so a code object freed and
// another allocated at its address is a miss unless it also has the same file and name objects
// and the same first line (then the line of the same offset could still differ: a judgement that
// a reloaded function with an unchanged header, at a reused address, is rare enough).
//
// Layer: libprof/backtrace/ (CUDA-free). A cache is used by one thread only (CallSiteRecorder
// keeps one per thread); no lock.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "libprof/backtrace/python_frame_table.h"
#include "libprof/backtrace/python_frames.h"

namespace libprof {

class PythonFrameCache {
 public:
  static constexpr size_t kSlots = 1024;  // a power of two

  // The id cached for `key`, or 0.
  uint32_t Find(const PythonFrameKey& key) const {
    const Slot& slot = slots_[SlotOf(key)];
    return slot.id != 0 && slot.key == key ? slot.id : 0;
  }
  // Remembers `id` (not 0) for `key`.
  void Put(const PythonFrameKey& key, uint32_t id) { slots_[SlotOf(key)] = {key, id}; }

 private:
  struct Slot {
    PythonFrameKey key;
    uint32_t id = 0;
  };
  static size_t SlotOf(const PythonFrameKey& key) {
    const uint64_t code = reinterpret_cast<uintptr_t>(key.code);
    const uint64_t mixed = (code >> 4) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(key.byte_offset);
    return static_cast<size_t>((mixed ^ (mixed >> 29)) & (kSlots - 1));
  }
  std::array<Slot, kSlots> slots_{};
};

// What CallSiteRecorder does at each call: reads the calling thread's Python frames, innermost
// first, taking each one's id from the thread's cache or else reading its text and interning it
// into `table`; writes at most `max` ids and returns how many. `cache_of_thread()` gives the cache
// (nullptr: none) and is asked only once the thread shows a Python frame, so threads that run no
// Python never make one. Sets *cut when the table refused a frame: the outer frames are then left
// out (a gap would misname the caller).
template <typename CacheOfThread>
  requires std::invocable<CacheOfThread&>
size_t InternPythonFrames(const PythonFrameReader& reader, CacheOfThread&& cache_of_thread,
                          PythonFrameTable& table, uint32_t* ids, size_t max, bool* cut) {
  size_t n = 0;
  *cut = false;
  PythonFrameCache* cache = nullptr;
  bool cache_asked = false;
  reader.Read(max, [&](const PythonFrameRef& frame) {
    if (*cut) return;
    if (!cache_asked) {
      cache = cache_of_thread();
      cache_asked = true;
    }
    uint32_t id = cache != nullptr ? cache->Find(frame.key()) : 0;
    if (id == 0) {
      PythonFrameView text;
      if (!frame.Text(&text)) return;  // the reader stopped: the walk ends here
      id = table.Intern(text.file, text.function, text.line);
      if (id == 0) {
        *cut = true;
        return;
      }
      if (cache != nullptr) cache->Put(frame.key(), id);
    }
    ids[n++] = id;
  });
  return n;
}

// The same with a cache given (nullptr: none).
inline size_t InternPythonFrames(const PythonFrameReader& reader, PythonFrameCache* cache,
                                 PythonFrameTable& table, uint32_t* ids, size_t max, bool* cut) {
  return InternPythonFrames(reader, [cache] { return cache; }, table, ids, max, cut);
}

}  // namespace libprof
