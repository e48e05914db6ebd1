// `profview report`: the traces as one self-contained HTML page to look at, offline, in any
// browser. Top to bottom: with several processes an overview per rank; then per process the
// headline (trace span, host time in CUDA calls, GPU busy, dropped records), the top findings
// with their call sites, the timeline (html_timeline.h) and detail views around the top
// findings, GPU utilisation over time per device, device memory in use over time, copy bandwidth
// by kind, and the summary tables, all with `profview summary` / `findings` / `memory`'s names
// and numbers.
//
// Section ids (the tests look for them): "overview" (several processes), and per process i
// (from 0) "p<i>-headline", "p<i>-findings", "p<i>-timeline", "p<i>-details",
// "p<i>-utilization", "p<i>-memory", "p<i>-bandwidth", "p<i>-summary".
//
// Layer: analysis/reports/. Writes to an ostream; never throws; the page grows with processes,
// lanes and pixels, not with records (html_timeline.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/model/trace_loader.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

struct HtmlReportOptions {
  bool raw = false;          // also nested, noisy and internal API calls (as summary --raw)
  FindingsOptions findings;  // thresholds, as `profview findings`
  // Finding groups listed, and how many of them get a detail view of the timeline.
  size_t top_findings = 10;
  size_t detail_views = 3;
};

struct HtmlReportStats {
  uint32_t processes = 0;
  uint64_t findings = 0;
};

// Writes the page for `traces` (already filtered) to *out. Error: a write failed.
std::expected<HtmlReportStats, std::string> WriteHtmlReport(const std::vector<ProcessTrace>& traces,
                                                            const HtmlReportOptions& options,
                                                            std::ostream* out);

// The same page from its processes' parts, made one at a time (html_process_report.h: from a
// trace in memory or a file read in windows), numbered in page order.
struct HtmlProcessPart;
std::expected<HtmlReportStats, std::string> WriteHtmlReport(
    const std::vector<HtmlProcessPart>& parts, std::ostream* out);

}  // namespace libprof::analysis
