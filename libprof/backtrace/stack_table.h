// Interns call stacks: the same list of return addresses (and of Python frames, as ids of a
// PythonFrameTable) always gets the same id, so a trace stores each distinct stack once and an
// API call carries only its id.
//
// Layer: libprof/backtrace/ (CUDA-free). Intern runs on the application's threads (inside CUPTI's
// API callback): a hash, one short critical section and a probe of an open-addressing table; it
// allocates only when a stack is new, and never past the capacity given at construction (then it
// returns 0 and counts the miss). Snapshot runs on the writer thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "libprof/backtrace/hash_slots.h"

namespace libprof {

class StackTable {
 public:
  // `max_stacks` distinct stacks at most; each `max_depth` frames at most (longer ones are cut).
  StackTable(size_t max_stacks, size_t max_depth);

  // The id (1, 2, ...) of the stack pcs[0..depth) with the Python frames python[0..python_depth)
  // (each list cut to the maximum depth); 0 when the table is full or both lists are empty.
  uint32_t Intern(const uintptr_t* pcs, size_t depth, const uint32_t* python = nullptr,
                  size_t python_depth = 0);

  struct Stack {
    std::vector<uintptr_t> pcs;
    std::vector<uint32_t> python;  // PythonFrameTable ids, innermost first
    bool operator==(const Stack&) const = default;
  };
  // The stacks with ids from + 1 on: stacks[i] has id from + i + 1.
  std::vector<Stack> Snapshot(size_t from = 0) const;

  size_t size() const;
  // Stacks refused because the table was full.
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

  static uint64_t Hash(const uintptr_t* pcs, size_t depth, const uint32_t* python,
                       size_t python_depth);

 private:
  struct Entry {
    uint64_t hash;
    uint32_t offset;  // into frames_: the native frames, then the Python ones
    uint16_t depth;
    uint16_t python_depth;
  };
  bool Equal(const Entry& entry, uint64_t hash, const uintptr_t* pcs, size_t depth,
             const uint32_t* python, size_t python_depth) const;

  const size_t max_stacks_;
  const size_t max_depth_;
  mutable std::mutex mutex_;
  HashSlots slots_;
  std::vector<Entry> entries_;   // id - 1 -> entry
  std::vector<uintptr_t> frames_;
  std::atomic<uint64_t> refused_{0};
};

}  // namespace libprof
