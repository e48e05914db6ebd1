#include "analysis/metrics/memory.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analysis/model/api_names.h"
#include "analysis/model/device_wait.h"

namespace libprof::analysis {
namespace {

using CallInfo = MemoryAnalysis::CallInfo;

CallInfo CallOf(const TraceIndex& index, const StreamModel& model, uint64_t corr) {
  CallInfo info;
  const int64_t i = index.LaunchingCall(corr);
  if (i < 0) return info;
  const ApiCall& call = index.records().api_calls[static_cast<size_t>(i)];
  info.api = index.ApiName(call);
  info.host_ns = call.end_ns > call.start_ns ? call.end_ns - call.start_ns : 0;
  info.start_ns = call.start_ns;
  info.end_ns = call.end_ns;
  info.thread_id = call.thread_id;
  info.stack_id = call.stack_id;
  if (IsImplicitSyncApi(info.api)) info.sync_wait_ns = DeviceWideWaitNs(model, call);
  return info;
}

// The NVTX ranges (push/pop and start/end; not marks) open on thread `tid` at `t`, outermost
// first: a linear scan, done once per device.
std::vector<std::string> OpenRanges(const TraceIndex& index, uint32_t tid, uint64_t t) {
  std::vector<const NvtxEvent*> open;
  for (const NvtxEvent& e : index.records().nvtx_events) {
    if (e.kind == NvtxKind::kMark || e.start_ns > t || t > e.end_ns) continue;
    const bool ended_here = e.kind == NvtxKind::kStartEnd && e.end_thread_id == tid;
    if (e.thread_id == tid || ended_here) open.push_back(&e);
  }
  std::stable_sort(open.begin(), open.end(), [](const NvtxEvent* a, const NvtxEvent* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
  });
  std::vector<std::string> names;
  for (const NvtxEvent* e : open) names.push_back(index.NvtxName(*e));
  return names;
}

}  // namespace

MemoryReport AnalyzeMemory(const ProcessTrace& trace) {
  const TraceIndex index(trace);
  const StreamModel model(index);
  return AnalyzeMemory(trace, index, model);
}

MemoryReport AnalyzeMemory(const ProcessTrace& trace, const TraceIndex& index,
                           const StreamModel& model) {
  MemoryAnalysis analysis;
  analysis.Add(index, model);
  return analysis.Finish(trace);
}

void MemoryAnalysis::Add(const TraceIndex& index, const StreamModel& model) {
  const std::vector<MemoryOp>& ops = index.records().memory_ops;

  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].time_ns < ops[b].time_ns; });

  // A call and its records are in one window: what is per call stays here.
  std::unordered_map<uint64_t, CallInfo> calls;
  auto call = [&](uint64_t corr) -> const CallInfo& {
    auto it = calls.find(corr);
    if (it == calls.end()) it = calls.emplace(corr, CallOf(index, model, corr)).first;
    return it->second;
  };
  std::map<std::pair<std::string, MemoryKind>, std::unordered_set<uint64_t>> corrs;
  std::set<uint32_t> new_peaks;  // devices whose peak this window reached

  // The window's explicitly synchronising top-level calls, by start, to take in time order
  // with the memory records (release synchronisations): only where a pool's release may be
  // pending (a window with pool records, or one carried), not over every window's calls.
  const bool pools =
      !released_to_pool_.empty() ||
      std::any_of(ops.begin(), ops.end(), [](const MemoryOp& op) { return op.pool_type == 1; });
  std::vector<uint32_t> syncs;
  const std::vector<ApiCall>& api_calls = index.records().api_calls;
  for (uint32_t k = 0; pools && k < api_calls.size(); ++k) {
    if (index.Outermost(k) == k && index.Traits(api_calls[k]).explicit_sync != SyncScope::kNone) {
      syncs.push_back(k);
    }
  }
  std::stable_sort(syncs.begin(), syncs.end(), [&](uint32_t a, uint32_t b) {
    return api_calls[a].start_ns < api_calls[b].start_ns;
  });
  size_t next_sync = 0;
  auto take_syncs_before = [&](uint64_t t) {
    for (; next_sync < syncs.size() && api_calls[syncs[next_sync]].start_ns < t; ++next_sync) {
      const ApiCall& s = api_calls[syncs[next_sync]];
      auto it = released_to_pool_.find(s.thread_id);
      if (it == released_to_pool_.end()) continue;
      ChurnGroup& g = churn_[it->second];
      const uint64_t host = s.end_ns > s.start_ns ? s.end_ns - s.start_ns : 0;
      ++g.release_syncs;
      g.release_sync_ns += host - std::min(host, DeviceWideWaitNs(model, s));
      released_to_pool_.erase(it);
    }
  };

  for (size_t i : order) {
    const MemoryOp& op = ops[i];
    const bool alloc = op.operation == MemoryOperation::kAllocation;
    const bool release = op.operation == MemoryOperation::kRelease;
    if (!alloc && !release) continue;
    take_syncs_before(op.time_ns);
    const CallInfo& c = call(op.correlation_id);
    const bool from_pool = op.pool_type == 1;  // a local pool: its threshold is recorded
    if (from_pool) released_to_pool_.erase(c.thread_id);
    MemoryApiStats& s = by_api_[{c.api, op.memory_kind}];
    s.api = c.api;
    s.kind = op.memory_kind;
    if (alloc) {
      ++s.allocations;
      s.allocated_bytes += op.bytes;
    } else {
      ++s.releases;
      s.released_bytes += op.bytes;
    }
    // Distinct calls: a call and its records are in one window, but records without a
    // correlation id (0) are one "call" over all windows.
    const bool new_call = op.correlation_id == 0
                              ? uncorrelated_.insert({c.api, op.memory_kind}).second
                              : corrs[{c.api, op.memory_kind}].insert(op.correlation_id).second;
    if (new_call) {
      ++s.calls;
      s.host_ns += c.host_ns;
      if (c.sync_wait_ns > 0) {
        ++s.implicit_syncs;
        s.sync_wait_ns += c.sync_wait_ns;
      }
    }

    const bool device_kind = op.memory_kind == MemoryKind::kDevice;
    if (alloc) {
      live_[op.address] = Live{op.bytes,    op.device_id,
                               device_kind, op.correlation_id,
                               c,           from_pool ? op.pool_release_threshold : UINT64_MAX};
      if (!device_kind) continue;
      DeviceMemoryPeak& d = devices_[op.device_id];
      d.device_id = op.device_id;
      uint64_t& used = in_use_[op.device_id];
      used += op.bytes;
      if (used > d.peak_bytes) {
        d.peak_bytes = used;
        peak_at_[op.device_id] = op.time_ns;  // from the trace start at Finish
        d.api = c.api;
        d.correlation_id = op.correlation_id;
        d.thread_id = c.thread_id;
        new_peaks.insert(op.device_id);
      }
      continue;
    }
    auto it = live_.find(op.address);
    if (it == live_.end()) {
      if (device_kind) {
        DeviceMemoryPeak& d = devices_[op.device_id];
        d.device_id = op.device_id;
        ++d.unmatched_releases;
      }
      continue;
    }
    const Live a = std::move(it->second);
    live_.erase(it);
    if (a.device_kind) {
      uint64_t& used = in_use_[a.device_id];
      used -= std::min(used, a.bytes);
    }
    const CallInfo& ac = a.call;
    ChurnGroup& g = churn_[{ac.api, a.bytes}];
    g.api = ac.api;
    g.bytes = a.bytes;
    if (g.pairs == 0) {
      g.free_api = c.api;
      g.first_pair_host_ns = ac.host_ns + c.host_ns;
      g.first_ns = ac.start_ns;
      g.thread_id = ac.thread_id;
    }
    if (g.free_stack_id == 0) g.free_stack_id = c.stack_id;
    if (g.alloc_stack_id == 0) g.alloc_stack_id = ac.stack_id;
    g.pool_release_threshold = std::min(g.pool_release_threshold, a.pool_release_threshold);
    if (from_pool && op.pool_release_threshold < op.pool_bytes) {
      released_to_pool_[c.thread_id] = {ac.api, a.bytes};
    }
    ++g.pairs;
    g.host_ns += ac.host_ns + c.host_ns;
    g.last_ns = std::max(g.last_ns, c.end_ns);
    for (const CallInfo* pair_call : {&ac, &c}) {
      if (pair_call->sync_wait_ns == 0) continue;
      ++g.implicit_syncs;
      g.sync_wait_ns += pair_call->sync_wait_ns;
    }
  }
  take_syncs_before(UINT64_MAX);
  // The ranges open where a peak was reached: this window holds them (with those still open
  // from earlier windows, trace_windows.h callers add).
  for (uint32_t id : new_peaks) {
    DeviceMemoryPeak& d = devices_[id];
    d.nvtx = OpenRanges(index, d.thread_id, call(d.correlation_id).start_ns);
  }
}

MemoryReport MemoryAnalysis::Finish(const ProcessTrace& whole) {
  MemoryReport report;
  report.pid = whole.header.pid;
  report.file = whole.path;
  for (auto& [key, s] : by_api_) report.apis.push_back(s);
  for (auto& [id, d] : devices_) {
    d.end_bytes = in_use_[id];
    if (auto at = peak_at_.find(id); at != peak_at_.end()) {
      d.peak_time_ns = at->second > whole.origin_ns ? at->second - whole.origin_ns : 0;
    }
    if (d.peak_bytes == 0) d.nvtx.clear();
    report.devices.push_back(d);
  }
  for (auto& [key, g] : churn_) {
    if (g.pairs >= 2) report.churn.push_back(g);
  }
  std::stable_sort(report.churn.begin(), report.churn.end(),
                   [](const ChurnGroup& a, const ChurnGroup& b) {
                     return std::tie(b.pairs, b.host_ns) < std::tie(a.pairs, a.host_ns);
                   });
  if (report.churn.size() > kMaxChurnGroups) report.churn.resize(kMaxChurnGroups);
  return report;
}

}  // namespace libprof::analysis
