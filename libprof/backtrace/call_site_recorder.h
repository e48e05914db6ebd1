// Records where CUDA API calls come from (LIBPROF_BACKTRACE): on API entry, the calling thread's
// stack is walked and interned, and the pair (correlation id, stack id) queued for the writer
// thread, which joins it to the API call's activity record (Recorder, through CallSiteSource). At
// the end of the recording the unique stacks are symbolised once per address and written to the
// trace.
//
// Layer: libprof/backtrace/ (CUDA-free). The CUPTI session decides which calls need a stack and
// calls OnApiEnter from its callback; everything else runs on the writer thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "libprof/backtrace/stack_table.h"
#include "libprof/backtrace/stack_walker.h"
#include "libprof/capture_sources.h"
#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

class CallSiteRecorder final : public CallSiteSource {
 public:
  // At most this many distinct stacks per process (each up to `depth` frames), and this many
  // pairs waiting for the writer thread; past either, calls go without a stack and are counted.
  // 65536 stacks of 32 frames is 16 MiB at most; a training loop has a few hundred.
  static constexpr size_t kMaxStacks = 65536;
  static constexpr size_t kMaxPendingPairs = size_t{1} << 20;

  CallSiteRecorder(size_t depth, const SkipRanges& skip);

  // Hot path, on the application's thread inside the API call: walks, interns, queues. Never
  // throws; allocates only for a new stack or to grow the queue (both bounded).
  void OnApiEnter(uint64_t correlation_id);

  // After fork in a child, or when recording stops: OnApiEnter does nothing from now on.
  void Disable() { enabled_.store(false, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // Writer thread: moves the queued pairs into *out (cleared first).
  void TakePairs(std::vector<CallSitePair>* out) override;
  // Writer thread, once recording has stopped: disables, symbolises (Symbolize) and warns about
  // the calls that went without a stack.
  void TakeStacks(StringInterner& strings, TraceRecords* out) override;

  // Writer thread, at the end: the stacks interned so far with their frames and modules, every
  // address symbolised once; names interned into `strings`.
  void Symbolize(StringInterner& strings, TraceRecords* out) const;

  // Calls that got no stack: table or queue full.
  uint64_t missed() const { return missed_.load(std::memory_order_relaxed) + table_.refused(); }
  size_t depth() const { return depth_; }

 private:
  const size_t depth_;
  const SkipRanges skip_;
  StackTable table_;
  std::atomic<bool> enabled_{true};
  std::mutex pairs_mutex_;
  std::vector<CallSitePair> pairs_;
  std::atomic<uint64_t> missed_{0};
};

}  // namespace libprof
