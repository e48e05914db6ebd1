// `profview memory`: the allocation records (MemoryOp) joined to the API calls that made them:
// allocations and frees per API and memory kind with their host time, device memory in use over
// time per device (its peak, when, by which call and inside which NVTX ranges), allocation churn
// (the same size allocated and freed again and again by the same API), and the implicit
// synchronisations of the allocation calls (device_wait.h).
//
// Layer: analysis/metrics/. Built on TraceIndex; no formatting.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <string>
#include <vector>

#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

// One row per (API name, memory kind). The API is the outermost call with the record's
// correlation id ("(unknown)" when the trace has no such call).
struct MemoryApiStats {
  std::string api;
  MemoryKind kind = MemoryKind::kUnknown;
  uint64_t allocations = 0;
  uint64_t releases = 0;
  uint64_t allocated_bytes = 0;
  uint64_t released_bytes = 0;  // as recorded on the release records
  uint64_t calls = 0;           // distinct API calls (correlation ids) with a record in this row
  uint64_t host_ns = 0;         // summed duration of those calls
  // Those calls of an implicitly synchronising API (cudaMalloc, cudaFree, ...) that waited for
  // earlier device work, and the summed wait (part of host_ns).
  uint64_t implicit_syncs = 0;
  uint64_t sync_wait_ns = 0;
};

struct DeviceMemoryPeak {
  uint32_t device_id = 0;
  uint64_t peak_bytes = 0;    // maximum of the running sum
  uint64_t peak_time_ns = 0;  // when it was first reached, from the trace start
  std::string api;            // the allocating call that reached it
  uint64_t correlation_id = 0;
  uint32_t thread_id = 0;
  std::vector<std::string>
      nvtx;                // ranges open on that thread when the call started, outermost first
  uint64_t end_bytes = 0;  // still in use after the last record
  uint64_t unmatched_releases = 0;  // releases of an address with no live allocation
};

struct ChurnGroup {
  std::string api;  // the allocating API
  uint64_t bytes = 0;
  uint64_t pairs = 0;    // allocations of this size later released at the same address
  uint64_t host_ns = 0;  // host time of the allocating and the releasing calls of those pairs
  std::string free_api;  // the releasing API of the first pair
  uint64_t first_pair_host_ns = 0;     // host time of the first pair's two calls
  uint64_t implicit_syncs = 0;         // calls of the pairs that waited for earlier device work
  uint64_t sync_wait_ns = 0;           // ... and their summed wait (part of host_ns)
  uint64_t first_ns = 0, last_ns = 0;  // first allocation start, last release end (absolute)
  uint32_t thread_id = 0;              // the first allocation's thread
  // The call stack of the first release with one (CallStack::id; 0: none): what gave the
  // memory back, for the advice (PyTorch's torch.cuda.empty_cache()).
  uint32_t free_stack_id = 0;
  uint32_t alloc_stack_id = 0;  // the same for the first allocation with one
  // Allocations from a memory pool (cudaMallocAsync): the lowest release threshold the pool had
  // at them (UINT64_MAX: none from a pool). A pool whose threshold is below what it holds gives
  // its free memory back to the OS at the next synchronisation, and the next allocation maps
  // it again: release_syncs synchronising calls after the pairs' frees, which spent
  // release_sync_ns not waiting for device work (most of it that give-back).
  uint64_t pool_release_threshold = UINT64_MAX;
  uint64_t release_syncs = 0, release_sync_ns = 0;
};

struct MemoryReport {
  uint32_t pid = 0;
  std::string file;
  std::vector<MemoryApiStats> apis;       // by API name, then kind
  std::vector<DeviceMemoryPeak> devices;  // by device id; devices with device-kind records only
  std::vector<ChurnGroup> churn;          // groups with 2+ pairs, most pairs first (at most kTop)
};

inline constexpr size_t kMaxChurnGroups = 10;  // enough to see every loop of a real program

// Analyses one (filtered) process. Definitions:
// - device memory in use on device d: running sum, in time_ns order (record order on ties), of
//   the bytes of device-kind (kDevice) allocations minus, for each release, the bytes of the
//   live allocation at the same address (a release with no live allocation counts as unmatched
//   and subtracts nothing);
// - a churn pair: an allocation (any kind) whose address is next released by a release record;
//   pairs are grouped by allocating API and size.
// - implicit synchronisation: a call of an API that synchronises the device as a side effect
//   (api_names.h IsImplicitSyncApi) that waited for earlier device work (DeviceWideWaitNs > 0).
// - a release synchronisation: the first explicitly synchronising call (api_names.h
//   ExplicitSyncScope) a thread makes after it freed a pair's memory into a pool whose release
//   threshold is below the pool's size (the pool gives memory back to the OS at synchronisations),
//   before its next pool allocation; its time not waiting for device work counts.
MemoryReport AnalyzeMemory(const ProcessTrace& trace);
// The same over an index and stream model already built for `trace` (findings reuses them).
MemoryReport AnalyzeMemory(const ProcessTrace& trace, const TraceIndex& index,
                           const StreamModel& model);

// AnalyzeMemory window by window, for a one-process trace read in windows (trace_windows.h:
// a call and its records are in one window, each window's memory records after the earlier
// ones'): allocations still live, the running sums and the groups carry over. AnalyzeMemory
// is one Add.
class MemoryAnalysis {
 public:
  void Add(const TraceIndex& window, const StreamModel& model);
  MemoryReport Finish(const ProcessTrace& whole);

  struct CallInfo {
    std::string api = "(unknown)";
    uint64_t host_ns = 0;
    uint64_t start_ns = 0, end_ns = 0;
    uint32_t thread_id = 0;
    uint64_t sync_wait_ns = 0;  // for implicitly synchronising APIs: the wait for earlier work
    uint32_t stack_id = 0;
  };

 private:
  struct Live {
    uint64_t bytes = 0;
    uint32_t device_id = 0;
    bool device_kind = false;
    uint64_t correlation_id = 0;
    CallInfo call;  // the allocating call's
    uint64_t pool_release_threshold = UINT64_MAX;  // its pool's then (UINT64_MAX: no pool)
  };
  std::map<std::pair<std::string, MemoryKind>, MemoryApiStats> by_api_;
  std::set<std::pair<std::string, MemoryKind>> uncorrelated_;  // rows with a record of corr 0
  std::unordered_map<uint64_t, Live> live_;  // address -> allocation
  std::map<uint32_t, DeviceMemoryPeak> devices_;
  std::map<uint32_t, uint64_t> peak_at_;  // absolute time of each device's peak
  std::map<uint32_t, uint64_t> in_use_;
  std::map<std::pair<std::string, uint64_t>, ChurnGroup> churn_;
  // By thread: the group of the last pool release it made from a pool below its release
  // threshold, until its next pool allocation or synchronising call.
  std::unordered_map<uint32_t, std::pair<std::string, uint64_t>> released_to_pool_;
};

}  // namespace libprof::analysis
