#include "libprof/buffer_pool.h"

#include <cstdlib>
#include <cstring>

namespace libprof {

// CUPTI requires 8-byte alignment; a page keeps buffers from sharing cache lines or pages.
constexpr size_t kBufferAlignment = 4096;

BufferPool::BufferPool(size_t buffer_bytes, size_t prefill, size_t max_buffers)
    : buffer_bytes_((buffer_bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment),
      max_buffers_(max_buffers) {
  for (size_t i = 0; i < prefill && i < max_buffers; ++i) {
    uint8_t* buffer = Allocate();
    if (buffer == nullptr) break;
    allocated_.fetch_add(1);
    free_.push_back(buffer);
  }
}

BufferPool::~BufferPool() {
  for (uint8_t* buffer : free_) std::free(buffer);
}

uint8_t* BufferPool::Allocate() {
  void* memory = std::aligned_alloc(kBufferAlignment, buffer_bytes_);
  if (memory == nullptr) return nullptr;
  // Fresh pages from the OS are zero already; only recycled memory needs clearing. aligned_alloc
  // gives no such promise, so clear once here (on the first use, not in a hot loop).
  std::memset(memory, 0, buffer_bytes_);
  return static_cast<uint8_t*>(memory);
}

uint8_t* BufferPool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      uint8_t* buffer = free_.back();
      free_.pop_back();
      return buffer;
    }
  }
  // Reserve a slot first so that concurrent requests never exceed max_buffers_.
  size_t count = allocated_.load();
  do {
    if (count >= max_buffers_) {
      refusals_.fetch_add(1);
      return nullptr;
    }
  } while (!allocated_.compare_exchange_weak(count, count + 1));
  uint8_t* buffer = Allocate();
  if (buffer == nullptr) allocated_.fetch_sub(1);
  return buffer;
}

void BufferPool::Release(uint8_t* buffer, size_t used_bytes) {
  if (buffer == nullptr) return;
  std::memset(buffer, 0, used_bytes < buffer_bytes_ ? used_bytes : buffer_bytes_);
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);
}

}  // namespace libprof
