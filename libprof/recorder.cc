#include "libprof/recorder.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "libprof/clock.h"
#include "libprof/log.h"

namespace libprof {
namespace {

pid_t CurrentTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

bool MakePipe(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0; }

void ClosePipe(int fds[2]) {
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

}  // namespace

Recorder::Recorder(std::unique_ptr<ByteSink> sink, std::string path, StringInterner* strings,
                   BufferPool* pool, RecorderHooks hooks, Options options)
    : sink_(std::move(sink)),
      path_(std::move(path)),
      pool_(pool),
      hooks_(std::move(hooks)),
      options_(options),
      writer_(sink_.get(), options.writer, strings) {}

Recorder::~Recorder() {
  // Never join here: the recorder of a live process is stopped explicitly, and one left running
  // at static destruction must not block the exit.
  if (thread_.joinable()) thread_.detach();
  ClosePipe(wake_pipe_);
  ClosePipe(done_pipe_);
}

bool Recorder::Start(TraceHeader header) {
  header_ = std::move(header);
  if (!MakePipe(wake_pipe_) || !MakePipe(done_pipe_)) {
    Log().warn("cannot create the writer thread's pipes ({}); recording disabled", strerror(errno));
    return false;
  }
  // The writer thread must never take the application's signals: block them all while it is
  // created so that it inherits a full mask.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::exception& e) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    Log().warn("cannot start the writer thread ({}); recording disabled", e.what());
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  started_ = true;
  return true;
}

void Recorder::Wake(char what) {
  // A full pipe already guarantees a wake-up, so EAGAIN is fine to ignore.
  ssize_t ignored = write(wake_pipe_[1], &what, 1);
  (void)ignored;
}

void Recorder::OnBufferCompleted(uint8_t* buffer, size_t valid_size) {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.push_back({buffer, valid_size});
  }
  Wake('f');
}

void Recorder::RequestFlush() { Wake('f'); }

bool Recorder::is_writer_thread() const { return writer_tid_.load() == CurrentTid(); }

void Recorder::Stop(const std::string& reason) {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  if (stopped_ || !started_ || is_writer_thread()) return;
  stop_reason_ = reason;
  stop_requested_ = true;
  Wake('x');
  thread_.join();
  stopped_ = true;
}

void Recorder::RequestStopFromSignal(int signal_number) {
  stop_signal_ = signal_number;
  stop_requested_ = true;
  Wake('s');
}

bool Recorder::WaitStoppedFromSignal(int timeout_ms) {
  pollfd done{done_pipe_[0], POLLIN, 0};
  return poll(&done, 1, timeout_ms) > 0;
}

void Recorder::Run() {
  writer_tid_ = CurrentTid();
  if (hooks_.complete_header) hooks_.complete_header(&header_);
  if (!writer_.WriteHeader(header_)) {
    Log().warn("cannot write the trace header to {}; recording disabled", path_);
  }
  const uint64_t interval_ns = uint64_t{options_.flush_interval_ms} * 1000000;
  uint64_t next_tick = NowNs() + interval_ns;
  while (!stop_requested_.load()) {
    uint64_t now = NowNs();
    uint64_t wake_at = UpdateTimeWindow(now, next_tick);
    int timeout_ms = now >= wake_at ? 0 : static_cast<int>((wake_at - now) / 1000000 + 1);
    pollfd wake{wake_pipe_[0], POLLIN, 0};
    poll(&wake, 1, timeout_ms);
    char bytes[256];
    while (read(wake_pipe_[0], bytes, sizeof bytes) > 0) {
    }
    if (stop_requested_.load()) break;
    now = NowNs();
    bool tick = now >= next_tick;
    if (tick && hooks_.flush) hooks_.flush();
    ProcessCompletedBuffers();
    if (tick) CheckCapture();
    if (!tick) continue;
    DrainNvtx(/*final=*/false);
    // A driver call can only be nested in a runtime call still running; two intervals is more
    // than any delivery delay we have seen (cupti-facts.md 3.3: flushes take tens of ms).
    std::vector<ApiCall> released;
    nesting_.ReleaseOlderThan(now > 2 * interval_ns ? now - 2 * interval_ns : 0, &released);
    for (const ApiCall& call : released) writer_.Add(call);
    TakeDrops();
    writer_.Flush();
    records_written_ = writer_.records_written();
    bytes_written_ = writer_.bytes_written();
    next_tick = NowNs() + interval_ns;
  }
  std::string reason;
  if (int sig = stop_signal_.load(); sig != 0) {
    reason = std::string("signal SIG") + (sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
  } else {
    // Written by Stop() before stop_requested_ was set (which we have seen): no lock needed, and
    // none may be taken, since Stop() holds stop_mutex_ while it joins this thread.
    reason = stop_reason_;
  }
  Finish(reason);
  char done = 'd';
  ssize_t ignored = write(done_pipe_[1], &done, 1);
  (void)ignored;
}

uint64_t Recorder::UpdateTimeWindow(uint64_t now, uint64_t next_tick) {
  if (!hooks_.set_time_window) return next_tick;
  const uint64_t open_at = options_.window_open_at_ns;
  const uint64_t close_at = options_.window_close_at_ns;
  if (open_at != 0 && !window_opened_ && now >= open_at) {
    window_opened_ = true;
    hooks_.set_time_window(true);
  }
  if (close_at != 0 && !window_closed_ && now >= close_at) {
    window_closed_ = true;
    hooks_.set_time_window(false);
  }
  uint64_t wake_at = next_tick;
  if (open_at != 0 && !window_opened_) wake_at = std::min(wake_at, open_at);
  if (close_at != 0 && !window_closed_) wake_at = std::min(wake_at, close_at);
  return wake_at;
}

void Recorder::ProcessCompletedBuffers() {
  std::vector<Completed> batch;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    batch.swap(queue_);
  }
  // After taking the batch: each of its API records was queued after its call returned, so
  // after the call's entry noted its stack. Taking the stacks now finds all of them.
  TakeCallSites();
  for (const Completed& completed : batch) {
    TraceRecords records;
    if (hooks_.decode && completed.size > 0) hooks_.decode(completed.buffer, completed.size, &records);
    pool_->Release(completed.buffer, completed.size);
    WriteRecords(records);
  }
}

void Recorder::TakeCallSites() {
  if (!hooks_.take_call_sites) return;
  hooks_.take_call_sites(&call_site_batch_);
  for (const auto& [correlation_id, stack_id] : call_site_batch_) {
    pending_call_sites_[correlation_id] = stack_id;
  }
  call_site_batch_.clear();
  if (pending_call_sites_.size() <= kMaxPendingCallSites) return;
  // Correlation ids grow with time: keep the newer half (calls that may still be running).
  std::vector<uint64_t> ids;
  ids.reserve(pending_call_sites_.size());
  for (const auto& entry : pending_call_sites_) ids.push_back(entry.first);
  auto middle = ids.begin() + ids.size() / 2;
  std::nth_element(ids.begin(), middle, ids.end());
  for (auto it = ids.begin(); it != middle; ++it) pending_call_sites_.erase(*it);
}

void Recorder::AttachStack(ApiCall* call) {
  if (pending_call_sites_.empty()) return;
  auto it = pending_call_sites_.find(call->correlation_id);
  if (it == pending_call_sites_.end()) return;
  call->stack_id = it->second;
  pending_call_sites_.erase(it);
}

void Recorder::WriteRecords(TraceRecords& records) {
  if (!runtime_version_known_ && hooks_.runtime_version) {
    if (uint32_t version = hooks_.runtime_version(); version != 0) {
      writer_.SetRuntimeVersion(version);
      runtime_version_known_ = true;
    }
  }
  if (hooks_.complete_device) {
    for (DeviceInfo& device : records.devices) hooks_.complete_device(&device);
  }
  std::vector<ApiCall> calls;
  calls.swap(records.api_calls);
  writer_.AddAll(records);
  std::vector<ApiCall> ready;
  const pid_t own_thread = writer_tid_.load();
  for (ApiCall& call : calls) {
    // Our own queries (driver and runtime versions) are not the application's work.
    if (static_cast<pid_t>(call.thread_id) == own_thread) continue;
    AttachStack(&call);
    nesting_.Add(call, &ready);
  }
  for (const ApiCall& call : ready) writer_.Add(call);
}

void Recorder::DrainNvtx(bool final) {
  if (!hooks_.drain_nvtx) return;
  TraceRecords records;
  hooks_.drain_nvtx(&records.nvtx_events, &records.nvtx_domains, final, NowNs());
  writer_.AddAll(records);
}

void Recorder::CheckCapture() {
  if (!hooks_.check_capture) return;
  uint64_t missed = 0;
  std::string warning = hooks_.check_capture(&missed);
  if (warning.empty()) return;
  Log().warn("{}", warning);
  // Reported apart from records_dropped_: no buffer setting would have kept these.
  writer_.Add(DropReport{"cupti-taken-over", missed, NowNs()});
}

void Recorder::TakeDrops() {
  uint64_t now = NowNs();
  auto report = [&](const char* source, uint64_t count) {
    if (count == 0) return;
    records_dropped_ += count;
    writer_.Add(DropReport{source, count, now});
  };
  if (hooks_.take_dropped) report("cupti", hooks_.take_dropped());
  if (hooks_.take_nvtx_dropped) report("nvtx", hooks_.take_nvtx_dropped());
}

void Recorder::Finish(const std::string& reason) {
  if (hooks_.flush_forced) hooks_.flush_forced();
  ProcessCompletedBuffers();
  DrainNvtx(/*final=*/true);
  std::vector<ApiCall> released;
  nesting_.ReleaseAll(&released);
  for (const ApiCall& call : released) writer_.Add(call);
  if (hooks_.take_stacks) {
    // Once, at the end: every address is symbolised once, while its module is still loaded.
    TraceRecords stacks;
    hooks_.take_stacks(&stacks);
    writer_.AddAll(stacks);
  }
  TakeDrops();
  RunEnd end;
  end.end_time_ns = NowNs();
  end.reason = reason;
  end.records_written = writer_.records_written();
  end.records_dropped = records_dropped_.load();
  end.chunks_written = writer_.chunks_written() + 1;
  bool ok = writer_.Finish(end);
  records_written_ = writer_.records_written();
  bytes_written_ = writer_.bytes_written();
  if (!ok) {
    Log().warn("writing the trace to {} failed; the file holds what was written before", path_);
  }
  if (records_dropped_.load() > 0) {
    Log().warn(
        "{} records were dropped for lack of buffer space; raise LIBPROF_MAX_BUFFERS (now {} "
        "buffers of {} KiB) or LIBPROF_BUFFER_SIZE_KB",
        records_dropped_.load(), pool_->allocated(), pool_->buffer_bytes() / 1024);
  }
  Log().info("trace written to {}: {} records, {} bytes", path_, records_written_.load(),
             bytes_written_.load());
}

}  // namespace libprof
