// One process's part of the HTML report (html_report.h): its headline, findings, timeline with
// detail views, utilisation, memory, bandwidth and summary sections, and the figures the
// per-rank overview shows for it.
//
// Two ways to the same page: from a ProcessTrace in memory (filters, files of several processes,
// traces the windows cannot answer), or from a one-process trace file read in windows
// (model/trace_windows.h) in memory bounded by the windows, not the trace: the windowed findings
// (rules/windowed_findings.h: two reads), then two reads of its own, each window indexed on
// worker threads (model/ordered_pipeline.h) and added up in order. The first fills the
// whole-trace timeline, the utilisation, memory and bandwidth figures and looks up the blocked
// calls (thread and span of each finding's call); the second draws the views that depend on it
// (the span where the GPU ran work, the detail views), looks up the work of the marks a view may
// draw, draws the NVTX rows (each thread's nesting carried from window to window) and feeds the
// summary's ProcessSummarizer, as SummarizeFiles would feed it the file (NVTX ranges in the first
// read). The whole trace is the one-window case of the same accumulators, so both ways give the
// same bytes.
//
// Layer: analysis/reports/. Pure string output.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/intervals.h"
#include "analysis/model/trace_loader.h"
#include "analysis/model/trace_windows.h"
#include "analysis/reports/html_report.h"

namespace libprof::analysis {

struct HtmlProcessPart {
  // The process's sections, without its title (which only a page of several processes has).
  std::string html;
  // For the title, the overview and the page's subtitle.
  TraceHeader header;
  std::string path;
  uint64_t start_ns = 0, end_ns = 0, origin_ns = 0;  // the recording (ProcessTrace's)
  uint64_t trace_ns = 0, host_api_ns = 0, gpu_busy_ns = 0, dropped_records = 0;
  uint64_t findings = 0, host_lost_ns = 0;
  std::vector<Interval> device_busy;  // merged, absolute times of this process
  std::vector<std::string> warnings;  // of a windowed read (the trace's own, as LoadTraceFile's)
};

// `number`: the process's position in the page (section ids "p<number>-...").
HtmlProcessPart RenderProcess(const ProcessTrace& trace, size_t number,
                              const HtmlReportOptions& options);

// The same part for the one-process trace file `path`, read in windows; nullopt when the
// windows cannot give exactly the whole trace's page (several processes, no quiescent point,
// what the windowed findings or the memory figures cannot answer): then load it whole. An
// error: the file cannot be read. `overview`: the page will have several processes, so the
// part keeps its device_busy (a page of one leaves it empty: it can be millions of intervals).
std::expected<std::optional<HtmlProcessPart>, std::string> RenderProcessInWindows(
    const std::string& path, size_t number, const HtmlReportOptions& options, bool overview,
    const WindowLimits& limits = {});

}  // namespace libprof::analysis
