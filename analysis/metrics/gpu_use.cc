#include "analysis/metrics/gpu_use.h"

#include <algorithm>

#include "analysis/model/units.h"

namespace libprof::analysis {

void GpuUseAccumulator::Add(std::span<const DeviceOp> ops) {
  for (const DeviceOp& op : ops) {
    if (op.end_ns <= op.start_ns) continue;  // (no time: nothing ran)
    Device& d = devices_[op.device_id];
    d.first_ns = std::min(d.first_ns, op.start_ns);
    d.last_ns = std::max(d.last_ns, op.end_ns);
    ++d.ops;
    if (d.open && op.start_ns <= d.open_end_ns) {
      d.open_end_ns = std::max(d.open_end_ns, op.end_ns);
      continue;
    }
    if (d.open) d.busy_ns += d.open_end_ns - d.open_start_ns;
    d.open = true;
    d.open_start_ns = op.start_ns;
    d.open_end_ns = op.end_ns;
  }
}

ProcessGpuUse GpuUseAccumulator::Finish(const ProcessTrace& whole) const {
  ProcessGpuUse use;
  use.path = whole.path;
  use.pid = whole.header.pid;
  use.hostname = whole.header.hostname;
  use.rank = whole.header.rank;
  use.origin_ns = whole.origin_ns;
  for (const auto& [id, d] : devices_) {
    std::string uuid;
    for (const DeviceInfo& info : whole.records.devices) {
      if (info.id == id) uuid = FormatGpuUuid(info.uuid);
    }
    if (uuid.empty()) continue;  // (an older trace, or a device never defined)
    use.gpus.push_back({.device_id = id,
                        .uuid = std::move(uuid),
                        .first_ns = d.first_ns,
                        .last_ns = d.last_ns,
                        .busy_ns = d.busy_ns + (d.open ? d.open_end_ns - d.open_start_ns : 0),
                        .ops = d.ops});
  }
  std::sort(
      use.gpus.begin(), use.gpus.end(),
      [](const ProcessGpuUse::Gpu& a, const ProcessGpuUse::Gpu& b) { return a.uuid < b.uuid; });
  return use;
}

ProcessGpuUse MeasureGpuUse(const ProcessTrace& trace) {
  std::vector<DeviceOp> ops;
  ops.reserve(DeviceOpCount(trace.records));
  ForEachDeviceOp(trace.records, [&](const DeviceOp& op, const auto&) { ops.push_back(op); });
  std::sort(ops.begin(), ops.end(),
            [](const DeviceOp& a, const DeviceOp& b) { return a.start_ns < b.start_ns; });
  GpuUseAccumulator accumulator;
  accumulator.Add(ops);
  return accumulator.Finish(trace);
}

}  // namespace libprof::analysis
