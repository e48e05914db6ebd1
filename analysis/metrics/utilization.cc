#include "analysis/metrics/utilization.h"

#include <algorithm>
#include <map>

#include "analysis/metrics/time_bins.h"
#include "analysis/model/intervals.h"

namespace libprof::analysis {

std::vector<DeviceUtilization> UtilizationOverTime(const TraceIndex& index, uint64_t start_ns,
                                                   uint64_t end_ns, size_t slices) {
  std::map<uint32_t, std::vector<Interval>> by_device;
  for (const DeviceOp& op : index.device_ops()) {
    by_device[op.device_id].push_back({op.start_ns, op.end_ns});
  }
  std::vector<DeviceUtilization> out;
  for (auto& [device, intervals] : by_device) {
    const std::vector<Interval> merged = MergeIntervals(std::move(intervals));
    TimeBins bins(start_ns, end_ns, slices);
    for (const Interval& i : merged) bins.Add(i.start_ns, i.end_ns);
    DeviceUtilization u;
    u.device_id = device;
    u.slice_ns = bins.bin_ns();
    u.busy_ns = CoveredLength(merged, start_ns, end_ns);
    for (size_t i = 0; i < bins.size(); ++i) u.busy.push_back(std::min(1.0, bins.Fraction(i)));
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace libprof::analysis
