#include "libprof/profiler.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "libprof/backtrace/call_site_recorder.h"
#include "libprof/clock.h"
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

  PathContext path_context{static_cast<uint32_t>(recording_pid_), Hostname(), 0,
                           [](const char* name) { return std::getenv(name); }};
  auto output = OpenOutputFile(settings_.output, path_context, settings_.force_overwrite);
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
  if (!settings_.trace_list.empty()) {
    if (auto listed = AppendToTraceList(settings_.trace_list, path); !listed) {
      Log().warn("LIBPROF_TRACE_LIST: {}", listed.error());
    }
  }

  NvtxRecorder& nvtx = NvtxRecorder::Get();
  nvtx.SetEnabled(settings_.kinds.nvtx);
  context_ = std::make_unique<CaptureContext>();
  pool_ = std::make_unique<BufferPool>(size_t{settings_.buffer_size_kb} * 1024,
                                       settings_.buffer_pool, settings_.max_buffers);
  gates_ = std::make_unique<CaptureGates>(settings_);
  session_ = CreateCuptiSession();
  CaptureSession* session = session_.get();

  std::string status;
  capture_active_ =
      session->Start(settings_, &context_->strings, pool_.get(), gates_.get(), &status);
  if (capture_active_) {
    // Before any CUDA record and before the recorder starts: one timebase for the trace.
    context_->clock = session->clock();
    nvtx.SetClock(context_->clock);
    gates_->Connect(session, context_->clock.NowNs());
    const CaptureRange& range = gates_->range();
    if (range.kind == CaptureRange::Kind::kNvtx) {
      CaptureGates* gates = gates_.get();
      nvtx.SetCaptureTrigger(range.nvtx_message, range.nvtx_domain,
                             [gates](bool open) { gates->OnNvtxRange(open); });
    }
  } else {
    Log().warn("{}; only NVTX ranges will be recorded", status);
  }

  Recorder::Sources sources;
  sources.activity = session;  // does nothing when capture did not start
  sources.nvtx = &nvtx;
  sources.call_sites = session->call_sites();
  sources.details = &driver_details_;
  sources.gates = gates_.get();
  Recorder::Options options;
  options.flush_interval_ms = settings_.flush_interval_ms;
  options.watch_takeover = settings_.watch_takeover;
  auto* recorder =
      new Recorder(std::move(sink), path, context_.get(), pool_.get(), sources, options);

  TraceHeader header;
  header.libprof_version = LIBPROF_VERSION;
  header.pid = static_cast<uint32_t>(recording_pid_);
  header.parent_pid = static_cast<uint32_t>(getppid());
  header.hostname = path_context.hostname;
  header.command_line = CommandLine();
  if (auto rank = RankFromEnvironment(path_context.getenv_fn)) {
    header.rank = rank->value;
    header.rank_source = rank->source;
  }
  header.timebase = context_->clock.timebase();
  uint64_t wall = ReadClockNs(CLOCK_REALTIME);
  uint64_t now = context_->clock.NowNs();
  header.start_wall_time_ns = wall;
  header.start_time_ns = now;
  header.wall_clock_offset_ns = static_cast<int64_t>(wall - now);
  header.cupti_version = session->cupti_version();
  header.cupti_path = session->cupti_path();
  header.settings = settings_.ToMap();
  header.capture_status = capture_active_ ? "" : status;

  if (!recorder->Start(std::move(header))) {
    if (capture_active_) session->Stop();
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
