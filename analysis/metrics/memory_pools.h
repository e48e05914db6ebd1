// Memory pools in `profview memory`: which allocations came from a pool (stream-ordered
// cudaMallocAsync/cuMemAllocFromPoolAsync, CUpti_ActivityMemory4's memoryPoolConfig) and which
// were direct (cudaMalloc, cudaMallocManaged, ...), and per pool its allocations, its release
// threshold, and how large it grew. A pool whose release threshold is 0 (CUDA's default) gives
// its free memory back at every synchronisation, so the next cudaMallocAsync has to map it again.
//
// Layer: analysis/metrics/. On the trace's memory records alone; no formatting.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

inline constexpr uint32_t kPoolTypeLocal = 1;     // CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL
inline constexpr uint32_t kPoolTypeImported = 2;  // ..._IMPORTED (from another process)

struct MemoryPoolStats {
  uint32_t device_id = 0;
  uint64_t pool_address = 0;
  uint32_t pool_type = 0;  // kPoolTypeLocal, kPoolTypeImported, or a newer writer's value
  uint64_t allocations = 0, allocated_bytes = 0;
  uint64_t releases = 0, released_bytes = 0;
  // Local pools (0 for others): the release threshold of the last operation, whether it
  // changed during the run (cudaMemPoolSetAttribute), and the largest size and use seen; from
  // the operations that carry them (pool size > 0: a trace of libprof before 2026-11-24 has
  // none, and then `details` is false).
  bool details = false;
  uint64_t release_threshold = 0;
  bool threshold_changed = false;
  uint64_t peak_pool_bytes = 0;
  uint64_t peak_used_bytes = 0;
};

struct MemoryPoolReport {
  uint32_t pid = 0;
  std::vector<MemoryPoolStats> pools;  // by device, then pool address
  // Allocations (not releases) of all memory kinds, from a pool or not.
  uint64_t pooled_allocations = 0, pooled_bytes = 0;
  uint64_t direct_allocations = 0, direct_bytes = 0;
};

// A pool's operations are those with its (device, pool address); an operation with pool type 0
// is direct. Records in time order (record order on ties) decide "the last" threshold.
MemoryPoolReport AnalyzeMemoryPools(const ProcessTrace& trace);
// The same window by window (trace_windows.h: each window's memory records after the earlier
// ones'); AnalyzeMemoryPools is one Add.
class MemoryPoolAccumulator {
 public:
  void Add(const TraceRecords& records);
  MemoryPoolReport Finish(uint32_t pid);

 private:
  MemoryPoolReport report_;
  std::map<std::pair<uint32_t, uint64_t>, MemoryPoolStats> pools_;
};

}  // namespace libprof::analysis
