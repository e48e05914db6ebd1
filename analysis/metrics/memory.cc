#include "analysis/metrics/memory.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analysis/model/api_names.h"
#include "analysis/model/device_wait.h"

namespace libprof::analysis {
namespace {

struct CallInfo {
  std::string api = "(unknown)";
  uint64_t host_ns = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t thread_id = 0;
  uint64_t sync_wait_ns = 0;  // for implicitly synchronising APIs: the wait for earlier work
};

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
  MemoryReport report;
  report.pid = trace.header.pid;
  report.file = trace.path;
  const std::vector<MemoryOp>& ops = trace.records.memory_ops;

  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].time_ns < ops[b].time_ns; });

  std::unordered_map<uint64_t, CallInfo> calls;
  auto call = [&](uint64_t corr) -> const CallInfo& {
    auto it = calls.find(corr);
    if (it == calls.end()) it = calls.emplace(corr, CallOf(index, model, corr)).first;
    return it->second;
  };

  // Per API and kind.
  std::map<std::pair<std::string, MemoryKind>, MemoryApiStats> by_api;
  std::map<std::pair<std::string, MemoryKind>, std::unordered_set<uint64_t>> corrs;
  // Device memory in use.
  struct Live {
    uint64_t bytes = 0;
    uint32_t device_id = 0;
    bool device_kind = false;
    uint64_t correlation_id = 0;
  };
  std::unordered_map<uint64_t, Live> live;  // address -> allocation
  std::map<uint32_t, DeviceMemoryPeak> devices;
  std::map<uint32_t, uint64_t> in_use;
  // Churn.
  std::map<std::pair<std::string, uint64_t>, ChurnGroup> churn;

  for (size_t i : order) {
    const MemoryOp& op = ops[i];
    const bool alloc = op.operation == MemoryOperation::kAllocation;
    const bool release = op.operation == MemoryOperation::kRelease;
    if (!alloc && !release) continue;
    const CallInfo& c = call(op.correlation_id);
    MemoryApiStats& s = by_api[{c.api, op.memory_kind}];
    s.api = c.api;
    s.kind = op.memory_kind;
    if (alloc) {
      ++s.allocations;
      s.allocated_bytes += op.bytes;
    } else {
      ++s.releases;
      s.released_bytes += op.bytes;
    }
    if (corrs[{c.api, op.memory_kind}].insert(op.correlation_id).second) {
      ++s.calls;
      s.host_ns += c.host_ns;
      if (c.sync_wait_ns > 0) {
        ++s.implicit_syncs;
        s.sync_wait_ns += c.sync_wait_ns;
      }
    }

    const bool device_kind = op.memory_kind == MemoryKind::kDevice;
    if (alloc) {
      live[op.address] = Live{op.bytes, op.device_id, device_kind, op.correlation_id};
      if (!device_kind) continue;
      DeviceMemoryPeak& d = devices[op.device_id];
      d.device_id = op.device_id;
      uint64_t& used = in_use[op.device_id];
      used += op.bytes;
      if (used > d.peak_bytes) {
        d.peak_bytes = used;
        d.peak_time_ns = op.time_ns > trace.origin_ns ? op.time_ns - trace.origin_ns : 0;
        d.api = c.api;
        d.correlation_id = op.correlation_id;
        d.thread_id = c.thread_id;
      }
      continue;
    }
    auto it = live.find(op.address);
    if (it == live.end()) {
      if (device_kind) {
        DeviceMemoryPeak& d = devices[op.device_id];
        d.device_id = op.device_id;
        ++d.unmatched_releases;
      }
      continue;
    }
    const Live a = it->second;
    live.erase(it);
    if (a.device_kind) {
      uint64_t& used = in_use[a.device_id];
      used -= std::min(used, a.bytes);
    }
    const CallInfo& ac = call(a.correlation_id);
    ChurnGroup& g = churn[{ac.api, a.bytes}];
    g.api = ac.api;
    g.bytes = a.bytes;
    if (g.pairs == 0) {
      g.free_api = c.api;
      g.first_pair_host_ns = ac.host_ns + c.host_ns;
      g.first_ns = ac.start_ns;
      g.thread_id = ac.thread_id;
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

  for (auto& [key, s] : by_api) report.apis.push_back(s);
  for (auto& [id, d] : devices) {
    d.end_bytes = in_use[id];
    if (d.peak_bytes > 0) d.nvtx = OpenRanges(index, d.thread_id, call(d.correlation_id).start_ns);
    report.devices.push_back(d);
  }
  for (auto& [key, g] : churn) {
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
