// Device memory in use over time, per device: the step series behind the HTML report's memory
// chart. The definition is `profview memory`'s (memory.h): in time order, device-kind
// allocations add their bytes and a release subtracts the live allocation at its address
// (a release with no live allocation subtracts nothing), so the series' maximum is
// DeviceMemoryPeak::peak_bytes.
//
// Issue 12 (unified memory) brings a device-memory-over-time analysis of its own; once it is
// on main this file gives way to it and the report reads that instead (the report depends only
// on DeviceMemorySeries below).
//
// Layer: analysis/metrics/. Pure computation over the memory records.
#pragma once

#include <cstdint>
#include <vector>

#include "proto/trace_model.h"

namespace libprof::analysis {

struct MemoryStep {
  uint64_t time_ns = 0;  // absolute, as the records'
  uint64_t bytes = 0;    // in use from this time on
};

struct DeviceMemorySeries {
  uint32_t device_id = 0;
  std::vector<MemoryStep> steps;  // one per change, in time order
  uint64_t peak_bytes = 0;
};

// One series per device with device-kind allocation records, by device id.
std::vector<DeviceMemorySeries> DeviceMemoryOverTime(const TraceRecords& records);

}  // namespace libprof::analysis
