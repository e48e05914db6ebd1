// GPU utilisation over time: per device, the share of each equal slice of a time range during
// which any kernel, copy, memset or graph of that device ran (the union of its device
// operations, as "GPU was busy" in summary.h, but per device and per slice).
//
// Layer: analysis/metrics/. Built on TraceIndex's device operations; no formatting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/model/trace_index.h"

namespace libprof::analysis {

struct DeviceUtilization {
  uint32_t device_id = 0;
  std::vector<double> busy;  // per slice, 0..1
  double slice_ns = 0;
  uint64_t busy_ns = 0;  // the union over [start_ns, end_ns)
};

// One entry per device with device work, by device id; `slices` equal slices of
// [start_ns, end_ns) (absolute times, as the records').
std::vector<DeviceUtilization> UtilizationOverTime(const TraceIndex& index, uint64_t start_ns,
                                                   uint64_t end_ns, size_t slices);

}  // namespace libprof::analysis
