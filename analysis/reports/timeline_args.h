// The "args" of the timeline's events (what ui.perfetto.dev shows for a selected slice): API
// calls, NVTX ranges, device operations, and the findings marked on a call.
//
// Layer: analysis/reports/. Pure functions of a TraceIndex; used by timeline_export.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/model/call_sites.h"
#include "analysis/reports/chrome_trace_writer.h"
#include "analysis/rules/findings.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

// API call `call` (index into the records' api_calls): correlation_id, domain, return_value
// (when not 0), nested, and where libprof recorded its stack (LIBPROF_BACKTRACE) "call_site"
// (CallSite::Text, e.g. "cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)") and
// "call_stack" (every frame's label, innermost first, one per line).
EventArgs ApiCallArgs(const TraceIndex& index, const CallSites& sites, size_t call);

// NVTX range or mark: domain, category, color ("#rrggbb"), the threads of start/end ranges, open.
EventArgs NvtxRangeArgs(const TraceIndex& index, const NvtxEvent& event);

// Kernel (full and mangled name, grid, block, registers, shared and local memory, cluster,
// graph node), copy (bytes, gb_per_s, copy and memory kinds, async, peer devices), memset
// (bytes, gb_per_s, memory kind, value, async) or graph; all with correlation_id, device, stream,
// graph_id and launched_by (the API call that issued it).
EventArgs DeviceOpArgs(const TraceIndex& index, const DeviceOp& op);

// Adds "findings" (the rules, comma-separated), each rule's explanation under its own key and,
// for a wait (RuleFamily::kHostWait), "blocked_ns" and "waited_for" (each blamed operation with
// its correlation id, stream and overlap with the wait).
void AddFindingArgs(const std::vector<const Finding*>& findings, EventArgs* args);

}  // namespace libprof::analysis
