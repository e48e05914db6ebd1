#include "libprof/profiler.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "libprof/backtrace/call_site_recorder.h"
#include "libprof/clock.h"
#include "libprof/driver_queries.h"
#include "libprof/log.h"
#include "libprof/nvtx/nvtx_recorder.h"
#include "libprof/output_path.h"
#include "libprof/process_info.h"
#include "proto/trace_writer.h"

#ifndef LIBPROF_VERSION
#define LIBPROF_VERSION "unknown"
#endif

namespace libprof {
namespace {

// Terminating signals whose default action would skip atexit: we flush, then re-raise.
constexpr int kFlushSignals[] = {SIGINT, SIGTERM};
// How long a signal handler waits for the final flush before letting the signal take effect.
constexpr int kSignalFlushTimeoutMs = 5000;

void PrepareFork() { NvtxRecorder::Get().PrepareFork(); }
void ParentAfterFork() { NvtxRecorder::Get().ParentAfterFork(); }

void SignalHandler(int signal_number) { Profiler::Get().OnTerminatingSignal(signal_number); }

void AtExit() {
  try {
    Profiler::Get().OnExit();
  } catch (...) {
    // Nothing may escape into the application's exit path.
  }
}

}  // namespace

Profiler& Profiler::Get() {
  static Profiler* instance = new Profiler();
  return *instance;
}

void Profiler::OnLibraryLoaded() {
  // Loaded by the driver through CUDA_INJECTION64_PATH (inside cuInit, other threads may be
  // running): leave the environment alone, setenv is not thread-safe.
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  std::string self = injection == nullptr || *injection == '\0' ? OwnLibraryPath() : "";
  if (!self.empty()) {
    // overwrite = 0: a path the user or collect.sh chose wins.
    setenv("CUDA_INJECTION64_PATH", self.c_str(), 0);
    setenv("NVTX_INJECTION64_PATH", self.c_str(), 0);
  }
  RegisterForkHandlers();
}

void Profiler::RegisterForkHandlers() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(&PrepareFork, &ParentAfterFork, &ChildAfterFork); });
}

void Profiler::ChildAfterFork() {
  Profiler& self = Get();
  // A child of a process that started CUDA cannot use CUDA, and a CUPTI flush there hangs
  // (cupti-facts.md 1.4): the child must never flush, nor touch the parent's file.
  if (self.recorder_.load() != nullptr || self.injection_seen_) self.inert_ = true;
  // The child's threads are gone, and with them whoever held the stack table's lock: walk no
  // stacks in the child, whatever its CUDA calls do.
  if (self.session_ != nullptr && self.session_->call_sites() != nullptr) {
    self.session_->call_sites()->Disable();
  }
  NvtxRecorder::Get().ResetAfterFork();
}

int Profiler::OnCudaInjection() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (injection_seen_ || inert_) return 1;
  injection_seen_ = true;
  StartLocked();
  return 1;
}

