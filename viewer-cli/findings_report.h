// Formats findings as a table with explanations, CSV or JSON.
//
// Layer: viewer-cli/ analysis library. Pure formatting of findings.h's structs.
//
// JSON shape (stable; fields may be added):
//   {"findings": [{"rule", "api", "pid", "thread_id", "correlation_id", "host_start_ns",
//     "host_duration_ns", "blocked_ns", "stream_id", "bytes", "copy_kind", "src_kind",
//     "dst_kind", "blamed": [{"kind", "name", "correlation_id", "stream_id", "overlap_ns",
//     "launched_before_ns", "via"}], "nvtx": [...], "explanation", ...}], "thresholds": {...}}
// stream_id, bytes and the kinds appear when known; GPU rules add "device_id" and, for
// gpu-low-utilization, "utilization", "launch_bound_idle_ns" and "kernels"; the idle-time
// causes, alloc-churn's and no-overlap-default-stream's fields are listed in USAGE.md. Without --all each
// object is the worst finding of its group plus "count", "total_blocked_ns" and
// "mean_blocked_ns".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "viewer-cli/findings.h"

namespace libprof::viewer {

struct FindingsReportContext {
  bool all = false;
  FindingsOptions thresholds;
  uint64_t trace_ns = 0;  // total analysed time of the processes, for the headline's percentage
  size_t terminal_width = 120;
};

std::string FindingsTable(const std::vector<Finding>& findings,
                          const FindingsReportContext& context);
std::string FindingsCsv(const std::vector<Finding>& findings, const FindingsReportContext& context);
std::string FindingsJson(const std::vector<Finding>& findings,
                         const FindingsReportContext& context);

}  // namespace libprof::viewer
