// `profview trace`: every API call, device operation and NVTX range in time order, like
// CUDA.jl's `CUDA.@profile trace=true`, with host rows indented by their NVTX nesting.
//
// Layer: analysis/reports/. Computes rows; formats them as table, CSV or JSON.
//
// JSON shape: {"events": [{"id", "start_ns", "duration_ns", "kind", "thread_id", "device_id",
// "stream_id", "name", "details", "depth", "bytes", "pid", "call_site"}]} with start_ns relative to the
// recording start; thread_id is absent for device rows, device_id/stream_id for host rows,
// call_site for calls without a recorded stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct ListingRow {
  uint64_t id = 0;        // correlation id; 0 for NVTX rows
  uint64_t start_ns = 0;  // relative to the recording start
  uint64_t duration_ns = 0;
  std::string kind;  // "api", "kernel", "memcpy", "memset", "graph", "nvtx", "mark"
  std::optional<uint32_t> thread_id;
  std::optional<uint32_t> device_id;
  std::optional<uint32_t> stream_id;
  std::string name;     // full name
  std::string details;  // grid/block/registers/shared memory, bytes and memory kinds, stream
  uint32_t depth = 0;   // enclosing NVTX ranges (and, with --raw, enclosing API calls)
  std::optional<uint64_t> bytes;
  uint32_t pid = 0;
  std::string call_site;  // API rows with a recorded stack: "cublasSnrm2_v2 (libcublas.so.13) ←
                          // NormalizeLoop (app)" (analysis/model/call_sites.h), also in details
};

// Rows of one process in time order (NVTX ranges before what they contain, host rows before
// device rows that start at the same time). Without `raw`, nested, noisy and internal-launch
// API calls are left out, as in the summary.
std::vector<ListingRow> TraceRows(const ProcessTrace& trace, bool raw);

std::string TraceTable(const std::vector<ListingRow>& rows, size_t terminal_width);
std::string TraceCsv(const std::vector<ListingRow>& rows);
std::string TraceJson(const std::vector<ListingRow>& rows);

}  // namespace libprof::analysis
