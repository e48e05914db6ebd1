// The recording pipeline: CUDA activity, NVTX events and call stacks come in through the sources
// (capture_sources.h), trace chunks go out, on one background writer thread. The recorder also
// keeps the capture's clockwork: the periodic flush, the delay/duration window of the capture
// gates, and the takeover watch.
//
// Layer: libprof/ (CUDA-free: CUPTI is reached only through ActivitySource, so the whole pipeline
// runs in CPU-only tests). The application threads only write a byte to a pipe (RequestFlush,
// and RequestStopFromSignal, which is async-signal-safe); decoding, encoding and file I/O happen
// on the writer thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "libprof/buffer_pool.h"
#include "libprof/capture_context.h"
#include "libprof/capture_gates.h"
#include "libprof/capture_sources.h"
#include "libprof/takeover_watch.h"
#include "proto/api_nesting.h"
#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

class Recorder final : public FlushRequester {
 public:
  // Where records come from; any may be null (nothing of that kind is recorded).
  struct Sources {
    ActivitySource* activity = nullptr;
    NvtxSource* nvtx = nullptr;
    CallSiteSource* call_sites = nullptr;
    DetailsSource* details = nullptr;
    // The writer thread is the timer of their delay/duration window.
    CaptureGates* gates = nullptr;
  };

  struct Options {
    uint32_t flush_interval_ms = 1000;
    // LIBPROF_WATCH_TAKEOVER: apply the takeover watch after each periodic flush.
    bool watch_takeover = true;
    TraceWriter::Options writer;
  };

  // `context` (strings and clock) and `pool` (only read, to advise on drops) outlive the
  // recorder, as do the sources.
  Recorder(std::unique_ptr<ByteSink> sink, std::string path, CaptureContext* context,
           const BufferPool* pool, Sources sources, Options options);
  ~Recorder();

  // Starts the writer thread, which writes the header first. False if the thread cannot start.
  bool Start(TraceHeader header);

  // Asks the writer thread to take what the sources hold now (a completed buffer,
  // cudaDeviceReset). Any thread; never blocks.
  void RequestFlush() override;

  // Flushes everything, writes the run end and joins the writer thread. Idempotent; safe to call
  // from any thread but the writer thread.
  void Stop(const std::string& reason);

  // Async-signal-safe: asks the writer thread to finish as Stop would, without waiting.
  void RequestStopFromSignal(int signal_number);
  // Async-signal-safe: waits until the writer thread has finished, at most `timeout_ms`.
  bool WaitStoppedFromSignal(int timeout_ms);

  bool is_writer_thread() const;
  const std::string& path() const { return path_; }
  uint64_t records_written() const { return records_written_.load(); }
  uint64_t records_dropped() const { return records_dropped_.load(); }
  uint64_t bytes_written() const { return bytes_written_.load(); }

 private:
  void Run();
  void ProcessCompletedBuffers();
  void TakeCallSites();
  void AttachStack(ApiCall* call);
  void WriteRecords(TraceRecords& records);
  // Writes API calls, after the call stacks noted since the last time (CallSiteSource).
  void WriteCalls(const std::vector<ApiCall>& calls, bool final);
  void DrainNvtx(bool final);
  void TakeDrops();
  void CheckCapture();
  void Finish(const std::string& reason);
  void Wake(char what);

  std::unique_ptr<ByteSink> sink_;
  std::string path_;
  CaptureContext* context_;
  const BufferPool* pool_;
  Sources sources_;
  Options options_;
  TraceWriter writer_;
  ApiNestingTracker nesting_;
  TakeoverWatch takeover_;
  TraceHeader header_;
  // Stack ids noted at API entry, by correlation id, until the call's record arrives. A call
  // that is never recorded (outside a capture range, dropped by CUPTI) leaves its entry behind:
  // past kMaxPendingCallSites the oldest half is dropped.
  static constexpr size_t kMaxPendingCallSites = size_t{1} << 16;
  std::unordered_map<uint64_t, uint32_t> pending_call_sites_;
  std::vector<std::pair<uint64_t, uint32_t>> call_site_batch_;

  int wake_pipe_[2] = {-1, -1};  // bytes: 'f' flush, 'x' stop, 's' signal stop
  int done_pipe_[2] = {-1, -1};  // the writer thread writes one byte when it has finished
  std::thread thread_;
  std::atomic<pid_t> writer_tid_{0};
  std::atomic<bool> started_{false};
  std::atomic<bool> stop_requested_{false};
  std::atomic<int> stop_signal_{0};
  std::mutex stop_mutex_;
  std::string stop_reason_;
  bool stopped_ = false;

  std::atomic<uint64_t> records_written_{0};
  std::atomic<uint64_t> records_dropped_{0};
  std::atomic<uint64_t> bytes_written_{0};
  bool runtime_version_known_ = false;
};

}  // namespace libprof
