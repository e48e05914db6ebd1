#include "analysis/metrics/gpu_use.h"

#include <algorithm>

#include "analysis/model/units.h"

namespace libprof::analysis {

void GpuUseAccumulator::Add(const DeviceOp& op) {
  if (op.end_ns <= op.start_ns) return;  // (no time: nothing ran)
  Device& d = devices_.try_emplace(op.device_id, max_pending_).first->second;
  d.first_ns = std::min(d.first_ns, op.start_ns);
  d.last_ns = std::max(d.last_ns, op.end_ns);
  ++d.ops;
  d.busy.Add(op.start_ns, op.end_ns);
}

ProcessGpuUse GpuUseAccumulator::Finish(const ProcessTrace& whole) {
  ProcessGpuUse use;
  use.path = whole.path;
  use.pid = whole.header.pid;
  use.hostname = whole.header.hostname;
  use.rank = whole.header.rank;
  use.origin_ns = whole.origin_ns;
  for (auto& [id, d] : devices_) {
    std::string uuid;
    for (const DeviceInfo& info : whole.records.devices) {
      if (info.id == id) uuid = FormatGpuUuid(info.uuid);
    }
    if (uuid.empty()) continue;  // (an older trace, or a device never defined)
    d.busy.Finish();
    use.gpus.push_back({.device_id = id,
                        .uuid = std::move(uuid),
                        .first_ns = d.first_ns,
                        .last_ns = d.last_ns,
                        .busy_ns = d.busy.length(),
                        .ops = d.ops});
  }
  std::sort(
      use.gpus.begin(), use.gpus.end(),
      [](const ProcessGpuUse::Gpu& a, const ProcessGpuUse::Gpu& b) { return a.uuid < b.uuid; });
  return use;
}

ProcessGpuUse MeasureGpuUse(const ProcessTrace& trace) {
  GpuUseAccumulator accumulator(/*max_pending=*/0);
  ForEachDeviceOp(trace.records, [&](const DeviceOp& op, const auto&) { accumulator.Add(op); });
  return accumulator.Finish(trace);
}

}  // namespace libprof::analysis
