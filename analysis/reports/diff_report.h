// Formats `profview diff` (run_diff.h, findings_diff.h) as terminal tables, CSV or JSON.
//
// Layer: analysis/reports/. Pure formatting.
//
// JSON shape (stable; fields may be added):
//   {"base": {"inputs": [...]}, "new": {...}, "threshold", "per": "iteration"|"run",
//    "iterations": {"range", "chosen_by": "nvtx"|"most-repeated",
//                   "base"|"new": {"count", "per_process", "median_ns", "p25_ns", "p75_ns"}},
//    "paired_by": "rank"|"order", "processes": [{"base"|"new": {"pid", "rank", "file"}|null,
//    "trace", "host_api", "gpu_busy"}], "headline": [{"figure", ...change}],
//    "host"|"device"|"nvtx": [row], "findings": [finding] (absent with --no-findings)}
//   change:  {"base", "new", "delta", "relative" (null when base is 0), "noise", "significant"}
//   row:     {"status", "kind", "name", "domain" (nvtx), "total", "calls", "mean", "gpu" (nvtx),
//             "bytes" (copies and memsets): change}
//   finding: {"status", "rule", "api", "device_id", "blamed_kind", "blamed", "detail",
//             "call_site", "base_count", "new_count", "blocked": change}
// CSV: one header line; sections "headline", "host", "device", "nvtx", "findings".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics/run_diff.h"
#include "analysis/rules/findings_diff.h"

namespace libprof::analysis {

struct DiffReportContext {
  std::vector<std::string> base_inputs, next_inputs;  // as given on the command line
  double threshold = 0.05;
  // Findings compared (null: not, --no-findings).
  const std::vector<FindingDiff>* findings = nullptr;
  size_t terminal_width = 120;
};

std::string DiffTable(const RunComparison& diff, const DiffReportContext& context);
std::string DiffCsv(const RunComparison& diff, const DiffReportContext& context);
std::string DiffJson(const RunComparison& diff, const DiffReportContext& context);

// "cudaMemcpyAsync on nrm2_kernel<…>(…)", "GPU 0 (pageable-memory)": what a finding key is
// about, for tables and check's messages.
std::string FindingAbout(const FindingKey& key);

// "+1.49 ms", "-3.74 ms", "+0.0 ns"; "+12.50%", "-99.88%" ("" for nullopt).
std::string SignedDuration(double ns);
std::string SignedPercent(std::optional<double> fraction);

}  // namespace libprof::analysis
