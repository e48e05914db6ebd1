// The process-wide profiler: starts recording when CUDA initialises, stops it at exit, on a
// terminating signal or never (a forked child of a CUDA process), and steps aside on any error.
//
// It owns one recording's parts and wires them once: the capture context (strings, clock), the
// buffer pool, the capture gates, the CUPTI session and the recorder, which takes its records
// from the session, the NVTX recorder, the call-stack recorder and the driver (capture_sources.h).
//
// Layer: libprof/ (CUDA-free: CUPTI sits behind CaptureSession). Called only from the injection
// entry points in entry.cc, which catch every exception.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "libprof/buffer_pool.h"
#include "libprof/capture_context.h"
#include "libprof/capture_gates.h"
#include "libprof/capture_session.h"
#include "libprof/driver_queries.h"
#include "libprof/recorder.h"
#include "libprof/settings.h"

namespace libprof {

class Profiler {
 public:
  // The one instance; created on first use and never destroyed (it is used from atexit handlers
  // and signal handlers, after static destructors may have run).
  static Profiler& Get();

  // LD_PRELOAD mode, from the library constructor: cheap and CUDA-free. Points
  // CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at this library when they are unset, so both
  // modes take the same path from here on, and registers the fork handler.
  void OnLibraryLoaded();

  // InitializeInjection, inside cuInit: starts recording. Returns 1 (the driver's "success")
  // even when recording could not start: the application must run on regardless.
  int OnCudaInjection();

  // At exit (atexit) or from a terminating signal handler.
  void OnExit();
  void OnTerminatingSignal(int signal_number);

 private:
  Profiler() = default;
  void StartLocked();
  void InstallSignalHandlers();
  static void RegisterForkHandlers();
  static void ChildAfterFork();

  std::mutex mutex_;
  bool injection_seen_ = false;
  std::atomic<bool> inert_{false};  // a child forked after CUDA started: never touch CUPTI
  pid_t recording_pid_ = 0;
  Settings settings_;
  // Never destroyed once made (nor is the Profiler): CUPTI and NVTX threads may still call in
  // while the process exits.
  std::unique_ptr<CaptureContext> context_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<CaptureGates> gates_;
  std::unique_ptr<CaptureSession> session_;
  DriverDetails driver_details_;
  std::atomic<Recorder*> recorder_{nullptr};
  bool capture_active_ = false;
};

}  // namespace libprof
