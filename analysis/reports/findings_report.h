// Formats findings as tables with explanations, CSV or JSON. Rules are told apart by their
// registry entry (rule_registry.h: the family's TimeKind says how a finding's time adds up and
// which table shows it: start-up one line first, then host time, GPU idle time and pattern
// savings, each under its own headline) and render their own fields (rule_details.h); nothing
// here names a rule.
//
// Layer: analysis/reports/, reports. Pure formatting of findings.h's structs.
//
// JSON shape (stable; fields may be added):
//   {"findings": [{"rule", "family", "time_kind", "api", "pid", "thread_id", "correlation_id", "host_start_ns",
//     "host_duration_ns", "blocked_ns", "stream_id", <the details' memory fields: "bytes",
//     "copy_kind", "src_kind", "dst_kind">, "blamed": [{"kind", "name", "correlation_id",
//     "stream_id", "overlap_ns", "launched_before_ns", "via"}], "nvtx": [...], "explanation",
//     "call_site", "caller", "stack", "device_id", <the details' measures>, "file"}],
//    "totals": {"host_ns", "gpu_idle_ns", "saving_ns", "start_up_ns"}, "thresholds": {...}}
// stream_id, device_id, call_site and the details' fields appear when known; each rule's
// fields are listed in its registry entry and USAGE.md. Without --all each object is the worst
// finding of its group plus "count", "total_blocked_ns" and "mean_blocked_ns".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/rules/findings.h"
#include "analysis/rules/findings_digest.h"
#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {

struct FindingsReportContext {
  bool all = false;
  FindingsOptions thresholds;
  uint64_t trace_ns = 0;  // total analysed time of the processes, for the headline's percentage
  size_t terminal_width = 120;
};

// The output of `profview findings` from the findings of every process, accumulated
// (findings_digest.h; with --all it must keep every finding: FindingsDigest(true)).
std::string FindingsTable(const FindingsDigest& findings, const FindingsReportContext& context);
std::string FindingsCsv(const FindingsDigest& findings, const FindingsReportContext& context);
std::string FindingsJson(const FindingsDigest& findings, const FindingsReportContext& context);
// The same from a list of findings (one process's, or several concatenated in order).
std::string FindingsTable(const std::vector<Finding>& findings,
                          const FindingsReportContext& context);
std::string FindingsCsv(const std::vector<Finding>& findings, const FindingsReportContext& context);
std::string FindingsJson(const std::vector<Finding>& findings,
                         const FindingsReportContext& context);

// The pieces of the table, for the HTML report: the headline ("44 findings: API calls lost ..."),
// the grouped table's cells (#, Time lost, Count, Mean, Rule, API, Called from when a stack was
// recorded, Waiting for) and one
// finding's "Waiting for" cell.
std::string FindingsHeadline(const FindingsDigest& findings, const FindingsReportContext& context);
std::string FindingsHeadline(const std::vector<Finding>& findings,
                             const FindingsReportContext& context);
TableCells FindingGroupCells(const std::vector<FindingGroup>& groups);
std::string FindingWaitingFor(const Finding& finding);
// A finding's rule as the tables name it: "sync-api", "sync-api (start-up)", and for one-time
// work "sync-api (autotuning)", "sync-api (compilation)" or "sync-api (library set-up)" (its
// explanation says which).
std::string RuleLabel(std::string_view rule, bool in_start_up, OneTimeWork one_time);
// A "Waiting for" cell cut to `width`: the name abbreviated (FitName), a trailing " +N" (the
// other work waited for) kept whole (a TableColumn's CellFit).
std::string FitWaitingFor(const std::string& text, size_t width);

}  // namespace libprof::analysis
