#include "analysis/metrics/memory_in_windows.h"

#include <unordered_set>
#include <utility>

#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis {

std::expected<std::optional<MemoryResults>, std::string> AnalyzeMemoryInWindows(
    const std::string& path, bool timeline_only, const WindowLimits& limits) {
  WindowLimits with_stacks = limits;
  with_stacks.call_stacks = true;
  MemoryAnalysis memory;
  MemoryTimelineBuilder timeline;
  MemoryPoolAccumulator pools;
  std::vector<NvtxEvent> open_nvtx;  // ranges of earlier windows still open at the last cut
  bool exact = true;
  auto read = ReadInWindows(path, with_stacks, [&](ProcessTrace& w, const WindowSpan& span) {
    if (!exact) return;
    TraceRecords& r = w.records;
    if (!r.unified_memory_counters.empty()) {
      exact = false;
      return;
    }
    // The window's NVTX ranges: those of earlier windows still open, then its own.
    std::vector<NvtxEvent> own = std::move(r.nvtx_events);
    r.nvtx_events = std::move(open_nvtx);
    for (NvtxEvent& e : own) {
      if (e.kind != NvtxKind::kMark && e.start_ns < span.from_ns) {
        exact = false;  // it may enclose a peak of an earlier window
        return;
      }
      r.nvtx_events.push_back(std::move(e));
    }
    open_nvtx.clear();
    for (const NvtxEvent& e : r.nvtx_events) {
      if (e.kind != NvtxKind::kMark && e.end_ns >= span.to_ns) open_nvtx.push_back(e);
    }
    timeline.Add(r);
    const TraceIndex index(w);
    std::unordered_set<uint32_t> stacks;
    for (const CallStack& s : r.call_stacks) stacks.insert(s.id);
    for (const ApiCall& c : r.api_calls) {
      if (c.stack_id != 0 && c.return_value != 0 && !stacks.contains(c.stack_id)) {
        exact = false;  // a failed call's site, not read yet
        return;
      }
    }
    timeline.AddFailed(w, index);
    if (timeline_only) return;
    const StreamModel model(index);
    memory.Add(index, model);
    pools.Add(r);
  });
  if (!read) return std::unexpected(read.error());
  if (!read->exact || !exact) return std::nullopt;
  ProcessTrace& whole = read->whole;
  MemoryResults out;
  out.timeline = timeline.Finish(whole);
  if (!timeline_only) {
    out.report = memory.Finish(whole);
    out.pools = pools.Finish(whole.header.pid);
    out.unified.pid = whole.header.pid;
    out.unified.file = whole.path;
  }
  out.warnings = std::move(read->warnings);
  return out;
}

}  // namespace libprof::analysis
