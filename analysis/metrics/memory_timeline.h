// Device memory in use over time, per device (`profview memory --timeline`, the export's counter
// track), and the allocations that failed for want of memory, each with the memory in use when
// it failed.
//
// Layer: analysis/metrics/. Built on the trace and TraceIndex; no formatting.
// In use follows profview memory's definition (memory.h): device-kind allocations minus the
// releases matched to them by address. (memory.cc computes its peak with the same running sum;
// this module keeps every step of it.)
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

// Memory in use from start_ns until the next step (absolute times).
struct MemoryStep {
  uint64_t start_ns = 0;
  uint64_t bytes = 0;
};

struct DeviceMemoryTimeline {
  uint32_t device_id = 0;
  std::vector<MemoryStep> steps;  // one per allocation or matched release, in time order
  uint64_t peak_bytes = 0;
};

// An allocating API call that returned an out-of-memory error (cudaErrorMemoryAllocation /
// CUDA_ERROR_OUT_OF_MEMORY, both 2).
struct FailedAllocation {
  std::string api;
  uint64_t start_ns = 0;  // absolute
  uint64_t duration_ns = 0;
  uint32_t thread_id = 0;
  int32_t return_value = 0;
  std::string call_site;                              // when stacks were recorded
  std::vector<std::pair<uint32_t, uint64_t>> in_use;  // (device, bytes) when it failed
};

struct MemoryTimeline {
  uint32_t pid = 0;
  std::string file;
  uint64_t origin_ns = 0;                     // the trace start, for printing relative times
  uint64_t end_ns = 0;                        // the trace end: the last step lasts until then
  std::vector<DeviceMemoryTimeline> devices;  // by device id
  std::vector<FailedAllocation> failed;       // in time order
};

// True for an API that allocates memory ("cudaMalloc", "cudaMallocManaged", "cuMemAlloc_v2",
// "cuMemCreate", "cudaMallocAsync", "cudaHostAlloc", ...).
bool IsAllocatingApi(const std::string& name);

MemoryTimeline BuildMemoryTimeline(const ProcessTrace& trace, const TraceIndex& index);

}  // namespace libprof::analysis
