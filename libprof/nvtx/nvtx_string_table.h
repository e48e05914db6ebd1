// The NVTX handlers' own string table: messages, domain names and registered strings, with ids
// local to the recorder.
//
// Layer: libprof/nvtx/ (CUDA-free). Why not the trace's StringInterner directly: libprof's writer
// thread interns CUPTI names there under a std::mutex, and a fork() while it holds that mutex
// would deadlock the child's next NVTX call. Handler threads intern here instead, under a lock
// that a fork child can reset; NvtxRecorder::Drain copies new strings to the StringInterner on
// the writer thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libprof/nvtx/spin_lock.h"

namespace libprof {

class NvtxStringTable {
 public:
  NvtxStringTable();  // id 0 is ""

  // Thread-safe. The id of `text`, added at its first call; ids are dense and only grow.
  uint32_t Intern(std::string_view text);
  // Number of ids handed out (every id below is valid).
  uint32_t size() const { return size_.load(std::memory_order_acquire); }
  // Appends the strings with ids in [first, size()) to *out, in id order.
  void CopyFrom(uint32_t first, std::vector<std::string>* out) const;

  // pthread_atfork: hold the lock across fork(), then release it (parent) or reset it (child).
  void LockForFork() { lock_.lock(); }
  void UnlockAfterFork() { lock_.unlock(); }
  void ResetAfterFork() { lock_.Reset(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };

  mutable SpinLock lock_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<const std::string*> by_id_;  // keys of ids_, which never move
  std::atomic<uint32_t> size_{0};
};

}  // namespace libprof
