// What a finding carries beyond the fields every finding has (Finding in findings.h): one
// struct per kind of rule, held in Finding::details (a std::variant), each rendering itself.
// Fields(out) calls out(key, value, use) for every field it has, in the order of the JSON
// output; the reports (findings_report.cc, timeline_export.cc) pick fields by `use`, so a rule's
// fields are named and ordered here and nowhere else.
//
// Why a std::variant rather than a polymorphic object: the set of rules is closed and compiled
// in, a Finding stays a copyable value (GroupFindings copies the worst one) without a heap
// allocation or a Clone(), and std::visit stops the build when a details struct lacks a method a
// report calls. The hooks with defaults live in DetailsBase; a struct hides the ones it renders
// differently.
//
// Layer: analysis/rules/, rules. Plain data; must not depend on the reports
// (formats.h, chrome_trace_writer.h): the sinks passed to Fields() come from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "analysis/metrics/idle_breakdown.h"

namespace libprof::analysis {

// Where a details field is shown, besides the JSON.
enum class FieldUse : uint8_t {
  kMemory,    // the memory the finding is about: in the JSON beside stream_id, and a CSV column
  kMeasure,   // the rule's own measures: in the JSON after device_id
  kTimeline,  // a measure also shown in the args of the finding's slice on the timeline
};

// The defaults of the hooks below; also the details of rules with nothing of their own.
struct DetailsBase {
  template <class Out>
  void Fields(Out&& /*out*/) const {}
  // The table's "Waiting for" cell when it names something other than the blamed work ("": the
  // blamed work). `device_id` is the finding's.
  std::string WaitingFor(std::optional<uint32_t> /*device_id*/) const { return ""; }
  // Added to the key that groups findings (rule, API, first blamed work, call site).
  std::string_view GroupKey() const { return {}; }
  // The busy share the timeline names a device finding's slice by (else its idle time).
  std::optional<double> Utilization() const { return std::nullopt; }
};

// sync-api, implicit-sync: the common fields say it all (stream_id names a synchronised stream).
struct NoDetails : DetailsBase {};

// blocked-on-prior-work, pageable-async-memcpy, sync-memcpy, sync-memset: the call's own copy or
// memset. copy_kind and src_kind are "" for a memset, whose memory kind is dst_kind.
struct CopyDetails : DetailsBase {
  uint64_t bytes = 0;
  std::string copy_kind, src_kind, dst_kind;
  template <class Out>
  void Fields(Out&& out) const {
    out("bytes", bytes, FieldUse::kMemory);
    if (!copy_kind.empty()) out("copy_kind", copy_kind, FieldUse::kMemory);
    if (!src_kind.empty()) out("src_kind", src_kind, FieldUse::kMemory);
    if (!dst_kind.empty()) out("dst_kind", dst_kind, FieldUse::kMemory);
  }
};

// The idle time of the GPU rules by cause (idle_breakdown.h); it adds up to blocked_ns.
template <class Out>
void IdleFields(const IdleTotals& idle, Out&& out) {
  out("idle_launch_ns", idle.launch_ns, FieldUse::kMeasure);
  out("idle_sync_ns", idle.sync_ns, FieldUse::kMeasure);
  out("idle_other_ns", idle.other_ns, FieldUse::kMeasure);
  out("idle_host_function_ns", idle.host_function_ns, FieldUse::kMeasure);
  out("idle_in_graph_ns", idle.in_graph_ns, FieldUse::kMeasure);
  out("idle_memory_wait_ns", idle.memory_wait_ns, FieldUse::kMeasure);
  out("idle_other_gpu_ns", idle.other_device_ns, FieldUse::kMeasure);
}

// The device rules' "Waiting for": the device.
struct GpuDetailsBase : DetailsBase {
  std::string WaitingFor(std::optional<uint32_t> device_id) const;
};

// gpu-idle-gaps.
struct IdleGapDetails : GpuDetailsBase {
  std::string host_activity;  // what the host did in CUDA meanwhile
  IdleTotals idle;
  template <class Out>
  void Fields(Out&& out) const {
    if (!host_activity.empty()) out("host_activity", host_activity, FieldUse::kTimeline);
    IdleFields(idle, out);
  }
};

// gpu-low-utilization: one chunk of the device's steady-state span, or a run of adjacent chunks
// in which no kernel ran (one finding, not one per chunk).
struct LowUtilizationDetails : GpuDetailsBase {
  double utilization = 0;             // busy share of the chunk(s)
  uint64_t launch_bound_idle_ns = 0;  // = idle.launch_ns
  uint64_t kernels = 0;               // that ran in the chunk(s)
  uint64_t chunks = 1;                // how many adjacent chunks the finding covers
  IdleTotals idle;
  std::optional<double> Utilization() const { return utilization; }
  template <class Out>
  void Fields(Out&& out) const {
    out("utilization", utilization, FieldUse::kTimeline);
    out("launch_bound_idle_ns", launch_bound_idle_ns, FieldUse::kTimeline);
    out("kernels", kernels, FieldUse::kTimeline);
    out("chunks", chunks, FieldUse::kTimeline);
    IdleFields(idle, out);
  }
};

// gpu-idle-breakdown: the device's whole active span.
struct IdleBreakdownDetails : GpuDetailsBase {
  double utilization = 0;  // busy share of the span
  uint64_t kernels = 0;
  IdleTotals idle;
  // Mean kernel duration (when a kernel ran) and mean host time of the calls that launched them
  // (when one is in the trace).
  std::optional<uint64_t> mean_kernel_ns, launches, mean_launch_ns;
  // Idle time of the span left out as one-time work's (GpuRulesAccumulator), when any.
  std::optional<uint64_t> one_time_idle_ns;
  std::optional<double> Utilization() const { return utilization; }
  template <class Out>
  void Fields(Out&& out) const {
    out("utilization", utilization, FieldUse::kTimeline);
    out("kernels", kernels, FieldUse::kTimeline);
    IdleFields(idle, out);
    if (mean_kernel_ns) out("mean_kernel_ns", *mean_kernel_ns, FieldUse::kMeasure);
    if (launches) out("launches", *launches, FieldUse::kMeasure);
    if (mean_launch_ns) out("mean_launch_ns", *mean_launch_ns, FieldUse::kMeasure);
    if (one_time_idle_ns) out("one_time_idle_ns", *one_time_idle_ns, FieldUse::kMeasure);
  }
};

// start-up: what the process's start-up spent its time on (analysis/metrics/start_up.h); the
// finding's blocked_ns is start-up's wall time, from the recording start.
struct StartUpDetails : DetailsBase {
  std::optional<uint64_t> first_kernel_ns;  // from the recording start, when a kernel ran
  uint64_t module_load_ns = 0, module_loads = 0;
  uint64_t context_ns = 0;
  uint64_t allocation_ns = 0, allocations = 0;
  // Module loading after start-up's end (lazy loading of kernels first used later), which counts
  // as start-up too.
  uint64_t later_module_load_ns = 0, later_module_loads = 0;
  // A warm-up start-up took in (start_up.h): its length up to start-up's end, the GPU's busy
  // time in it and the GPU's busy share after it; all 0 without one.
  uint64_t warm_up_ns = 0, warm_up_gpu_busy_ns = 0;
  double gpu_busy_after = 0;
  // Device idle time inside start-up and inside later module loading: the GPU rules leave it out.
  uint64_t gpu_idle_ns = 0;
  // Device idle time during one-time work after start-up (StartUp::one_time): left out too.
  uint64_t one_time_gpu_idle_ns = 0;
  // A CUDA library's set-up that recurs through the run (StartUp::library_set_up_recurs): its
  // runs; 0 when it does not recur (and is paid once).
  uint64_t recurring_library_set_ups = 0;
  // Module loads between the program's kernels all through the run (StartUp's): 0 if none.
  uint64_t recurring_module_loads = 0;
  // Runs of an autotuner's or compiler's work all through the run (StartUp's): 0 if none.
  uint64_t recurring_compilations = 0;
  // The busiest device (the most busy time): from its first operation's start to its last
  // one's end, and its busy time in that span; 0 without device work. A wait for the GPU lies
  // in that span, and the GPU's work takes as long without it, so the waits can shorten the
  // run by at most active_ns - active_gpu_busy_ns.
  uint64_t active_ns = 0, active_gpu_busy_ns = 0;
  // The same over the steady state (busy plus idle time as gpu-idle-breakdown counts them), of
  // the device busiest in it: the bound of waits that all came after start-up.
  uint64_t steady_ns = 0, steady_gpu_busy_ns = 0;
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // "module loading 150 ms"
  template <class Out>
  void Fields(Out&& out) const {
    if (first_kernel_ns) out("first_kernel_ns", *first_kernel_ns, FieldUse::kMeasure);
    out("module_load_ns", module_load_ns, FieldUse::kMeasure);
    out("module_loads", module_loads, FieldUse::kMeasure);
    out("context_ns", context_ns, FieldUse::kMeasure);
    out("allocation_ns", allocation_ns, FieldUse::kMeasure);
    out("allocations", allocations, FieldUse::kMeasure);
    out("later_module_load_ns", later_module_load_ns, FieldUse::kMeasure);
    out("later_module_loads", later_module_loads, FieldUse::kMeasure);
    out("warm_up_ns", warm_up_ns, FieldUse::kMeasure);
    out("warm_up_gpu_busy_ns", warm_up_gpu_busy_ns, FieldUse::kMeasure);
    out("gpu_busy_after", gpu_busy_after, FieldUse::kMeasure);
    out("gpu_idle_ns", gpu_idle_ns, FieldUse::kMeasure);
    out("one_time_gpu_idle_ns", one_time_gpu_idle_ns, FieldUse::kMeasure);
    out("recurring_library_set_ups", recurring_library_set_ups, FieldUse::kMeasure);
    out("recurring_module_loads", recurring_module_loads, FieldUse::kMeasure);
    out("recurring_compilations", recurring_compilations, FieldUse::kMeasure);
    out("active_ns", active_ns, FieldUse::kMeasure);
    out("active_gpu_busy_ns", active_gpu_busy_ns, FieldUse::kMeasure);
    out("steady_ns", steady_ns, FieldUse::kMeasure);
    out("steady_gpu_busy_ns", steady_gpu_busy_ns, FieldUse::kMeasure);
  }
};

// alloc-churn (the finding's api is the allocating API). Savings: memory_rules.h.
struct AllocChurnDetails : DetailsBase {
  uint64_t bytes = 0;  // the size allocated
  std::string free_api;
  uint64_t pairs = 0, pairs_host_ns = 0, implicit_syncs = 0, sync_wait_ns = 0;
  uint64_t caching_saving_ns = 0;
  std::optional<uint64_t> async_saving_ns;  // when the trace has stream-ordered pairs to price
  // Stream-ordered pairs whose pool gave the memory back at synchronisations (memory_rules.h).
  std::optional<uint64_t> pool_release_threshold, release_sync_ns;
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // "16.00 MiB × 51"
  template <class Out>
  void Fields(Out&& out) const {
    out("bytes", bytes, FieldUse::kMemory);
    if (!free_api.empty()) out("free_api", free_api, FieldUse::kMeasure);
    out("pairs", pairs, FieldUse::kMeasure);
    out("pairs_host_ns", pairs_host_ns, FieldUse::kMeasure);
    out("implicit_syncs", implicit_syncs, FieldUse::kMeasure);
    out("sync_wait_ns", sync_wait_ns, FieldUse::kMeasure);
    out("caching_saving_ns", caching_saving_ns, FieldUse::kMeasure);
    if (async_saving_ns) out("async_saving_ns", *async_saving_ns, FieldUse::kMeasure);
    if (pool_release_threshold) {
      out("pool_release_threshold", *pool_release_threshold, FieldUse::kMemory);
    }
    if (release_sync_ns) out("release_sync_ns", *release_sync_ns, FieldUse::kMeasure);
  }
};

// no-overlap-default-stream: the copies and kernels of one device serialised by one cause.
struct OverlapDetails : DetailsBase {
  std::string serialised_by;  // "legacy-default-stream" or "pageable-memory"
  uint64_t kernels = 0, copies = 0, copy_ns = 0, kernel_ns = 0;
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // "GPU 0, pageable-memory"
  // The two causes need different fixes: never one group.
  std::string_view GroupKey() const { return serialised_by; }
  template <class Out>
  void Fields(Out&& out) const {
    out("kernels", kernels, FieldUse::kTimeline);
    out("serialised_by", serialised_by, FieldUse::kMeasure);
    out("copies", copies, FieldUse::kMeasure);
    out("copy_ns", copy_ns, FieldUse::kMeasure);
    out("kernel_ns", kernel_ns, FieldUse::kMeasure);
  }
};

// two-way-copies-one-stream (overlap_rules.h): host copies of both directions queued one behind
// the other on one stream.
struct TwoWayCopiesDetails : DetailsBase {
  uint64_t pairs = 0;    // times a copy was queued behind one of the other direction
  uint64_t copies = 0;   // the copies in those pairs, each once
  uint64_t copy_ns = 0;  // their summed time
  uint64_t htod_bytes = 0, dtoh_bytes = 0;                          // theirs, by direction
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // "GPU 0, copies both ways"
  template <class Out>
  void Fields(Out&& out) const {
    out("pairs", pairs, FieldUse::kTimeline);
    out("copies", copies, FieldUse::kMeasure);
    out("copy_ns", copy_ns, FieldUse::kMeasure);
    out("htod_bytes", htod_bytes, FieldUse::kMeasure);
    out("dtoh_bytes", dtoh_bytes, FieldUse::kMeasure);
  }
};

// uvm-gpu-page-faults, uvm-cpu-faults, uvm-thrashing (unified_memory_rules.h): what unified
// memory did; each rule fills its own fields (the others stay empty and are not rendered).
struct UnifiedMemoryDetails : DetailsBase {
  std::string kernel;           // uvm-gpu-page-faults: the faulting kernel
  uint64_t fault_groups = 0;    // GPU fault groups, or CPU faults
  uint64_t migrated_bytes = 0;  // migrations those faults caused (to the device or the host)
  uint64_t migrations = 0;
  uint64_t migration_ns = 0;
  std::string event;            // uvm-thrashing: "thrashing", "throttling", "remote map"
  uint64_t events = 0;
  std::string allocation;       // "cudaMallocManaged 256.00 MiB ← main (app)"; "" when unknown
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // the kernel or allocation
  std::string_view GroupKey() const { return kernel.empty() ? event : kernel; }
  template <class Out>
  void Fields(Out&& out) const {
    if (!allocation.empty()) out("allocation", allocation, FieldUse::kMemory);
    if (!kernel.empty()) out("kernel", kernel, FieldUse::kTimeline);
    if (fault_groups != 0) out("fault_groups", fault_groups, FieldUse::kTimeline);
    if (!event.empty()) out("event", event, FieldUse::kTimeline);
    if (events != 0) out("events", events, FieldUse::kTimeline);
    if (migrations != 0) out("migrations", migrations, FieldUse::kMeasure);
    if (migrated_bytes != 0) out("migrated_bytes", migrated_bytes, FieldUse::kTimeline);
    if (migration_ns != 0) out("migration_ns", migration_ns, FieldUse::kMeasure);
  }
};

// late-rank: one instance of a collective (the finding's api is the operation, its process the
// late rank's, blocked_ns the other ranks' waits summed).
struct LateRankDetails : DetailsBase {
  uint32_t rank = 0;  // the late rank
  std::string communicator{};  // NCCL's communicator id, hex
  uint64_t seq = 0;          // the instance's number within its communicator
  uint64_t late_by_ns = 0;   // after the latest of the others
  uint32_t waiting_ranks = 0;
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // "rank 3 (#812)"
  template <class Out>
  void Fields(Out&& out) const {
    out("rank", rank, FieldUse::kTimeline);
    out("communicator", communicator, FieldUse::kMeasure);
    out("seq", seq, FieldUse::kTimeline);
    out("late_by_ns", late_by_ns, FieldUse::kTimeline);
    out("waiting_ranks", waiting_ranks, FieldUse::kMeasure);
  }
};

// graph-rebuild: the process's graph instantiations and launches (graph_rules.h).
struct GraphRebuildDetails : DetailsBase {
  uint64_t instantiations = 0, graph_launches = 0, exec_updates = 0;
  uint64_t instantiate_ns = 0, capture_ns = 0, destroy_ns = 0;
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // "300 graphs × 1.0 launch"
  template <class Out>
  void Fields(Out&& out) const {
    out("instantiations", instantiations, FieldUse::kTimeline);
    out("graph_launches", graph_launches, FieldUse::kTimeline);
    out("exec_updates", exec_updates, FieldUse::kMeasure);
    out("instantiate_ns", instantiate_ns, FieldUse::kMeasure);
    out("capture_ns", capture_ns, FieldUse::kMeasure);
    out("destroy_ns", destroy_ns, FieldUse::kMeasure);
  }
};

// shared-gpu: processes of one host that ran work on the same GPU at once (shared_gpu_rules.h;
// the finding's process the first of them).
struct SharedGpuDetails : DetailsBase {
  std::string gpu{};       // its UUID, "GPU-222b92b5-..."
  std::string pids{};      // "532, 533"
  uint32_t processes = 0;  // how many
  uint64_t shared_ns = 0;  // time in which two or more of them had work on it (first to last op)
  uint64_t busy_ns = 0;    // their work in that time, summed (estimated: shared_gpu_rules.h)
  std::string WaitingFor(std::optional<uint32_t> device_id) const;  // "GPU 0, 2 processes"
  template <class Out>
  void Fields(Out&& out) const {
    out("gpu", gpu, FieldUse::kMeasure);
    out("pids", pids, FieldUse::kMeasure);
    out("processes", processes, FieldUse::kTimeline);
    out("shared_ns", shared_ns, FieldUse::kTimeline);
    out("busy_ns", busy_ns, FieldUse::kTimeline);
  }
};

using FindingDetails = std::variant<NoDetails, CopyDetails, IdleGapDetails, LowUtilizationDetails,
                                    IdleBreakdownDetails, AllocChurnDetails, OverlapDetails,
                                    StartUpDetails, UnifiedMemoryDetails, LateRankDetails,
                                    GraphRebuildDetails, SharedGpuDetails, TwoWayCopiesDetails>;

// The position of T in FindingDetails, for the registry (RuleInfo::details).
template <class T, size_t I = 0>
constexpr size_t DetailsIndex() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, FindingDetails>, T>) {
    return I;
  } else {
    return DetailsIndex<T, I + 1>();
  }
}

// The hooks above, on whichever details a finding holds.
template <class Out>
void DetailFields(const FindingDetails& details, Out&& out) {
  std::visit([&](const auto& d) { d.Fields(out); }, details);
}
inline std::string DetailsWaitingFor(const FindingDetails& details,
                                     std::optional<uint32_t> device_id) {
  return std::visit([&](const auto& d) { return d.WaitingFor(device_id); }, details);
}
inline std::string_view DetailsGroupKey(const FindingDetails& details) {
  return std::visit([](const auto& d) { return d.GroupKey(); }, details);
}
inline std::optional<double> DetailsUtilization(const FindingDetails& details) {
  return std::visit([](const auto& d) { return d.Utilization(); }, details);
}

}  // namespace libprof::analysis
