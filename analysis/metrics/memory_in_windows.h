// `profview memory` over a one-process trace in bounded memory: the trace read in windows
// (trace_windows.h), its memory records added up window by window (MemoryAnalysis,
// MemoryTimelineBuilder, MemoryPoolAccumulator), with the NVTX ranges still open at each cut
// carried over (a peak's enclosing ranges) and the call stacks read so far (a failed
// allocation's call site). What windows cannot answer exactly makes the read inexact and the
// caller loads the file whole: the windowed read's own reasons, unified-memory counters (their
// analysis needs the whole trace), an NVTX range arriving after a cut it starts before, a failed
// allocation whose call stack is not read yet.
//
// Layer: analysis/metrics/. Reads through analysis/model/trace_windows.h.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics/memory.h"
#include "analysis/metrics/memory_pools.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/model/trace_windows.h"

namespace libprof::analysis {

struct MemoryResults {
  MemoryReport report;
  MemoryTimeline timeline;
  MemoryPoolReport pools;
  UnifiedMemoryReport unified;  // of a trace without unified-memory counters: pid and file
  std::vector<std::string> warnings;  // the read's (trace_windows.h)
};

// What `profview memory` computes for the one-process trace `path` (only the timeline when
// `timeline_only`), or nullopt when the windows cannot give it exactly. An error: the file
// cannot be read.
std::expected<std::optional<MemoryResults>, std::string> AnalyzeMemoryInWindows(
    const std::string& path, bool timeline_only, const WindowLimits& limits = {});

}  // namespace libprof::analysis
