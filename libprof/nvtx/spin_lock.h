// A tiny lock for the NVTX handlers' per-thread buffers and shared maps.
//
// Layer: libprof/nvtx/ (CUDA-free). Chosen over std::mutex for two reasons: its uncontended
// lock/unlock is one exchange and one store, and after fork() it can be reset with a plain store
// (a std::mutex held by a thread that does not exist in the child cannot be released there).
#pragma once

#include <sched.h>

#include <atomic>

namespace libprof {

class SpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) WaitUntilFree();
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }
  // fork() child only: the holder, if any, is not in this process.
  void Reset() noexcept { locked_.store(false, std::memory_order_relaxed); }

 private:
  void WaitUntilFree() noexcept {
    // Holders keep it for a vector swap or a push_back; a few pauses usually suffice, and
    // yielding after that keeps a preempted holder from being starved by the spinner.
    for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
      if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
      } else {
        sched_yield();
      }
    }
  }

  std::atomic<bool> locked_{false};
};

}  // namespace libprof
