#include "analysis/model/filters.h"

#include <algorithm>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "analysis/model/device_ops.h"
#include "analysis/model/intervals.h"
#include "analysis/model/nvtx_selection.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

template <typename T, typename Pred>
void KeepIf(std::vector<T>* list, Pred keep) {
  std::erase_if(*list, [&](const T& x) { return !keep(x); });
}

bool Contains(const std::vector<uint32_t>& list, uint32_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool InWindows(const std::vector<Interval>& windows, uint64_t t) {
  for (const Interval& w : windows) {
    if (t >= w.start_ns && t < w.end_ns) return true;
  }
  return false;
}

// Keeps the API calls marked in `keep` and every record correlated with a kept call. In place,
// and the kept ids in a bitmap when they are dense (as CUPTI hands them out), else a hash set:
// a copy of the calls and a set node per id were most of a per-iteration diff's filtering.
void KeepCalls(ProcessTrace* trace, const std::vector<bool>& keep) {
  TraceRecords& r = trace->records;
  uint64_t lo = UINT64_MAX, hi = 0;
  size_t count = 0;
  for (size_t i = 0; i < r.api_calls.size(); ++i) {
    const uint64_t corr = r.api_calls[i].correlation_id;
    if (!keep[i] || corr == 0) continue;
    lo = std::min(lo, corr);
    hi = std::max(hi, corr);
    ++count;
  }
  const bool dense = count > 0 && hi - lo < 4 * count + 1024;
  std::vector<bool> bitmap(dense ? hi - lo + 1 : 0);
  std::unordered_set<uint64_t> corrs;
  for (size_t i = 0; i < r.api_calls.size(); ++i) {
    const uint64_t corr = r.api_calls[i].correlation_id;
    if (!keep[i] || corr == 0) continue;
    if (dense) {
      bitmap[corr - lo] = true;
    } else {
      corrs.insert(corr);
    }
  }
  auto kept = [&](uint64_t corr) {
    if (!dense) return corrs.contains(corr);
    return corr >= lo && corr <= hi && bitmap[corr - lo];
  };
  size_t to = 0;
  for (size_t i = 0; i < r.api_calls.size(); ++i) {
    if (keep[i]) r.api_calls[to++] = r.api_calls[i];
  }
  r.api_calls.resize(to);
  // Every other kind that a call issued: work, syncs, events, memory operations (definitions
  // such as streams carry an id too, but describe rather than happen).
  ForEachList(r, [&]<typename T>(std::vector<T>& list) {
    if constexpr (kHasCorrelation<T> && !kIsDefinition<T> && !std::is_same_v<T, ApiCall>) {
      KeepIf(&list, [&](const T& x) { return kept(x.correlation_id); });
    }
  });
}

void ApplyWindow(ProcessTrace* trace, uint64_t from, uint64_t to) {
  trace->windows = Intersect(trace->windows, {TimeFilterWindow(trace->start_ns(), from, to)});
  KeepStartingIn(trace, trace->windows);
}

// Returns false when no range of this process matches.
bool ApplyNvtx(ProcessTrace* trace, const std::vector<std::string>& names, FilterMatches* matches) {
  NvtxSelection selection;
  for (const NvtxRange& range : MatchingRanges(*trace, names)) selection.Add(range);
  if (selection.empty()) return false;
  selection.Seal();
  const NvtxKept kept = KeepInside(trace, selection);
  matches->nvtx_device_ns += kept.device_ns;
  matches->nvtx_left_out_ns += kept.left_out_ns;
  trace->windows = Intersect(trace->windows, selection.spans());
  return true;
}

}  // namespace

Interval TimeFilterWindow(uint64_t base_ns, uint64_t from, uint64_t to) {
  return {base_ns + from, to == UINT64_MAX ? UINT64_MAX : base_ns + to};
}

void KeepStartingIn(ProcessTrace* trace, const std::vector<Interval>& windows) {
  ForEachList(trace->records, [&]<typename T>(std::vector<T>& list) {
    if constexpr (kHasTime<T>) {
      KeepIf(&list, [&](const T& x) { return InWindows(windows, StartNs(x)); });
    }
  });
}

