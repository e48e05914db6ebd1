// Device memory in use over time, per device (`profview memory --timeline`, the export's counter
// track, the HTML report's memory chart), and the allocations that failed for want of memory,
// each with the memory in use when it failed.
//
// Layer: analysis/metrics/. Pure computation over the records (and TraceIndex for the failed
// calls); no formatting. In use follows profview memory's definition (memory.h): in time order,
// device-kind allocations add their bytes and a release subtracts the live allocation at its
// address (a release with no live allocation subtracts nothing), so a series' maximum is
// DeviceMemoryPeak::peak_bytes. (memory.cc computes its peak with the same running sum.)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct MemoryStep {
  uint64_t time_ns = 0;  // absolute, as the records'
  uint64_t bytes = 0;    // in use from this time on, until the next step
};

struct DeviceMemorySeries {
  uint32_t device_id = 0;
  std::vector<MemoryStep> steps;  // one per change (changes at one instant are one), time order
  uint64_t peak_bytes = 0;
};

// One series per device with device-kind allocation records, by device id.
std::vector<DeviceMemorySeries> DeviceMemoryOverTime(const TraceRecords& records);

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
  std::vector<DeviceMemorySeries> devices;  // DeviceMemoryOverTime
  std::vector<FailedAllocation> failed;       // in time order
};

// True for an API that allocates memory ("cudaMalloc", "cudaMallocManaged", "cuMemAlloc_v2",
// "cuMemCreate", "cudaMallocAsync", "cudaHostAlloc", ...).
bool IsAllocatingApi(const std::string& name);

MemoryTimeline BuildMemoryTimeline(const ProcessTrace& trace, const TraceIndex& index);

// BuildMemoryTimeline window by window, for a one-process trace read in windows
// (trace_windows.h: each window's memory records after the earlier ones'): the live
// allocations and running sums carry over; a failed call's memory in use is read from the
// whole series at Finish. BuildMemoryTimeline is one Add.
class MemoryTimelineBuilder {
 public:
  void Add(const TraceRecords& records);                        // the series
  void AddFailed(const ProcessTrace& window, const TraceIndex& index);  // failed allocations
  MemoryTimeline Finish(const ProcessTrace& whole);

 private:
  struct Live {
    uint64_t bytes;
    uint32_t device_id;
  };
  std::unordered_map<uint64_t, Live> live_;  // device-kind allocations by address
  std::map<uint32_t, DeviceMemorySeries> series_;
  std::map<uint32_t, uint64_t> in_use_;
  std::vector<FailedAllocation> failed_;
};

}  // namespace libprof::analysis
