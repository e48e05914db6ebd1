// Records where CUDA API calls come from (LIBPROF_BACKTRACE): on API entry, the calling thread's
// native stack is walked and, when the thread runs Python (GIL held or not), its Python frames are
// read (LIBPROF_PYTHON_FRAMES); both are interned as one stack and the pair (correlation id, stack
// id) queued for the writer thread, which joins it to the API call's activity record (Recorder,
// through CallSiteSource). The writer thread writes each new stack, symbolised, before the first
// call that uses it, so a trace cut short by a crash keeps the stacks of the calls it holds.
//
// Layer: libprof/backtrace/ (CUDA-free). The CUPTI session decides which calls need a stack and
// calls OnApiEnter from its callback; everything else runs on the writer thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "libprof/backtrace/python_frame_cache.h"
#include "libprof/backtrace/python_frame_table.h"
#include "libprof/backtrace/python_frames.h"
#include "libprof/backtrace/stack_table.h"
#include "libprof/backtrace/stack_walker.h"
#include "libprof/backtrace/symbolizer.h"
#include "libprof/capture_sources.h"
#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

class CallSiteRecorder final : public CallSiteSource {
 public:
  // At most this many distinct stacks per process (each up to `depth` native frames and `depth`
  // Python frames), distinct Python frames, and pairs waiting for the writer thread; past any,
  // calls go without a stack (or its outer Python frames) and are counted. 65536 stacks of 32
  // frames is 16 MiB at most; a training loop has a few hundred.
  static constexpr size_t kMaxStacks = 65536;
  static constexpr size_t kMaxPythonFrames = 65536;
  static constexpr size_t kMaxPendingPairs = size_t{1} << 20;

  // `python` reads the Python frames of the process's CPython; nullptr when it has none or
  // they are not wanted.
  CallSiteRecorder(size_t depth, const SkipRanges& skip,
                   std::unique_ptr<PythonFrameReader> python = nullptr);

  // Hot path, on the application's thread inside the API call: walks, reads Python frames,
  // interns, queues. Never throws; allocates only for a new stack or frame or to grow the queue
  // (all bounded).
  void OnApiEnter(uint64_t correlation_id);

  // After fork in a child, or when recording stops: OnApiEnter does nothing from now on.
  void Disable() { enabled_.store(false, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  bool reads_python() const { return python_ != nullptr; }

  // Writer thread: moves the queued pairs into *out (cleared first).
  void TakePairs(std::vector<CallSitePair>* out) override;
  // Writer thread: the stacks interned since the last call, with the frames and modules they
  // bring (every address symbolised once), names interned into `strings`. `final` (once, when
  // recording has stopped) also disables and warns about the calls that went without a stack.
  void TakeNewStacks(StringInterner& strings, TraceRecords* out, bool final) override;

  // Calls that got no stack: table or queue full.
  uint64_t missed() const { return missed_.load(std::memory_order_relaxed) + table_.refused(); }
  size_t depth() const { return depth_; }

 private:
  uint32_t FrameId(uintptr_t pc, StringInterner& strings, TraceRecords* out);
  PythonFrame PythonFrameRecord(uint32_t python_id, StringInterner& strings);

  const size_t depth_;
  const SkipRanges skip_;
  const std::unique_ptr<PythonFrameReader> python_;
  StackTable table_;
  PythonFrameTable python_frames_;
  const uint64_t generation_;  // tells this recorder's thread caches from another's
  std::atomic<bool> enabled_{true};
  std::mutex pairs_mutex_;
  std::vector<CallSitePair> pairs_;
  std::atomic<uint64_t> missed_{0};
  std::atomic<uint64_t> python_cut_{0};  // stacks whose outer Python frames the table refused

  // Writer thread only: what has been written so far.
  size_t stacks_written_ = 0;
  Symbolizer symbolizer_;
  std::unordered_map<uintptr_t, uint32_t> frame_ids_;  // by return address
  std::map<std::string, uint32_t> module_ids_;         // by path
  std::vector<PythonFrame> python_records_;            // by PythonFrameTable id - 1
  uint32_t frames_written_ = 0;
};

}  // namespace libprof
