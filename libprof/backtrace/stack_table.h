// Interns call stacks: the same list of return addresses always gets the same id, so a trace
// stores each distinct stack once and an API call carries only its id.
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

namespace libprof {

class StackTable {
 public:
  // `max_stacks` distinct stacks at most; each `max_depth` frames at most (longer ones are cut).
  StackTable(size_t max_stacks, size_t max_depth);

  // The id (1, 2, ...) of the stack pcs[0..depth); 0 when the table is full or `depth` is 0.
  uint32_t Intern(const uintptr_t* pcs, size_t depth);

  // Every stack so far, by id: stacks[i] has id i + 1.
  std::vector<std::vector<uintptr_t>> Snapshot() const;

  size_t size() const;
  // Stacks refused because the table was full.
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

  static uint64_t Hash(const uintptr_t* pcs, size_t depth);

 private:
  struct Entry {
    uint64_t hash;
    uint32_t offset;  // into frames_
    uint32_t depth;
  };
  bool Equal(const Entry& entry, uint64_t hash, const uintptr_t* pcs, size_t depth) const;
  void Grow();

  const size_t max_stacks_;
  const size_t max_depth_;
  mutable std::mutex mutex_;
  std::vector<uint32_t> slots_;  // open addressing: entry index + 1, 0 = empty; power of two
  std::vector<Entry> entries_;   // id - 1 -> entry
  std::vector<uintptr_t> frames_;
  std::atomic<uint64_t> refused_{0};
};

}  // namespace libprof