bool HasThreadActivity(const ProcessTrace& trace, uint32_t tid) {
  const TraceRecords& r = trace.records;
  return std::any_of(r.api_calls.begin(), r.api_calls.end(),
                     [&](const ApiCall& c) { return c.thread_id == tid; }) ||
         std::any_of(r.nvtx_events.begin(), r.nvtx_events.end(),
                     [&](const NvtxEvent& e) { return e.thread_id == tid; });
}

void KeepThreads(ProcessTrace* trace, const std::vector<uint32_t>& tids) {
  TraceRecords& r = trace->records;
  std::vector<bool> keep(r.api_calls.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = Contains(tids, r.api_calls[i].thread_id);
  KeepCalls(trace, keep);
  ForEachList(r, [&]<typename T>(std::vector<T>& list) {
    if constexpr (kHasThread<T> && !std::is_same_v<T, ApiCall>) {
      KeepIf(&list, [&](const T& x) { return Contains(tids, x.thread_id); });
    }
  });
}

std::vector<NvtxRange> MatchingRanges(const ProcessTrace& trace,
                                      const std::vector<std::string>& names) {
  std::unordered_map<uint32_t, std::string> domains;
  for (const NvtxDomain& d : trace.records.nvtx_domains) domains[d.id] = trace.Str(d.name_id);
  std::vector<NvtxRange> ranges;
  for (const NvtxEvent& e : trace.records.nvtx_events) {
    if (e.kind == NvtxKind::kMark) continue;
    const std::string& domain = e.domain_id == 0 ? std::string() : domains[e.domain_id];
    for (const std::string& name : names) {
      if (NvtxNameMatches(name, domain, trace.Str(e.message_id))) {
        const uint32_t end_thread = e.kind == NvtxKind::kStartEnd ? e.end_thread_id : e.thread_id;
        ranges.push_back({e.thread_id, end_thread, e.start_ns, e.end_ns});
        break;
      }
    }
  }
  return ranges;
}

NvtxKept KeepInside(ProcessTrace* trace, const NvtxSelection& selection) {
  TraceRecords& r = trace->records;
  // The device work that started during the ranges, before and after the calls outside them go.
  auto during = [&] {
    uint64_t ns = 0;
    ForEachDeviceOp(r, [&]<typename T>(const DeviceOp& op, const T&) {
      if (InWindows(selection.spans(), op.start_ns)) ns += op.duration();
    });
    return ns;
  };
  NvtxKept kept{.device_ns = during()};
  auto inside = [&](uint32_t thread, uint64_t start, uint64_t end) {
    return selection.Inside(thread, start, end);
  };
  std::vector<bool> keep(r.api_calls.size());
  for (size_t i = 0; i < keep.size(); ++i) {
    const ApiCall& c = r.api_calls[i];
    keep[i] = inside(c.thread_id, c.start_ns, c.start_ns);
  }
  KeepCalls(trace, keep);
  // NVTX events nest in the range; other host records of a thread only start in it.
  ForEachList(r, [&]<typename T>(std::vector<T>& list) {
    if constexpr (std::is_same_v<T, NvtxEvent>) {
      KeepIf(&list, [&](const T& x) { return inside(x.thread_id, x.start_ns, x.end_ns); });
    } else if constexpr (kHasThread<T> && kHasTime<T> && !std::is_same_v<T, ApiCall>) {
      KeepIf(&list, [&](const T& x) { return inside(x.thread_id, StartNs(x), StartNs(x)); });
    }
  });
  kept.left_out_ns = kept.device_ns - during();
  return kept;
}

void NoteMatches(const FilterMatches& seen, FilterMatches* into) {
  for (uint32_t pid : seen.pids) {
    if (!Contains(into->pids, pid)) into->pids.push_back(pid);
  }
  for (uint32_t tid : seen.tids) {
    if (!Contains(into->tids, tid)) into->tids.push_back(tid);
  }
  into->nvtx = into->nvtx || seen.nvtx;
  into->nvtx_device_ns += seen.nvtx_device_ns;
  into->nvtx_left_out_ns += seen.nvtx_left_out_ns;
}

std::string NvtxLeftOutWarning(const std::string& path, const FilterMatches& before,
                               const FilterMatches& after) {
  const uint64_t during = after.nvtx_device_ns - before.nvtx_device_ns;
  const uint64_t left_out = after.nvtx_left_out_ns - before.nvtx_left_out_ns;
  if (left_out == 0 || 4 * left_out < during) return "";
  return path + ": --nvtx kept " + FormatDuration(static_cast<double>(during - left_out)) +
         " of the " + FormatDuration(static_cast<double>(during)) +
         " of device work that ran during the selected ranges: the rest was issued by calls "
         "outside them, before a range opened or on another thread (a range holds its own "
         "thread's calls; PyTorch runs the backward pass on its autograd thread); --from/--to "
         "select by time instead";
}

bool NvtxNameMatches(const std::string& wanted, const std::string& domain,
                     const std::string& message) {
  if (wanted == message) return true;
  if (domain.empty() || wanted.size() <= domain.size() + 1) return false;
  if (wanted.compare(0, domain.size(), domain) != 0 || wanted[domain.size()] != ':') return false;
  size_t rest = domain.size() + 1;
  while (rest < wanted.size() && wanted[rest] == ' ') ++rest;
  return wanted.compare(rest, std::string::npos, message) == 0;
}

std::expected<std::vector<ProcessTrace>, std::string> FilterProcesses(
    std::vector<ProcessTrace> traces, const FilterOptions& options, FilterMatches* matches) {
  auto note = [](std::vector<uint32_t>* seen, uint32_t id) {
    if (!Contains(*seen, id)) seen->push_back(id);
  };
  if (!options.pids.empty()) {
    for (const ProcessTrace& t : traces) {
      if (Contains(options.pids, t.header.pid)) note(&matches->pids, t.header.pid);
    }
    std::erase_if(traces,
                  [&](const ProcessTrace& t) { return !Contains(options.pids, t.header.pid); });
  }
  if (options.from_ns || options.to_ns) {
    const uint64_t from = options.from_ns.value_or(0);
    const uint64_t to = options.to_ns.value_or(UINT64_MAX);
    if (from >= to) return std::unexpected("--from must be earlier than --to");
    for (ProcessTrace& t : traces) ApplyWindow(&t, from, to);
  }
  if (!options.tids.empty()) {
    for (uint32_t tid : options.tids) {
      const bool found = std::any_of(traces.begin(), traces.end(), [&](const ProcessTrace& t) {
        return HasThreadActivity(t, tid);
      });
      if (found) note(&matches->tids, tid);
    }
    for (ProcessTrace& t : traces) KeepThreads(&t, options.tids);
  }
  if (!options.nvtx.empty()) {
    std::vector<ProcessTrace> kept;
    for (ProcessTrace& t : traces) {
      if (ApplyNvtx(&t, options.nvtx, matches)) {
        matches->nvtx = true;
        kept.push_back(std::move(t));
      }
    }
    traces = std::move(kept);
  }
  return traces;
}

std::expected<void, std::string> CheckFilterMatches(const FilterOptions& options,
                                                    const FilterMatches& matches) {
  for (uint32_t pid : options.pids) {
    if (!Contains(matches.pids, pid)) {
      return std::unexpected("no process with pid " + std::to_string(pid) + " in the traces");
    }
  }
  for (uint32_t tid : options.tids) {
    if (!Contains(matches.tids, tid)) {
      return std::unexpected("no activity of thread " + std::to_string(tid) + " in the traces");
    }
  }
  if (!options.nvtx.empty() && !matches.nvtx) {
    std::string names;
    for (const std::string& n : options.nvtx) names += (names.empty() ? "'" : ", '") + n + "'";
    return std::unexpected("no NVTX range named " + names + " in the traces");
  }
  return {};
}

std::expected<std::vector<ProcessTrace>, std::string> ApplyFilters(std::vector<ProcessTrace> traces,
                                                                   const FilterOptions& options) {
  FilterMatches matches;
  auto kept = FilterProcesses(std::move(traces), options, &matches);
  if (!kept) return kept;
  if (auto checked = CheckFilterMatches(options, matches); !checked) {
    return std::unexpected(checked.error());
  }
  return kept;
}

}  // namespace libprof::analysis
