// `profview summary`: host API, device activity, memory copies and NVTX ranges per name, per
// process and in total, as CUDA.jl's CUDA.@profile prints them.
//
// Layer: analysis/metrics/. Computes numbers only; summary_report.h formats them.
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
#include <optional>
#include <expected>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "proto/trace_model.h"
#include "analysis/model/call_sites.h"
#include "analysis/model/filters.h"
#include "analysis/model/intervals.h"
#include "analysis/model/stats.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

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

// `summary --findings`: what `profview findings` says of one process alone, for the
// per-process table (the straggler question of a many-rank job). Filled by
// analysis/process_findings.h; plain values here so that partial summaries carry it.
struct ProcessFindings {
  uint64_t host_lost_ns = 0;  // the findings' "Host:" headline: host-wait plus host-cost time
  uint64_t findings = 0;      // every finding of the process
  // Its top group: the first of the host table, else the first of any table ("" rule: none).
  std::string top_rule;
  bool top_in_start_up = false;  // a group of start-up's waits (listed last by findings)
  std::string top_one_time;      // a group of one-time work's: its id (one_time_work.h), else ""
  std::string top_api;
  std::string top_waiting_for;  // the table's "Waiting for" (or "Where") cell
  std::string top_time_kind;    // "host", "gpu-idle", ... (rule_registry.h TimeKind)
  uint64_t top_time_lost_ns = 0;
  uint64_t top_count = 0;
};

struct Summary {
  // Where it comes from: one process, or "" / pid 0 for the total over several.
  std::string path;
  uint32_t pid = 0;
  std::string hostname;
  std::optional<uint32_t> rank;  // in a parallel job (TraceHeader::rank)
  uint32_t processes = 1;

  uint64_t trace_ns = 0;
  uint64_t events = 0;  // timed records kept by the filters (TraceRecords::RecordCount)
  uint64_t host_api_ns = 0;
  uint64_t gpu_busy_ns = 0;
  uint64_t dropped_records = 0;
  // Copies and sets whose end CUPTI gave after the next operation of their stream had started,
  // ended there by the reader (proto/stream_order_repair.h).
  uint64_t repaired_ends = 0;
  std::vector<SummaryRow> host;    // sorted by total time, then name
  std::vector<SummaryRow> device;  // idem
  std::vector<CopyRow> copies;     // by total time
  std::vector<SummaryRow> nvtx;    // idem
  // Top-level calls left out of the host table as noise or internal launches (not with --raw);
  // nested calls are left out too but add no host time.
  uint64_t hidden_calls = 0;
  uint64_t hidden_ns = 0;
  uint64_t hidden_nested_calls = 0;
  std::optional<ProcessFindings> findings;  // summary --findings, per process only
  // The GPUs this process ran work on, as their UUIDs (FormatGpuUuid), sorted; per process only
  // (the per-process table names GPUs that several processes of one host shared).
  std::vector<std::string> gpus;
  // The recording from its first window's start to its last one's end, on the process's trace
  // clock (which a host's processes share); kept when the interval lists go to a total.
  Interval span;

  // For totals over processes: sorted, merged intervals (on the common timebase once a
  // SummaryTotal has them). The interval lists are kept only when a total is wanted.
  std::vector<Interval> windows;
  std::vector<Interval> host_intervals;
  std::vector<Interval> device_intervals;
};

struct SummaryOptions {
  bool raw = false;  // show nested, noise and internal-launch calls in the host table
  // `--by caller`: one host row per API and call site ("cudaMemcpyAsync ← cublasSnrm2_v2
  // (libcublas.so.13) ← NormalizeLoop (app)", analysis/model/call_sites.h) instead of per API;
  // calls without a recorded stack keep the plain API name.
  bool by_caller = false;
  CallSiteRule call_sites;  // which Python frames are framework code (call_sites.h)
  // `--findings`: each process's findings (ProcessFindings) in the per-process table.
  bool findings = false;
};

// Rows sorted by total time (longest first), then name and domain: the order of every table.
void SortSummaryRows(std::vector<SummaryRow>* rows);

// What `profview summary` prints: each process, and the total over them (the process itself when
// there is only one).
struct SummaryReport {
  std::vector<Summary> parts;
  Summary total;
};

// Summarises trace files (a directory stands for its *.pb files) without loading them: each file
// is read twice, chunk by chunk, the first time only for its NVTX ranges (cheap: every other
// record is skipped unparsed), and memory stays bounded by how far out of order records arrive
// (process_summarizer.h; a file whose records are too far out of order is read again in an exact
// mode that holds more). Filters as filters.h's ApplyFilters, with the same errors; warnings
// (truncated file, dropped records) as LoadTraces.
// `limits`: process_summarizer.h's StreamLimits (defaults when null; tests make them tiny).
struct StreamLimits;
std::expected<SummaryReport, std::string> SummarizeFiles(const std::vector<std::string>& paths,
                                                         const FilterOptions& filters,
                                                         const SummaryOptions& options,
                                                         std::vector<std::string>* warnings,
                                                         const StreamLimits* limits = nullptr);

// Summarises a process already in memory (its windows are the analysed time; no filtering).
// `time_offset_ns` is added to its times in the interval lists kept for CombineSummaries (see
// TimeOffsets).
Summary Summarize(const ProcessTrace& trace, const SummaryOptions& options,
                  int64_t time_offset_ns = 0);

// Per-process offsets that put all traces on one timebase: 0 when every process was recorded on
// the same host with the same clock, else each header's wall_clock_offset_ns (Unix time).
std::vector<int64_t> TimeOffsets(const std::vector<const TraceHeader*>& headers);
std::vector<int64_t> TimeOffsets(const std::vector<ProcessTrace>& traces);

// The total over several processes, built one process at a time: rows with the same name merged,
// unions recomputed on the common timebase (host_api_ns: any thread of any process in an API;
// gpu_busy_ns: any device busy), trace_ns the union of the windows. Add shifts the part's windows
// and interval lists by `time_offset_ns` as it merges them; the part may drop its lists after.
class SummaryTotal {
 public:
  SummaryTotal();
  void Add(const Summary& part, int64_t time_offset_ns);
  Summary Finish();

 private:
  Summary total_;
  std::map<std::string, SummaryRow> host_, device_;
  std::map<std::pair<std::string, std::string>, SummaryRow> nvtx_;
  std::map<std::tuple<CopyKind, MemoryKind, MemoryKind>, CopyRow> copies_;
};

// SummaryTotal over parts whose lists are already on the common timebase.
Summary CombineSummaries(const std::vector<Summary>& parts);

// `summary --partial`: the summaries of these files' processes as a partial summary
// (summary_partial.h) that PartialsCombiner merges with others. Filters apply as in
// SummarizeFiles, but their "matched nothing" errors wait for the combination.
struct SummaryPartial;
std::expected<SummaryPartial, std::string> SummarizeFilesPartial(
    const std::vector<std::string>& paths, const FilterOptions& filters,
    const SummaryOptions& options, const StreamLimits* limits = nullptr);

}  // namespace libprof::analysis
