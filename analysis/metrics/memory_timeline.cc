#include "analysis/metrics/memory_timeline.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace libprof::analysis {

std::vector<DeviceMemorySeries> DeviceMemoryOverTime(const TraceRecords& records) {
  const std::vector<MemoryOp>& ops = records.memory_ops;
  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].time_ns < ops[b].time_ns; });
  struct Live {
    uint64_t bytes = 0;
    uint32_t device_id = 0;
    bool device_kind = false;
  };
  std::unordered_map<uint64_t, Live> live;  // address -> allocation
  std::map<uint32_t, DeviceMemorySeries> series;
  std::map<uint32_t, uint64_t> in_use;
  for (size_t i : order) {
    const MemoryOp& op = ops[i];
    const bool device_kind = op.memory_kind == MemoryKind::kDevice;
    uint32_t device = op.device_id;
    if (op.operation == MemoryOperation::kAllocation) {
      live[op.address] = Live{op.bytes, op.device_id, device_kind};
      if (!device_kind) continue;
      in_use[device] += op.bytes;
    } else if (op.operation == MemoryOperation::kRelease) {
      auto it = live.find(op.address);
      if (it == live.end()) continue;
      const Live a = it->second;
      live.erase(it);
      if (!a.device_kind) continue;
      device = a.device_id;
      uint64_t& used = in_use[device];
      used -= std::min(used, a.bytes);
    } else {
      continue;
    }
    DeviceMemorySeries& s = series[device];
    s.device_id = device;
    const uint64_t used = in_use[device];
    // Changes at the same instant are one step: the chart shows where the sum settled.
    if (!s.steps.empty() && s.steps.back().time_ns == op.time_ns) {
      s.steps.back().bytes = used;
    } else {
      s.steps.push_back({op.time_ns, used});
    }
    s.peak_bytes = std::max(s.peak_bytes, used);
  }
  std::vector<DeviceMemorySeries> out;
  for (auto& [device, s] : series) out.push_back(std::move(s));
  return out;
}

}  // namespace libprof::analysis
