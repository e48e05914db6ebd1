// One process's part of the HTML report (html_report.h): its headline, findings, timeline with
// detail views, utilisation, memory, bandwidth and summary sections, and the figures the
// per-rank overview shows for it.
//
// Layer: analysis/reports/. Pure string output; analyses one ProcessTrace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/intervals.h"
#include "analysis/model/trace_loader.h"
#include "analysis/reports/html_report.h"

namespace libprof::analysis {

struct HtmlProcessPart {
  std::string html;  // the process's sections
  // For the overview.
  uint32_t pid = 0;
  std::string hostname;
  std::optional<uint32_t> rank;
  uint64_t trace_ns = 0, host_api_ns = 0, gpu_busy_ns = 0, dropped_records = 0;
  uint64_t findings = 0, host_lost_ns = 0;
  std::vector<Interval> device_busy;  // merged, absolute times of this process
};

// `number`: the process's position in the page (section ids "p<number>-..."); `title`: its
// heading ("" with a single process).
HtmlProcessPart RenderProcess(const ProcessTrace& trace, size_t number, const std::string& title,
                              const HtmlReportOptions& options);

}  // namespace libprof::analysis
