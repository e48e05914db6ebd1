#include "viewer-cli/memory.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "viewer-cli/trace_index.h"

namespace libprof::viewer {
namespace {

struct CallInfo {
  std::string api = "(unknown)";
  uint64_t host_ns = 0;
  uint32_t thread_id = 0;
};

CallInfo CallOf(const TraceIndex& index, uint64_t corr) {
  CallInfo info;
  const int64_t i = index.LaunchingCall(corr);
  if (i < 0) return info;
  const ApiCall& call = index.records().api_calls[static_cast<size_t>(i)];
  info.api = index.ApiName(call);
  info.host_ns = call.end_ns > call.start_ns ? call.end_ns - call.start_ns : 0;
  info.thread_id = call.thread_id;
  return info;
}

}  // namespace

MemoryReport AnalyzeMemory(const ProcessTrace& trace) {
  MemoryReport report;
  report.pid = trace.header.pid;
  report.file = trace.path;
  const TraceIndex index(trace);
  const std::vector<MemoryOp>& ops = trace.records.memory_ops;

  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].time_ns < ops[b].time_ns; });

  std::unordered_map<uint64_t, CallInfo> calls;
  auto call = [&](uint64_t corr) -> const CallInfo& {
    auto it = calls.find(corr);
    if (it == calls.end()) it = calls.emplace(corr, CallOf(index, corr)).first;
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
    if (g.pairs == 0) g.free_api = c.api;
    ++g.pairs;
    g.host_ns += ac.host_ns + c.host_ns;
  }

  for (auto& [key, s] : by_api) report.apis.push_back(s);
  for (auto& [id, d] : devices) {
    d.end_bytes = in_use[id];
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

}  // namespace libprof::viewer
