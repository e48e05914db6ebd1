#include "analysis/metrics/copy_bandwidth.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/model/units.h"

namespace libprof::analysis {

std::optional<double> DeviceMemoryGbPerS(const DeviceInfo& device) {
  if (device.memory_clock_khz == 0 || device.memory_bus_width_bits == 0) return std::nullopt;
  return static_cast<double>(device.memory_clock_khz) * 1e3 * 2.0 *
         static_cast<double>(device.memory_bus_width_bits) / 8.0 / 1e9;
}

void CopyBandwidthAccumulator::Add(const Memcpy& m, uint64_t duration_ns) {
  CopyBandwidth& row = rows_[{m.copy_kind, m.src_kind, m.dst_kind}];
  row.copy_kind = m.copy_kind;
  row.src_kind = m.src_kind;
  row.dst_kind = m.dst_kind;
  ++row.count;
  row.bytes += m.bytes;
  row.total_ns += duration_ns;
  row.best_gb_per_s = std::max(row.best_gb_per_s, GigabytesPerSecond(m.bytes, duration_ns));
}

std::vector<CopyBandwidth> CopyBandwidthAccumulator::Rows(
    const std::vector<DeviceInfo>& devices) const {
  // A device-to-device copy reads and writes every byte: at most half the memory's bandwidth.
  std::optional<double> dtod_limit;
  for (const DeviceInfo& d : devices) {
    const std::optional<double> gbs = DeviceMemoryGbPerS(d);
    if (gbs) dtod_limit = dtod_limit ? std::min(*dtod_limit, *gbs / 2) : *gbs / 2;
  }
  std::vector<CopyBandwidth> out;
  for (const auto& [key, kept] : rows_) {
    CopyBandwidth row = kept;
    if (row.copy_kind == CopyKind::kDtoD && dtod_limit) {
      row.limit_gb_per_s = dtod_limit;
      row.limit_source = "half the device memory bandwidth (a copy reads and writes each byte)";
    }
    out.push_back(row);
  }
  std::stable_sort(out.begin(), out.end(), [](const CopyBandwidth& a, const CopyBandwidth& b) {
    return a.total_ns > b.total_ns;
  });
  return out;
}

std::vector<CopyBandwidth> CopyBandwidthByKind(const TraceIndex& index) {
  CopyBandwidthAccumulator rows;
  for (const DeviceOp& op : index.device_ops()) {
    if (op.kind == DeviceOpKind::kMemcpy) rows.Add(index.records().memcpys[op.record], op.duration());
  }
  return rows.Rows(index.trace().header.devices);
}

}  // namespace libprof::analysis