void Profiler::StartLocked() {
  std::vector<std::string> warnings;
  settings_ = ParseSettingsFromEnvironment(&warnings);
  InitLog(settings_.log_level);
  for (const std::string& warning : warnings) Log().warn("{}", warning);
  RegisterForkHandlers();
  recording_pid_ = getpid();

  PathContext context{static_cast<uint32_t>(recording_pid_), Hostname(), 0,
                      [](const char* name) { return std::getenv(name); }};
  auto output = OpenOutputFile(settings_.output, context, settings_.force_overwrite);
  if (!output) {
    Log().warn("LIBPROF_OUTPUT: {}; nothing will be recorded", output.error());
    return;
  }
  if (!output->requested.empty()) {
    Log().warn("{} exists; writing {} instead (LIBPROF_FORCE_OVERWRITE=1 replaces it)",
               output->requested, output->path);
  }
  const std::string path = output->path;
  std::unique_ptr<FileSink> sink = std::move(output->sink);

  NvtxRecorder& nvtx = NvtxRecorder::Get();
  nvtx.SetEnabled(settings_.kinds.nvtx);
  pool_ = std::make_unique<BufferPool>(size_t{settings_.buffer_size_kb} * 1024,
                                       settings_.buffer_pool, settings_.max_buffers);
  session_ = CreateCuptiSession();
  CaptureSession* session = session_.get();

  RecorderHooks hooks;
  hooks.flush = [session, this] { if (capture_active_) session->Flush(false); };
  hooks.flush_forced = [session, this] {
    if (!capture_active_) return;
    session->Disable();
    session->Flush(true);
  };
  hooks.decode = [session](const uint8_t* buffer, size_t size, TraceRecords* out) {
    session->Decode(buffer, size, out);
  };
  hooks.take_dropped = [session, this]() -> uint64_t {
    return capture_active_ ? session->TakeDropped() : 0;
  };
  hooks.check_capture = [session, this](uint64_t* missed) -> std::string {
    return capture_active_ ? session->CheckStillCapturing(missed) : "";
  };
  hooks.complete_header = [](TraceHeader* header) {
    header->cuda_driver_version = CudaDriverVersion();
  };
  hooks.runtime_version = [] { return CudaRuntimeVersion(); };
  hooks.complete_device = [](DeviceInfo* device) { FillDeviceDetails(device); };
  hooks.drain_nvtx = [&nvtx](std::vector<NvtxEvent>* events, std::vector<NvtxDomain>* domains,
                             bool final, uint64_t now_ns) {
    nvtx.Drain(events, domains, final, now_ns);
  };
  hooks.take_nvtx_dropped = [&nvtx] { return nvtx.TakeDropped(); };
  hooks.take_call_sites = [session](std::vector<CallSitePair>* out) {
    if (CallSiteRecorder* sites = session->call_sites()) sites->TakePairs(out);
  };
  hooks.take_stacks = [session, &nvtx](TraceRecords* out) {
    CallSiteRecorder* sites = session->call_sites();
    if (sites == nullptr) return;
    sites->Disable();  // capture has stopped (flush_forced ran first); the table is final
    sites->Symbolize(nvtx.strings(), out);
    if (const uint64_t missed = sites->missed(); missed > 0) {
      Log().warn("{} API calls went without a call stack (over {} distinct stacks, or the "
                 "writer thread fell behind)",
                 missed, CallSiteRecorder::kMaxStacks);
    }
  };

  CaptureRange range;
  std::string range_error;
  ParseCaptureRange(settings_.capture_range, &range, &range_error);  // validated when parsed
  const bool range_gated = range.kind != CaptureRange::Kind::kAlways;
  const bool time_gated = settings_.delay_ms > 0;
  hooks.set_time_window = [session](bool open) { session->SetGate(CaptureSession::kTimeGate, open); };

  Recorder::Options options;
  options.flush_interval_ms = settings_.flush_interval_ms;
  const uint64_t start_ns = NowNs();
  if (settings_.delay_ms > 0 || settings_.duration_ms > 0) {
    options.window_open_at_ns = start_ns + uint64_t{settings_.delay_ms} * 1000000;
    if (settings_.duration_ms > 0) {
      options.window_close_at_ns = options.window_open_at_ns + uint64_t{settings_.duration_ms} * 1000000;
    }
  }
  auto* recorder = new Recorder(std::move(sink), path, &nvtx.strings(), pool_.get(),
                                std::move(hooks), options);

  std::string status;
  capture_active_ = session->Start(settings_, &nvtx.strings(), pool_.get(), recorder,
                                   range_gated, time_gated, &status);
  if (capture_active_ && range.kind == CaptureRange::Kind::kNvtx) {
    nvtx.SetCaptureTrigger(range.nvtx_message, range.nvtx_domain, [session](bool open) {
      session->SetGate(CaptureSession::kRangeGate, open);
    });
  }
  if (!capture_active_) {
    Log().warn("{}; only NVTX ranges will be recorded", status);
  }

  TraceHeader header;
  header.libprof_version = LIBPROF_VERSION;
  header.pid = static_cast<uint32_t>(recording_pid_);
  header.parent_pid = static_cast<uint32_t>(getppid());
  header.hostname = context.hostname;
  header.command_line = CommandLine();
  if (auto rank = RankFromEnvironment(context.getenv_fn)) {
    header.rank = rank->value;
    header.rank_source = rank->source;
  }
  header.timebase =
      g_trace_clock.load() == CLOCK_MONOTONIC ? Timebase::kClockMonotonic : Timebase::kClockRealtime;
  uint64_t wall = ReadClockNs(CLOCK_REALTIME);
  uint64_t now = NowNs();
  header.start_wall_time_ns = wall;
  header.start_time_ns = now;
  header.wall_clock_offset_ns = static_cast<int64_t>(wall - now);
  header.cupti_version = session->cupti_version();
  header.cupti_path = session->cupti_path();
  header.settings = settings_.ToMap();
  header.capture_status = capture_active_ ? "" : status;

  if (!recorder->Start(std::move(header))) {
    if (capture_active_) session->Disable();
    capture_active_ = false;
    return;
  }
  recorder_ = recorder;
  std::atexit(&AtExit);
  InstallSignalHandlers();
}

void Profiler::InstallSignalHandlers() {
  for (int signal_number : kFlushSignals) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0) continue;
    // Only where the signal would kill the process unflushed. An application handler of its own
    // decides what happens (Python turns SIGINT into KeyboardInterrupt and exits normally, and
    // then atexit flushes); an ignored signal stays ignored.
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL) {
      struct sigaction ours {};
      ours.sa_handler = &SignalHandler;
      sigemptyset(&ours.sa_mask);
      ours.sa_flags = SA_RESTART;
      sigaction(signal_number, &ours, nullptr);
    }
  }
}

void Profiler::OnExit() {
  Recorder* recorder = recorder_.load();
  if (recorder == nullptr || inert_ || getpid() != recording_pid_) return;
  recorder->Stop("exit");
}

void Profiler::OnTerminatingSignal(int signal_number) {
  int saved_errno = errno;
  Recorder* recorder = recorder_.load();
  if (recorder != nullptr && !inert_ && getpid() == recording_pid_ &&
      !recorder->is_writer_thread()) {
    recorder->RequestStopFromSignal(signal_number);
    recorder->WaitStoppedFromSignal(kSignalFlushTimeoutMs);
  }
  // Back to the default action and re-raise: the signal is blocked while we run, so it is
  // delivered, and the process ends as it would have without us, once the handler returns.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  raise(signal_number);
  errno = saved_errno;
}

}  // namespace libprof
