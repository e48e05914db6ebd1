// `profview stacks TRACE --api NAME`: the distinct call stacks one API was called from, with
// their call counts and host time, most expensive first.
//
// Layer: analysis/reports/. Stacks recorded by libprof (LIBPROF_BACKTRACE) are
// grouped by content (function and module of every frame, or the offset of unnamed ones), so
// that the same stack in several processes, or recorded under two ids, is one row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "analysis/model/call_sites.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct StackGroup {
  std::vector<FrameView> frames;  // innermost first
  CallSite site;
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
};

struct StacksReport {
  std::string api;
  uint64_t calls = 0;  // every call of the API, with or without a stack
  uint64_t total_ns = 0;
  uint64_t calls_without_stack = 0;
  uint64_t ns_without_stack = 0;
  std::vector<StackGroup> groups;  // by total_ns, largest first
};

// The stacks of the calls named `api` (exactly, as profview summary names them) in `traces`.
// An error when no trace has a call of that name.
std::expected<StacksReport, std::string> AnalyzeStacks(
    const std::vector<ProcessTrace>& traces, const std::string& api,
    const CallSiteRule& rule = CallSiteRule{});

std::string StacksTable(const StacksReport& report, size_t terminal_width);
std::string StacksCsv(const StacksReport& report);
// {"api", "calls", "total_ns", "calls_without_stack", "ns_without_stack", "stacks": [{"calls",
//  "total_ns", "mean_ns", "max_ns", "call_site", "frames": [{"function", "module",
//  "module_offset", "build_id", "cuda"}]}]}
std::string StacksJson(const StacksReport& report);

}  // namespace libprof::analysis
