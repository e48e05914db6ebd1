// `profview summary`: host API, device activity, memory copies and NVTX ranges per name, per
// process and in total, as CUDA.jl's CUDA.@profile prints them.
//
// Layer: viewer-cli/ analysis library. Computes numbers only; summary_report.h formats them.
//
// Definitions (also in viewer-cli/USAGE.md and `profview summary --help`):
// - trace_ns: length of the analysed window (the recording, or what --from/--to/--nvtx select).
// - host_api_ns ("calling CUDA APIs took"): the union over all threads of the intervals of the
//   API calls counted in the host table, clipped to the window: wall time during which at least
//   one thread was inside a CUDA API call. Nested calls add nothing; two threads in calls at the
//   same moment count once. (Per-row totals are plain sums of call durations.)
// - gpu_busy_ns ("GPU was busy"): the union of all device activity intervals (kernels, copies,
//   memsets, graph launches, all devices and streams) clipped to the window.
// - Time (%): a row's total time divided by trace_ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/trace_model.h"
#include "viewer-cli/intervals.h"
#include "viewer-cli/stats.h"
#include "viewer-cli/trace_loader.h"

namespace libprof::viewer {

struct SummaryRow {
  std::string name;  // full name (demangled kernel name, API name, NVTX message)
  std::string kind;  // "api", "kernel", "memcpy", "memset", "graph", "nvtx"
  Stats stats;       // of durations, ns
  bool has_bytes = false;
  uint64_t bytes = 0;   // copies and memsets
  std::string domain;   // NVTX only
  uint64_t gpu_ns = 0;  // NVTX only: device time of the work launched inside the ranges
};

struct CopyRow {
  CopyKind copy_kind = CopyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t total_ns = 0;
};

struct Summary {
  // Where it comes from: one process, or "" / pid 0 for the total over several.
  std::string path;
  uint32_t pid = 0;
  std::string hostname;
  uint32_t processes = 1;

  uint64_t trace_ns = 0;
  uint64_t events = 0;  // timed records (TraceRecords::RecordCount)
  uint64_t host_api_ns = 0;
  uint64_t gpu_busy_ns = 0;
  uint64_t dropped_records = 0;
  std::vector<SummaryRow> host;    // sorted by total time, then name
  std::vector<SummaryRow> device;  // idem
  std::vector<CopyRow> copies;     // by total time
  std::vector<SummaryRow> nvtx;    // idem
  // Top-level calls left out of the host table as noise or internal launches (not with --raw);
  // nested calls are left out too but add no host time.
  uint64_t hidden_calls = 0;
  uint64_t hidden_ns = 0;
  uint64_t hidden_nested_calls = 0;

  // For totals over processes: merged intervals on a common timebase.
  std::vector<Interval> windows;
  std::vector<Interval> host_intervals;
  std::vector<Interval> device_intervals;
};

struct SummaryOptions {
  bool raw = false;  // show nested, noise and internal-launch calls in the host table
  // `--by caller`: one host row per API and call site ("cudaMemcpyAsync ← cublasSnrm2_v2
  // (libcublas.so.13) ← NormalizeLoop (app)", viewer-cli/call_sites.h) instead of per API;
  // calls without a recorded stack keep the plain API name.
  bool by_caller = false;
};

// Summarises one process. `time_offset_ns` is added to its times in the interval lists kept for
// CombineSummaries (see TimeOffsets).
Summary Summarize(const ProcessTrace& trace, const SummaryOptions& options,
                  int64_t time_offset_ns = 0);

// Per-process offsets that put all traces on one timebase: 0 when every process was recorded on
// the same host with the same clock, else each header's wall_clock_offset_ns (Unix time).
std::vector<int64_t> TimeOffsets(const std::vector<ProcessTrace>& traces);

// The total over several processes: rows with the same name merged, unions recomputed on the
// common timebase (host_api_ns: any thread of any process in an API; gpu_busy_ns: any device
// busy), trace_ns the union of the windows.
Summary CombineSummaries(const std::vector<Summary>& parts);

}  // namespace libprof::viewer
