// Interns Python frames (file, function, line) by content, so that a call stack can hold a
// Python frame as a small id and the trace stores each frame's strings once.
//
// Keyed by content, not by the code object's address: a code object freed and another allocated
// at its address must not inherit its name, and the reader holds no reference past the callback.
//
// Layer: libprof/backtrace/ (CUDA-free). Intern runs on the application's threads inside the API
// callback (a hash of the two strings, one short critical section, an allocation only for a new
// frame, never past the capacity); Snapshot runs on the writer thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "libprof/backtrace/hash_slots.h"

namespace libprof {

class PythonFrameTable {
 public:
  // Python frames recorded at most per process; past it a frame gets 0 and is counted.
  explicit PythonFrameTable(size_t max_frames);

  // The id (1, 2, ...) of this frame; 0 when the table is full.
  uint32_t Intern(std::string_view file, std::string_view function, uint32_t line);

  struct Frame {
    std::string file;
    std::string function;
    uint32_t line = 0;
    bool operator==(const Frame&) const = default;
  };
  // The frame with this id; {} for an unknown id. Writer thread.
  Frame Get(uint32_t id) const;

  size_t size() const;
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    uint64_t hash;
    Frame frame;
  };

  const size_t max_frames_;
  mutable std::mutex mutex_;
  HashSlots slots_;
  std::vector<Entry> entries_;   // id - 1 -> entry
  std::atomic<uint64_t> refused_{0};
};

}  // namespace libprof
