#include "libprof/recorder.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "libprof/by_correlation.h"
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

Recorder::Recorder(std::unique_ptr<ByteSink> sink, std::string path, CaptureContext* context,
                   const BufferPool* pool, Sources sources, Options options)
    : sink_(std::move(sink)),
      path_(std::move(path)),
      context_(context),
      pool_(pool),
      sources_(sources),
      options_(options),
      writer_(sink_.get(), options.writer, &context->strings) {}

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
  if (sources_.activity != nullptr) sources_.activity->Connect(this);
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
  if (sources_.details != nullptr) sources_.details->CompleteHeader(&header_);
  if (!writer_.WriteHeader(header_)) {
    Log().warn("cannot write the trace header to {}; recording disabled", path_);
  }
  const uint64_t interval_ns = uint64_t{options_.flush_interval_ms} * 1000000;
  const TraceClock clock = context_->clock;
  uint64_t next_tick = clock.NowNs() + interval_ns;
  // The source's urgent flushes (ActivitySource::UrgentFlushIntervalMs), between ticks.
  uint32_t urgent_ms = 0;
  uint64_t next_urgent = UINT64_MAX;
  while (!stop_requested_.load()) {
    uint64_t now = clock.NowNs();
    uint64_t wake_at = std::min(next_tick, next_urgent);
    if (sources_.gates != nullptr) wake_at = std::min(wake_at, sources_.gates->UpdateWindow(now));
    int timeout_ms = now >= wake_at ? 0 : static_cast<int>((wake_at - now + 999999) / 1000000);
    pollfd wake{wake_pipe_[0], POLLIN, 0};
    poll(&wake, 1, timeout_ms);
    char bytes[256];
    while (read(wake_pipe_[0], bytes, sizeof bytes) > 0) {
    }
    if (stop_requested_.load()) break;
    now = clock.NowNs();
    bool tick = now >= next_tick;
    const bool urgent = now >= next_urgent;
    if ((tick || urgent) && sources_.activity != nullptr) sources_.activity->Flush();
    ProcessCompletedBuffers();
    if ((tick || urgent || urgent_ms == 0) && sources_.activity != nullptr) {
      urgent_ms = sources_.activity->UrgentFlushIntervalMs();
      next_urgent = urgent_ms == 0 ? UINT64_MAX : clock.NowNs() + uint64_t{urgent_ms} * 1000000;
    }
    if (tick) CheckCapture();
    if (!tick) continue;
    DrainNvtx(/*final=*/false);
    // A driver call can only be nested in a runtime call still running; two intervals is more
    // than any delivery delay we have seen (cupti-facts.md 3.3: flushes take tens of ms).
    std::vector<ApiCall> released;
    nesting_.ReleaseOlderThan(now > 2 * interval_ns ? now - 2 * interval_ns : 0, &released);
    WriteCalls(released, /*final=*/false);
    TakeDrops();
    writer_.Flush();
    records_written_ = writer_.records_written();
    bytes_written_ = writer_.bytes_written();
    next_tick = clock.NowNs() + interval_ns;
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

void Recorder::ProcessCompletedBuffers() {
  if (sources_.activity != nullptr) {
    for (TraceRecords records; sources_.activity->TakeBuffer(&records); records = TraceRecords{}) {
      // After taking the buffer: each of its API records was completed after its call
      // returned, so after the call's entry noted its stack. Taking the stacks now finds all.
      TakeCallSites();
      WriteRecords(records);
    }
  }
  // Also when no buffer came: the pairs wait in pending_call_sites_, whose size is bounded.
  TakeCallSites();
}

void Recorder::TakeCallSites() {
  if (sources_.call_sites == nullptr) return;
  sources_.call_sites->TakePairs(&call_site_batch_);
  for (const auto& [correlation_id, stack_id] : call_site_batch_) {
    pending_call_sites_[correlation_id] = stack_id;
  }
  call_site_batch_.clear();
  ForgetOlderHalf(&pending_call_sites_, kMaxPendingCallSites);
}

void Recorder::AttachStack(ApiCall* call) {
  if (pending_call_sites_.empty()) return;
  auto it = pending_call_sites_.find(call->correlation_id);
  if (it == pending_call_sites_.end()) return;
  call->stack_id = it->second;
  pending_call_sites_.erase(it);
}

void Recorder::WriteRecords(TraceRecords& records) {
  DetailsSource* details = sources_.details;
  if (!runtime_version_known_ && details != nullptr) {
    if (uint32_t version = details->RuntimeVersion(); version != 0) {
      writer_.SetRuntimeVersion(version);
      runtime_version_known_ = true;
    }
  }
  if (details != nullptr) {
    for (DeviceInfo& device : records.devices) details->CompleteDevice(&device);
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
  WriteCalls(ready, /*final=*/false);
}

void Recorder::WriteCalls(const std::vector<ApiCall>& calls, bool final) {
  if (sources_.call_sites != nullptr && (final || !calls.empty())) {
    // The stacks these calls use were noted at their entry, before their records completed:
    // written now, they land in the calls' chunk or an earlier one, and survive a crash.
    TraceRecords stacks;
    sources_.call_sites->TakeNewStacks(context_->strings, &stacks, final);
    writer_.AddAll(stacks);
  }
  for (const ApiCall& call : calls) writer_.Add(call);
}

void Recorder::DrainNvtx(bool final) {
  if (sources_.nvtx == nullptr) return;
  TraceRecords records;
  sources_.nvtx->Drain(context_->strings, &records.nvtx_events, &records.nvtx_domains,
                       &records.nvtx_payload_schemas, final,
                       context_->clock.NowNs());
  writer_.AddAll(records);
}

void Recorder::CheckCapture() {
  ActivitySource* activity = sources_.activity;
  if (!options_.watch_takeover || activity == nullptr) return;
  const ActivityCounters counters = activity->Counters();
  const TakeoverWatch::Verdict verdict =
      takeover_.Tick(counters.buffers, counters.launches, counters.recording);
  activity->CountLaunches(verdict.count_launches);
  if (!verdict.taken_over) return;
  Log().warn("{}", TakeoverWatch::kWarning);
  // Reported apart from records_dropped_: no buffer setting would have kept these.
  writer_.Add(DropReport{"cupti-taken-over", verdict.missed_launches, context_->clock.NowNs()});
}

void Recorder::TakeDrops() {
  uint64_t now = context_->clock.NowNs();
  auto report = [&](const char* source, uint64_t count) {
    if (count == 0) return;
    records_dropped_ += count;
    writer_.Add(DropReport{source, count, now});
  };
  if (sources_.activity != nullptr) {
    report("cupti", sources_.activity->TakeDropped());
    report("cupti-undecoded", sources_.activity->TakeUndecoded());
  }
  if (sources_.nvtx != nullptr) report("nvtx", sources_.nvtx->TakeDropped());
}

void Recorder::Finish(const std::string& reason) {
  if (sources_.activity != nullptr) sources_.activity->FlushFinal();
  ProcessCompletedBuffers();
  DrainNvtx(/*final=*/true);
  std::vector<ApiCall> released;
  nesting_.ReleaseAll(&released);
  WriteCalls(released, /*final=*/true);
  TakeDrops();
  RunEnd end;
  end.end_time_ns = context_->clock.NowNs();
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
