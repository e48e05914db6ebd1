#include "analysis/metrics/start_up.h"

#include <algorithm>
#include <map>
#include <vector>

#include "analysis/model/api_names.h"
#include "analysis/model/intervals.h"

namespace libprof::analysis {
namespace {

// The start of the first kernel, else of the first operation; false when there is none.
bool FirstOperation(const TraceIndex& index, uint64_t* start_ns, bool* is_kernel) {
  const std::vector<DeviceOp>& ops = index.device_ops();
  if (ops.empty()) return false;
  *start_ns = ops.front().start_ns;  // sorted by start
  *is_kernel = false;
  for (const DeviceOp& op : ops) {
    if (op.kind == DeviceOpKind::kKernel) {
      *start_ns = op.start_ns;
      *is_kernel = true;
      break;
    }
  }
  return true;
}

// Where start-up ends: from `first_op_ns`, start-up moves on to the end of a piece of start-up
// work (merged, sorted intervals) when such work fills kStartUpWorkShare of the time from the
// current end to the piece's end; else it stays. Measured from the current end, not from the
// first kernel, so that a long first load cannot pull in a short one long after.
uint64_t EndOfStartUp(const std::vector<Interval>& work, uint64_t first_op_ns) {
  uint64_t end = first_op_ns, covered = 0;
  for (const Interval& piece : work) {
    if (piece.end_ns <= end) continue;
    covered += piece.end_ns - std::max(piece.start_ns, end);
    if (static_cast<double>(covered) >=
        kStartUpWorkShare * static_cast<double>(piece.end_ns - end)) {
      end = piece.end_ns;
      covered = 0;
    }
  }
  return end;
}

}  // namespace

StartUp FindStartUp(const TraceIndex& index) {
  StartUp s;
  if (!FirstOperation(index, &s.first_op_ns, &s.first_op_is_kernel)) return s;
  s.known = true;
  const ProcessTrace& trace = index.trace();
  const std::vector<ApiCall>& calls = trace.records.api_calls;
  s.start_ns = std::min(trace.origin_ns, s.first_op_ns);

  std::vector<StartUpWork> kinds(calls.size());
  std::vector<Interval> defining;  // module loading and context creation
  for (size_t i = 0; i < calls.size(); ++i) {
    kinds[i] = index.Traits(calls[i]).start_up;
    if ((kinds[i] == StartUpWork::kModuleLoad || kinds[i] == StartUpWork::kContext) &&
        calls[i].end_ns > calls[i].start_ns) {
      defining.push_back({calls[i].start_ns, calls[i].end_ns});
    }
  }
  defining = MergeIntervals(std::move(defining));
  s.end_ns = std::max(EndOfStartUp(defining, s.first_op_ns), s.start_ns);
  std::map<std::string, uint64_t> later_by_api;
  for (size_t i = 0; i < calls.size(); ++i) {
    const ApiCall& c = calls[i];
    if ((kinds[i] != StartUpWork::kModuleLoad && kinds[i] != StartUpWork::kContext) ||
        c.end_ns <= s.end_ns) {
      continue;
    }
    const size_t outer = index.Outermost(i);
    if (outer != i && kinds[outer] != StartUpWork::kNone) continue;
    ++s.later_load.calls;
    later_by_api[index.ApiName(c)] += c.end_ns - std::max(c.start_ns, s.end_ns);
  }
  for (const Interval& piece : defining) {
    if (piece.end_ns <= s.end_ns) continue;
    s.later_loading.push_back({std::max(piece.start_ns, s.end_ns), piece.end_ns});
    s.later_load.ns += s.later_loading.back().length();
  }
  for (const auto& [api, ns] : later_by_api) {
    if (ns > s.later_load.top_api_ns) {
      s.later_load.top_api = api;
      s.later_load.top_api_ns = ns;
    }
  }

  // What start-up spent its time on.
  struct Tally {
    std::vector<Interval> pieces;
    std::map<std::string, uint64_t> by_api;
    uint64_t calls = 0;
  };
  std::map<StartUpWork, Tally> tallies;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (kinds[i] == StartUpWork::kNone) continue;
    const ApiCall& c = calls[i];
    if (c.start_ns >= s.end_ns || c.end_ns <= s.start_ns) continue;
    const Interval inside{std::max(c.start_ns, s.start_ns), std::min(c.end_ns, s.end_ns)};
    Tally& t = tallies[kinds[i]];
    t.pieces.push_back(inside);
    const size_t outer = index.Outermost(i);
    if (outer != i && kinds[outer] == kinds[i]) continue;  // counted with the enclosing call
    ++t.calls;
    t.by_api[index.ApiName(c)] += inside.length();
  }
  for (auto& [kind, t] : tallies) {
    StartUp::Work& w = kind == StartUpWork::kModuleLoad ? s.module_load
                       : kind == StartUpWork::kContext  ? s.context
                                                        : s.allocation;
    w.ns = UnionLength(std::move(t.pieces));
    w.calls = t.calls;
    for (const auto& [api, ns] : t.by_api) {
      if (ns > w.top_api_ns) {
        w.top_api = api;
        w.top_api_ns = ns;
      }
    }
  }
  return s;
}

}  // namespace libprof::analysis
