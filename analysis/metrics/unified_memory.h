// What unified (managed) memory did in one process (UnifiedMemoryCounter records, LIBPROF_TRACE
// `uvm`): migrations by direction with bytes, time and bandwidth; GPU page-fault groups per kernel
// (each attributed to the kernel running on the faulting device, with the allocation its address
// belongs to and that allocation's call site); CPU page faults per allocation; thrashing,
// throttling and remote maps.
//
// Layer: analysis/metrics/. Built on TraceIndex (kernels come from its device operations); no
// formatting. Kept apart from memory.h, which it only shares the trace with.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

// The source and destination processors of a migration, the host as kUvmCpu. The counter kind
// says which side is the host: CUPTI's srcId and dstId were both the GPU's id (0) for host→device
// and device→host migrations on an H100 with CUDA 13.0, not CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID.
std::pair<uint32_t, uint32_t> UvmProcessors(const UnifiedMemoryCounter& counter);

// "host → device", "device 0 → device 1", "device → host": the direction of a migration between
// processors as UvmProcessors gives them.
std::string UvmDirection(uint32_t src_device_id, uint32_t dst_device_id);

// The bytes migrated in one direction over time, summed from the start (the HTML report's
// chart): a step at each migration's end.
struct UvmMigrationSeries {
  uint32_t src_device_id = 0;  // as UvmProcessors gives them
  uint32_t dst_device_id = 0;
  struct Step {
    uint64_t time_ns = 0;  // absolute, a migration's end
    uint64_t bytes = 0;    // migrated in this direction up to then
  };
  std::vector<Step> steps;  // time order; migrations ending at one instant are one step
  uint64_t total_bytes = 0;
};

// One series per direction with migrations (host → device ones first, as the report's rows).
std::vector<UvmMigrationSeries> UvmMigrationsOverTime(const TraceRecords& records);

// One row per (counter kind, source, destination) of the migrations (HtoD, DtoH, DtoD).
struct UvmMigrationRow {
  UvmCounterKind kind = UvmCounterKind::kBytesHtoD;
  uint32_t src_device_id = 0;  // kUvmCpu = the CPU
  uint32_t dst_device_id = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t busy_ns = 0;  // union of the migrations' spans (overlapping ones counted once)
  double bandwidth_gbps() const {
    return busy_ns == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(busy_ns);
  }
};

// The managed allocation a faulting address lies in (the live allocation at the fault's time).
struct UvmAllocation {
  bool known = false;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t time_ns = 0;   // when it was allocated (absolute): an address may be reused
  std::string api;        // "cudaMallocManaged"
  std::string call_site;  // "main (app)" when stacks were recorded; else ""
};
// "cudaMallocManaged 256 MiB ← main (app)"; "" when the address is in no recorded allocation.
std::string UvmAllocationText(const UvmAllocation& a);

// GPU page-fault groups of one kernel name on one device, over all its launches.
struct UvmKernelFaults {
  std::string kernel;  // "[between kernels]" for fault groups raised while no kernel ran
  uint32_t device_id = 0;
  uint64_t launches = 0;  // launches with at least one fault group
  uint64_t fault_records = 0;
  uint64_t fault_groups = 0;  // summed value: fault groups for the same page
  uint64_t fault_ns = 0;      // union of the fault records' spans (driver handling time)
  // Migrations to this device that started while those launches ran: what the faults cost.
  uint64_t migrated_bytes = 0;
  uint64_t migration_ns = 0;  // union of their spans
  uint64_t kernel_ns = 0;     // summed duration of those launches
  uint64_t first_ns = 0;      // first fault group's start (absolute)
  UvmAllocation allocation;   // of the first fault group's address
};

// A migration to the host that starts within this long after a CPU page fault is that fault's
// doing. 1 ms: a judgement, generous next to the tens of microseconds a fault takes to service
// (CUPTI gives no link between the two records).
inline constexpr uint64_t kFaultServiceNs = 1'000'000;

// CPU page faults on one allocation (or on memory no recorded allocation covers).
struct UvmCpuFaults {
  UvmAllocation allocation;
  uint64_t faults = 0;
  uint64_t first_ns = 0, last_ns = 0;  // absolute
  // Migrations to the host that followed these faults (kFaultServiceNs): what they pulled back.
  uint64_t migrations_to_host = 0;
  uint64_t bytes_to_host = 0;
};

// Thrashing, throttling and remote maps, per kind and processors.
struct UvmContention {
  UvmCounterKind kind = UvmCounterKind::kThrashing;
  uint32_t processors = 0;  // thrashing: bitmask of the devices fighting; else the source id
  bool in_cpu = false;      // CUPTI_ACTIVITY_FLAG_THRASHING_IN_CPU / THROTTLING_IN_CPU
  uint64_t count = 0;
  uint64_t bytes = 0;  // thrashing and remote maps: the region's size
  uint64_t first_ns = 0, last_ns = 0;
};

struct UnifiedMemoryReport {
  uint32_t pid = 0;
  std::string file;
  uint64_t records = 0;                     // unified-memory records analysed
  std::vector<UvmMigrationRow> migrations;  // by kind, source, destination
  std::vector<UvmKernelFaults> gpu_faults;  // most fault groups first
  std::vector<UvmCpuFaults> cpu_faults;     // most faults first
  std::vector<UvmContention> contention;    // by kind, then processors
  // Records of counter kinds this build does not know (a newer writer), skipped.
  uint64_t unknown_records = 0;
  std::vector<uint32_t> unknown_kinds;  // their distinct values, ascending
};

// Analyses one (filtered) process; records outside the trace's windows are left out.
UnifiedMemoryReport AnalyzeUnifiedMemory(const ProcessTrace& trace, const TraceIndex& index);
UnifiedMemoryReport AnalyzeUnifiedMemory(const ProcessTrace& trace);

// "N unified-memory records of unknown counter kinds 9, 12 skipped (a newer libprof wrote them)",
// or "" when there are none.
std::string UnknownUvmWarning(const UnifiedMemoryReport& report);

}  // namespace libprof::analysis
