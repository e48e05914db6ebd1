// Formats Summary results as CUDA.jl-style tables, CSV or JSON. p50/p90/p99 come from Stats'
// log-bucketed histogram: within 0.8% of the exact quantile (model/log_histogram.h).
//
// Layer: analysis/reports/. Pure formatting of summary.h's structs.
//
// JSON shape (stable; fields may be added): the total over all processes at the top level, and
// the same object per process under "processes":
//   {"trace_ns", "events", "host_api_ns", "gpu_busy_ns", "dropped_records", "repaired_ends",
//    "hidden_calls", "hidden_ns", "host": [row], "device": [row], "copies": [copy], "nvtx": [row],
//    "processes": [{"pid", "hostname", "file", ...the same fields...}]}
//   row:  {"name", "calls", "total_ns", "mean_ns", "std_ns", "min_ns", "max_ns", "p50_ns",
//          "p90_ns", "p99_ns"} plus "kind"
//         (device), "bytes" (copies and memsets), "domain" and "gpu_ns" (nvtx)
//   copy: {"copy_kind", "src_kind", "dst_kind", "count", "bytes", "total_ns", "gb_per_s"}
// CSV: one header line, then rows of sections "trace" (name = the metric, value in total_ns),
// "host", "device", "copies" and "nvtx", per process (pid) and for the total (pid "all").
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "analysis/metrics/summary.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {

// Rows a summary table shows by default: a program may name thousands of things (XLA pushes an
// NVTX range per compiled module and pass, each named with its program id: 94,000 rows for a
// JAX function compiled anew at 40 steps), which no one reads in a table.
inline constexpr size_t kSummaryTableRows = 100;

// Of `rows` (sorted, most time first), the first `max_rows` (0: all) and what the others took.
struct RowsShown {
  std::span<const SummaryRow> shown;
  size_t others = 0;
  uint64_t others_ns = 0;  // their total times, summed
};
RowsShown FirstRows(const std::vector<SummaryRow>& rows, size_t max_rows);

// `parts` are the per-process summaries, `total` their combination (CombineSummaries). With one
// process only that process is printed. Each table shows its first `max_rows` rows (0: all)
// and says what the others took.
std::string SummaryTable(const std::vector<Summary>& parts, const Summary& total,
                         size_t terminal_width, size_t max_rows = 0);
std::string SummaryCsv(const std::vector<Summary>& parts, const Summary& total);
std::string SummaryJson(const std::vector<Summary>& parts, const Summary& total);

// The cells of the host, device or NVTX table (`nvtx`: with the GPU time column) and of the
// copies table, as SummaryTable prints them; the HTML report renders the same cells.
TableCells SummaryRowCells(std::span<const SummaryRow> rows, uint64_t trace_ns, bool nvtx);
// "Memory copies: 100 copies, 400 B in 161.28 µs": the copies table's headline (text and HTML).
std::string CopiesHeadline(const std::vector<CopyRow>& copies);
// The sentence saying that `repaired_ends` (> 0) copies or memsets were ended early by the reader
// (Summary::repaired_ends): under summary's device table, in the HTML report's headline note.
std::string RepairedEndsSentence(uint64_t repaired_ends);
TableCells CopyRowCells(const std::vector<CopyRow>& copies);

// The per-process table of a summary over several processes (the straggler question of a
// multi-rank job): rank, pid, host, GPU busy time and share, host time in CUDA APIs and in
// *Synchronize* calls, the API with most host time; longest GPU busy time first, then least
// time waited. With summary --findings (every part's `findings` set) the host time lost and
// the top finding group take the place of the sync-call time and the top API.
std::string RankTable(const std::vector<Summary>& parts, size_t terminal_width);

// Time spent in host rows whose API name contains "Synchronize" (device, stream, event, context).
uint64_t SyncCallNs(const Summary& summary);

// "mean ± std (min ‥ max)" cells for rows of durations, aligned across rows ("" for a single
// value). Exposed for tests.
std::vector<std::string> DistributionCells(const std::vector<const Stats*>& stats);

}  // namespace libprof::analysis
