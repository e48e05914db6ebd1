// `profview export`: the traces as a Chrome Trace Event Format timeline for ui.perfetto.dev and
// chrome://tracing. Per traced process (one Chrome process each):
// - one track per host thread: API calls and push/pop NVTX ranges as nested complete events,
//   NVTX marks as instants; start/end NVTX ranges (which may end on another thread) as async
//   events of the process;
// - one track per GPU stream ("GPU 0 stream 7 (legacy-default)"): kernels, copies named with
//   their memory kinds ("[copy pageable to device memory]"), memsets, whole-graph launches;
// - a flow arrow from each API call to the device work it issued (correlation id), category
//   "launch";
// - every API-call finding of analysis/rules/findings.h marked on its call (category "finding",
//   args, an instant "cudaMemcpyAsync blocked 4.93 ms waiting for nrm2_kernel<…>(…)") with a
//   flow arrow (category "wait") from each blamed operation to the call; GPU findings (idle
//   gaps, low utilisation) on per-device tracks.
// Slices that would partly overlap on one track go to an extra "(overlapping)" track, since the
// format wants strictly nested slices per thread (analysis/reports/timeline_lanes.h).
//
// Times: microseconds with three decimals (ns exact) from a common origin, the earliest
// recording start of all processes, on the common timebase of TimeOffsets (analysis/metrics/summary.h).
//
// Layer: analysis/reports/. Writes event by event to an ostream (nothing but the
// loaded traces is held in memory); never throws.
#pragma once

#include <cstdint>
#include <expected>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/rules/findings.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct ExportOptions {
  bool raw = false;          // also nested, noisy and internal API calls (as summary --raw)
  FindingsOptions findings;  // thresholds of the findings marked on the timeline
};

struct ExportStats {
  uint64_t events = 0;
  uint32_t processes = 0;
};

// Writes `traces` (already filtered) to *out as one JSON document. Error: a write failed.
std::expected<ExportStats, std::string> ExportTimeline(const std::vector<ProcessTrace>& traces,
                                                       const ExportOptions& options,
                                                       std::ostream* out);

}  // namespace libprof::analysis
