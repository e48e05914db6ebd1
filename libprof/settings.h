// LIBPROF_* environment settings: parsed once, with a clear warning and the default for any bad
// value.
//
// Layer: libprof/ (CUDA-free, so tests run without a GPU). Every setting is documented in
// README.md; keep the two in step.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "proto/capture_kinds.h"

namespace libprof {

// Which kinds of records to enable: one flag per row of proto/capture_kinds.h, named by its
// `member`, on by default as the row says. LIBPROF_TRACE names them (comma-separated).
struct RecordKinds {
#define LIBPROF_RECORD_KIND_FLAG(member, name, on, group) bool member = on;
  LIBPROF_CAPTURE_KINDS(LIBPROF_RECORD_KIND_FLAG)
#undef LIBPROF_RECORD_KIND_FLAG
};

enum class ApiFilter { kSignificant, kAll };

// LIBPROF_BACKTRACE: which API calls get their native call stack recorded.
enum class BacktraceMode { kNone, kBlocking, kAll };

struct Settings {
  // LIBPROF_OUTPUT: output path template (%p pid, %h host, %q{VAR} env var, %n sequence, %% %).
  std::string output = "libprof-%p.pb";
  // LIBPROF_FORCE_OVERWRITE=1: replace an existing file instead of picking the next free name.
  bool force_overwrite = false;
  // LIBPROF_LOG_LEVEL: off|error|warn|info|debug|trace.
  std::string log_level = "warn";
  // LIBPROF_BUFFER_SIZE_KB: size of one CUPTI activity buffer. CUPTI recommends 1-10 MB.
  uint32_t buffer_size_kb = 8192;
  // LIBPROF_BUFFER_POOL: buffers kept ready; more are allocated on demand up to
  // LIBPROF_MAX_BUFFERS, after which records are dropped (and counted).
  uint32_t buffer_pool = 4;
  uint32_t max_buffers = 64;
  // LIBPROF_DEVICE_BUFFER_SIZE_KB: CUPTI's per-context device buffer (0 = CUPTI's default).
  uint32_t device_buffer_size_kb = 0;
  // LIBPROF_FLUSH_INTERVAL_MS: periodic forced flush; a crash loses at most this much.
  uint32_t flush_interval_ms = 1000;
  // LIBPROF_TRACE: record kinds (see RecordKinds).
  RecordKinds kinds;
  // LIBPROF_API_FILTER: "significant" (default) skips trivial runtime/driver calls at collection
  // time, as Nsight Systems does; "all" records every call.
  ApiFilter api_filter = ApiFilter::kSignificant;
  // LIBPROF_CAPTURE_RANGE: record CUDA activity only inside ranges: "" (always),
  // "cudaProfilerApi" (between cudaProfilerStart and cudaProfilerStop), "nvtx:NAME" or
  // "nvtx:NAME@DOMAIN" (inside NVTX ranges with that message, in that domain).
  std::string capture_range;
  // LIBPROF_DELAY_MS / LIBPROF_DURATION_MS: start recording CUDA activity this long after CUDA
  // initialised, and stop this long after that (0: no limit).
  uint32_t delay_ms = 0;
  uint32_t duration_ms = 0;
  // LIBPROF_WATCH_TAKEOVER: count kernel launches through CUPTI callbacks, to notice another
  // CUPTI client taking the activity buffers (0 saves those callbacks).
  bool watch_takeover = true;
  // LIBPROF_TRACE_LIST: a file to which each process appends the path of the trace it writes
  // (collect.sh --stats reads it). Plumbing, not a recording setting: left out of ToMap.
  std::string trace_list;
  // LIBPROF_CUPTI_PATH: libcupti to load when the process has none loaded yet.
  std::string cupti_path;
  // LIBPROF_BACKTRACE: "blocking" (default) records the call stack of API calls that can block
  // the host (copies, memsets, synchronisations, frees, allocations); "all" of every recorded
  // call; "none" of none (no callback is enabled for it).
  BacktraceMode backtrace = BacktraceMode::kBlocking;
  // LIBPROF_BACKTRACE_DEPTH: frames kept per stack, below libprof's and CUPTI's own.
  uint32_t backtrace_depth = 32;
  // LIBPROF_PYTHON_FRAMES: with a call stack, also the Python frames of a thread that runs
  // CPython and holds the GIL (libprof/backtrace/python_frames.h); 0 leaves them out.
  bool python_frames = true;

  // The effective values, by variable name, for the trace header.
  std::map<std::string, std::string> ToMap() const;
};

// A parsed LIBPROF_CAPTURE_RANGE.
struct CaptureRange {
  enum class Kind { kAlways, kCudaProfilerApi, kNvtx } kind = Kind::kAlways;
  std::string nvtx_message;  // kNvtx
  std::string nvtx_domain;   // kNvtx; "" = NVTX's default domain
};

// Parses LIBPROF_CAPTURE_RANGE's syntax; false (and *error) for anything else.
bool ParseCaptureRange(const std::string& text, CaptureRange* range, std::string* error);

// Parses settings from `getenv`-like lookup (returns nullptr when unset). Each bad value adds one
// sentence to *warnings naming the variable, the value and the default used instead.
Settings ParseSettings(const std::function<const char*(const char*)>& getenv_fn,
                       std::vector<std::string>* warnings);

// Parses from the process environment.
Settings ParseSettingsFromEnvironment(std::vector<std::string>* warnings);

}  // namespace libprof
