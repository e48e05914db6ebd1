// The recording pipeline behind CUPTI: completed activity buffers and NVTX events go in, trace
// chunks come out, on one background writer thread.
//
// Layer: libprof/ (CUDA-free: CUPTI is reached only through RecorderHooks, so the whole pipeline
// runs in CPU-only tests). The application threads only enqueue (OnBufferCompleted) or write a
// byte to a pipe (RequestStopFromSignal, which is async-signal-safe); decoding, encoding and file
// I/O happen on the writer thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "libprof/buffer_pool.h"
#include "proto/api_nesting.h"
#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

struct RecorderHooks {
  // cuptiActivityFlushAll(0) / (FORCED): CUPTI then hands completed buffers to
  // Recorder::OnBufferCompleted, possibly from another thread, before returning.
  std::function<void()> flush;
  std::function<void()> flush_forced;
  // Decodes `size` bytes of CUPTI records into *out (appends).
  std::function<void(const uint8_t* buffer, size_t size, TraceRecords* out)> decode;
  // Records CUPTI dropped since the last call (cuptiActivityGetNumDroppedRecords resets it).
  std::function<uint64_t()> take_dropped;
  // Completes the header just before it is written (versions that need CUDA loaded).
  std::function<void(TraceHeader*)> complete_header;
  // Adds what CUPTI's device records lack (PCI bus id, memory interface).
  std::function<void(DeviceInfo*)> complete_device;
  // The CUDA runtime version once a runtime is loaded, else 0.
  std::function<uint32_t()> runtime_version;
  // After each periodic flush: a warning (once) when capture was lost to another CUPTI client,
  // with the launches missed so far.
  std::function<std::string(uint64_t* missed)> check_capture;
  // Opens or closes the delay/duration window (Options::window_*_at_ns).
  std::function<void(bool open)> set_time_window;
  // Moves completed NVTX events (and new domains) out; `final` also closes open ranges at `now`.
  std::function<void(std::vector<NvtxEvent>*, std::vector<NvtxDomain>*, bool final,
                     uint64_t now_ns)>
      drain_nvtx;
  // NVTX events dropped since the last call.
  std::function<uint64_t()> take_nvtx_dropped;
  // Call stacks (LIBPROF_BACKTRACE): moves the (correlation id, stack id) pairs noted at API
  // entry since the last call into *out; and, once at the end, the symbolised stacks.
  std::function<void(std::vector<std::pair<uint64_t, uint32_t>>* out)> take_call_sites;
  std::function<void(TraceRecords* out)> take_stacks;
};

class Recorder {
 public:
  struct Options {
    uint32_t flush_interval_ms = 1000;
    // LIBPROF_DELAY_MS / LIBPROF_DURATION_MS, as times on the trace clock (0: none): the writer
    // thread calls hooks.set_time_window(true) at the first and (false) at the second.
    uint64_t window_open_at_ns = 0;
    uint64_t window_close_at_ns = 0;
    TraceWriter::Options writer;
  };

  Recorder(std::unique_ptr<ByteSink> sink, std::string path, StringInterner* strings,
           BufferPool* pool, RecorderHooks hooks, Options options);
  ~Recorder();

  // Starts the writer thread, which writes the header first. False if the thread cannot start.
  bool Start(TraceHeader header);

  // From CUPTI's buffer-completed callback: takes ownership of `buffer` (returned to the pool).
  void OnBufferCompleted(uint8_t* buffer, size_t valid_size);

  // Asks for a flush soon (cudaDeviceReset, context destruction). Never blocks.
  void RequestFlush();

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
  struct Completed {
    uint8_t* buffer;
    size_t size;
  };

  void Run();
  void ProcessCompletedBuffers();
  void TakeCallSites();
  void AttachStack(ApiCall* call);
  void WriteRecords(TraceRecords& records);
  void DrainNvtx(bool final);
  void TakeDrops();
  void CheckCapture();
  // Opens/closes the time window when its moment has come; returns the next moment to wake for.
  uint64_t UpdateTimeWindow(uint64_t now, uint64_t next_tick);
  void Finish(const std::string& reason);
  void Wake(char what);

  std::unique_ptr<ByteSink> sink_;
  std::string path_;
  BufferPool* pool_;
  RecorderHooks hooks_;
  Options options_;
  TraceWriter writer_;
  ApiNestingTracker nesting_;
  TraceHeader header_;
  // Stack ids noted at API entry, by correlation id, until the call's record arrives. A call
  // that is never recorded (outside a capture range, dropped by CUPTI) leaves its entry behind:
  // past kMaxPendingCallSites the oldest half is dropped.
  static constexpr size_t kMaxPendingCallSites = size_t{1} << 16;
  std::unordered_map<uint64_t, uint32_t> pending_call_sites_;
  std::vector<std::pair<uint64_t, uint32_t>> call_site_batch_;

  std::mutex queue_mutex_;
  std::vector<Completed> queue_;

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
  bool window_opened_ = false;
  bool window_closed_ = false;
};

}  // namespace libprof
