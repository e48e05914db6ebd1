// Pool of CUPTI activity buffers: 8-byte aligned and pre-zeroed, so that CUPTI can skip zeroing
// them in the application thread (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER = 1; measured
// 6.4 ms per two 8 MiB buffers otherwise, cupti-facts.md 3.2).
//
// Layer: libprof/ (CUDA-free). Acquire() runs in the application thread inside CUPTI's request
// callback: it never zeroes and allocates only when the pool is empty. Release() runs on the
// writer thread and zeroes only the bytes CUPTI wrote.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace libprof {

class BufferPool {
 public:
  // `prefill` buffers are allocated up front; at most `max_buffers` exist at once.
  BufferPool(size_t buffer_bytes, size_t prefill, size_t max_buffers);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A zeroed buffer of buffer_bytes(), or nullptr when max_buffers are all in use (the caller
  // then lets CUPTI drop records, and CUPTI counts them).
  uint8_t* Acquire();
  // Returns a buffer of which the first `used_bytes` may be non-zero.
  void Release(uint8_t* buffer, size_t used_bytes);

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t allocated() const { return allocated_.load(); }
  uint64_t refusals() const { return refusals_.load(); }

 private:
  uint8_t* Allocate();

  const size_t buffer_bytes_;
  const size_t max_buffers_;
  std::mutex mutex_;
  std::vector<uint8_t*> free_;
  std::atomic<size_t> allocated_{0};
  std::atomic<uint64_t> refusals_{0};
};

}  // namespace libprof
