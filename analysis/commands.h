// The subcommands of profview as library calls: load the traces, filter, analyse, format. The
// executable (profview_main.cc) only parses flags into these structs and prints the result.
//
// Layer: analysis/. Returns output text or a one-sentence error; never
// throws, never prints.
#pragma once

#include <cstddef>
#include <expected>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/model/filters.h"
#include "analysis/reports/summary_report.h"
#include "analysis/rules/findings.h"
#include "proto/trace_merge.h"

namespace libprof::analysis {

enum class OutputFormat { kTable, kCsv, kJson };

struct CommandOptions {
  std::vector<std::string> files;
  FilterOptions filters;
  OutputFormat format = OutputFormat::kTable;
  bool raw = false;  // summary/trace: also nested, noisy and internal API calls
  bool by_caller = false;  // summary --by caller: host rows per API and call site
  CallSiteRule call_sites;  // --framework-path: which Python frames are framework code
  size_t terminal_width = 120;
  // summary and combine: the rows each table shows (--rows; 0: all), the most time first
  size_t table_rows = kSummaryTableRows;
};

struct SummaryCommandOptions : CommandOptions {
  // `summary --partial -o FILE`: write a partial summary (metrics/summary_partial.h) to this file
  // ("-": returned as the output) instead of the tables.
  std::string partial_output;
  // `summary --findings`: each process's host time lost and top finding in the per-process
  // table (process_findings.h; a second read of the traces).
  bool findings = false;
};

struct FindingsCommandOptions : CommandOptions {
  FindingsOptions thresholds;
  bool all = false;  // one row per call instead of grouped rows
  // `findings --partial -o FILE`: write partial findings (rules/findings_partial.h) to this file
  // ("-": returned as the output) instead of the tables.
  std::string partial_output;
};

// Warnings (truncated file, dropped records) are appended to *warnings, one line each.
std::expected<std::string, std::string> RunSummary(const SummaryCommandOptions& options,
                                                   std::vector<std::string>* warnings);

// `profview combine PARTIALS...`: the summary of every trace the partial summaries cover, as
// `summary` prints it over those files (options.files are the partials; filters and --raw/--by
// come from them); or, when they are partial findings, the findings `findings` prints over
// those files (thresholds and filters from them). Errors name the partial that is not one, damaged, or of another version.
// Each partial is read, merged and freed before the next, so memory holds one partial and the
// combination (whose unions shrink as ranks overlap), not all of them.
struct CombineCommandOptions : CommandOptions {
  std::string partial_output;  // combine --partial -o FILE: the combination as one partial
};
std::expected<std::string, std::string> RunCombine(const CombineCommandOptions& options,
                                                   std::vector<std::string>* warnings);
std::expected<std::string, std::string> RunFindings(const FindingsCommandOptions& options,
                                                    std::vector<std::string>* warnings);
std::expected<std::string, std::string> RunTrace(const CommandOptions& options,
                                                 std::vector<std::string>* warnings);
// `profview streams`: per-stream work and per-device copy/compute overlap (analysis/metrics/streams.h).
std::expected<std::string, std::string> RunStreams(const CommandOptions& options,
                                                   std::vector<std::string>* warnings);

struct MemoryCommandOptions : CommandOptions {
  bool timeline = false;  // --timeline: device memory in use over time, failed allocations
};

// `profview memory`: allocations per API, device memory peak, churn (analysis/metrics/memory.h),
// failed allocations and unified memory (metrics/memory_timeline.h, metrics/unified_memory.h);
// with `timeline`, device memory in use over time instead.
std::expected<std::string, std::string> RunMemory(const MemoryCommandOptions& options,
                                                  std::vector<std::string>* warnings);

// `profview stacks --api NAME`: the distinct call stacks of one API (analysis/reports/stacks_report.h).
struct StacksCommandOptions : CommandOptions {
  std::string api;
};
std::expected<std::string, std::string> RunStacks(const StacksCommandOptions& options,
                                                  std::vector<std::string>* warnings);

enum class ExportFormat { kChromeJson, kSqlite };

struct ExportCommandOptions : CommandOptions {
  ExportFormat export_format = ExportFormat::kChromeJson;
  std::string output;  // the file to write; "-" writes JSON to *standard_output
  std::ostream* standard_output = nullptr;
  FindingsOptions thresholds;  // of the findings marked on the timeline
  bool overwrite = false;      // sqlite: replace an existing output (the JSON timeline always does)
};

// `profview export`: a Chrome Trace Event Format timeline (analysis/reports/timeline_export.h),
// or with kSqlite the whole traces as a SQLite database (analysis/reports/sqlite_export.h: no
// filters, which SQL does better), written under a temporary name and renamed to `output` once
// complete. Returns a one-line report for stdout ("" when the timeline itself went to stdout).
std::expected<std::string, std::string> RunExport(const ExportCommandOptions& options,
                                                  std::vector<std::string>* warnings);

// `profview collectives`: NCCL collectives per operation with nccl-tests' bandwidths and, over
// several ranks' traces, clock alignment, stragglers, late-rank instances and unmatched calls
// (analysis/metrics/collective_stats.h, rank_skew.h).
struct CollectivesCommandOptions : CommandOptions {
  uint64_t min_late_ns = 20'000;  // a rank late by less is not counted late (as --min-wait)
  size_t top = 10;                // late instances listed
};
std::expected<std::string, std::string> RunCollectives(const CollectivesCommandOptions& options,
                                                       std::vector<std::string>* warnings);

struct ReportCommandOptions : CommandOptions {
  std::string output;          // the HTML file to write
  FindingsOptions thresholds;  // of the findings listed and marked on the timeline
};

// `profview report`: one self-contained HTML page (analysis/reports/html_report.h), written
// under a temporary name and renamed to `output` once complete, so that a trace that cannot be
// read leaves no half-written page. Returns a one-line report for stdout.
std::expected<std::string, std::string> RunReport(const ReportCommandOptions& options,
                                                  std::vector<std::string>* warnings);

struct MergeCommandOptions {
  std::vector<std::string> inputs;  // trace files and directories (their *.pb files)
  std::string output;
  MergeOptions merge;
  size_t terminal_width = 120;
};

// `profview merge`: writes one multi-process trace (proto/trace_merge.h) and returns the list
// of the processes it holds: index, pid, parent, host, chunks, source file, command line.
std::expected<std::string, std::string> RunMerge(const MergeCommandOptions& options,
                                                 std::vector<std::string>* warnings);

// `profview diff BASE NEW` (compare_commands.cc): two runs compared (analysis/metrics/run_diff.h)
// from their streamed summaries, per iteration when both repeat an NVTX range, and their
// findings (rules/findings_diff.h). Errors (exit 2 in profview): a missing or unreadable input,
// another schema version, an --nvtx range one run lacks, two runs with no name in common.
struct DiffCommandOptions {
  std::vector<std::string> base, next;  // each: trace files and directories of one run
  std::string nvtx;       // the iteration range ("name" or "domain:name"); "" = most repeated
  bool per_run = false;   // compare whole runs even when they repeat a range
  bool keep_warm_up = false;  // per iteration: keep the warm-up iterations (iterations.h)
  double threshold = 0.05;  // DiffOptions::threshold
  double min_share = 0.001;  // DiffOptions::min_share
  bool findings = true;      // also compare findings (each file in windows where it can be)
  FindingsOptions thresholds;
  OutputFormat format = OutputFormat::kTable;
  size_t terminal_width = 120;
};
std::expected<std::string, std::string> RunDiff(const DiffCommandOptions& options,
                                                std::vector<std::string>* warnings);

// `profview check` (compare_commands.cc): assertions on one run (analysis/rules/run_checks.h),
// from flags and/or a TOML file (check_config.h). `passed` false: an assertion failed (exit 1);
// an error (exit 2): bad input or an assertion that cannot be evaluated. With `junit`, JUnit XML
// is written there too (replaced atomically).
struct CheckCommandOptions {
  std::vector<std::string> files;
  std::vector<std::string> max, min, max_regression;  // run_checks.h's assertion texts
  std::vector<std::string> baseline;                  // for --max-regression
  std::string config;                                 // a TOML file (check_config.h)
  std::string nvtx;  // the iteration range for /step and regressions ("" = most repeated)
  bool keep_warm_up = false;  // per step and in regressions: keep the warm-up iterations
  bool keep_one_time = false;  // rules: count findings in one-time work (CheckRun's)
  FindingsOptions thresholds;
  std::string junit;
  size_t terminal_width = 120;
};
struct CheckCommandResult {
  std::string text;
  bool passed = false;
};
std::expected<CheckCommandResult, std::string> RunCheck(const CheckCommandOptions& options,
                                                        std::vector<std::string>* warnings);

}  // namespace libprof::analysis
