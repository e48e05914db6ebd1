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

#include "proto/trace_merge.h"
#include "analysis/model/filters.h"
#include "analysis/rules/findings.h"

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
};

struct SummaryCommandOptions : CommandOptions {
  // `summary --partial -o FILE`: write a partial summary (metrics/summary_partial.h) to this file
  // ("-": returned as the output) instead of the tables.
  std::string partial_output;
};

struct FindingsCommandOptions : CommandOptions {
  FindingsOptions thresholds;
  bool all = false;  // one row per call instead of grouped rows
};

// Warnings (truncated file, dropped records) are appended to *warnings, one line each.
std::expected<std::string, std::string> RunSummary(const SummaryCommandOptions& options,
                                                   std::vector<std::string>* warnings);

// `profview combine PARTIALS...`: the summary of every trace the partial summaries cover, as
// `summary` prints it over those files (options.files are the partials; filters and --raw/--by
// come from them). Errors name the partial that is not one, damaged, or of another version.
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

// `profview memory`: allocations per API, device memory peak, churn (analysis/metrics/memory.h).
std::expected<std::string, std::string> RunMemory(const CommandOptions& options,
                                                  std::vector<std::string>* warnings);

// `profview stacks --api NAME`: the distinct call stacks of one API (analysis/reports/stacks_report.h).
struct StacksCommandOptions : CommandOptions {
  std::string api;
};
std::expected<std::string, std::string> RunStacks(const StacksCommandOptions& options,
                                                  std::vector<std::string>* warnings);

struct ExportCommandOptions : CommandOptions {
  std::string output;  // the JSON file to write; "-" writes to *standard_output
  std::ostream* standard_output = nullptr;
  FindingsOptions thresholds;  // of the findings marked on the timeline
};

// `profview export`: a Chrome Trace Event Format timeline (analysis/reports/timeline_export.h), written
// under a temporary name and renamed to `output` once complete. Returns a one-line report for
// stdout ("" when the timeline itself went to stdout).
std::expected<std::string, std::string> RunExport(const ExportCommandOptions& options,
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

}  // namespace libprof::analysis
