#include "analysis/rules/rule_registry.h"

#include <algorithm>
#include <array>
#include <optional>

#include "analysis/rules/findings.h"
#include "analysis/rules/gpu_rules.h"
#include "analysis/rules/graph_rules.h"
#include "analysis/rules/memory_rules.h"
#include "analysis/rules/overlap_rules.h"
#include "analysis/rules/rank_rules.h"
#include "analysis/rules/rule_details.h"
#include "analysis/rules/unified_memory_rules.h"

namespace libprof::analysis {
namespace {

constexpr std::string_view kCopyFields[] = {"bytes", "copy_kind", "src_kind", "dst_kind"};
constexpr std::string_view kMemsetFields[] = {"bytes", "dst_kind"};
constexpr std::string_view kGapFields[] = {
    "host_activity",         "idle_launch_ns",   "idle_sync_ns",        "idle_other_ns",
    "idle_host_function_ns", "idle_in_graph_ns", "idle_memory_wait_ns", "idle_other_gpu_ns"};
constexpr std::string_view kLowUtilizationFields[] = {
    "utilization",      "launch_bound_idle_ns", "kernels",          "chunks",
    "idle_launch_ns",   "idle_sync_ns",         "idle_other_ns",    "idle_host_function_ns",
    "idle_in_graph_ns", "idle_memory_wait_ns",  "idle_other_gpu_ns"};
constexpr std::string_view kStartUpFields[] = {"first_kernel_ns",
                                               "module_load_ns",
                                               "module_loads",
                                               "context_ns",
                                               "allocation_ns",
                                               "allocations",
                                               "later_module_load_ns",
                                               "later_module_loads",
                                               "warm_up_ns",
                                               "warm_up_gpu_busy_ns",
                                               "gpu_busy_after",
                                               "gpu_idle_ns",
                                               "one_time_gpu_idle_ns",
                                               "recurring_library_set_ups",
                                               "recurring_compilations",
                                               "recurring_module_loads",
                                               "active_ns",
                                               "active_gpu_busy_ns",
                                               "steady_ns",
                                               "steady_gpu_busy_ns"};
constexpr std::string_view kBreakdownFields[] = {"utilization",       "kernels",
                                                 "idle_launch_ns",    "idle_sync_ns",
                                                 "idle_other_ns",     "idle_host_function_ns",
                                                 "idle_in_graph_ns",  "idle_memory_wait_ns",
                                                 "idle_other_gpu_ns", "mean_kernel_ns",
                                                 "launches",          "mean_launch_ns",
                                                 "one_time_idle_ns"};
constexpr std::string_view kChurnFields[] = {"bytes",
                                             "free_api",
                                             "pairs",
                                             "pairs_host_ns",
                                             "implicit_syncs",
                                             "sync_wait_ns",
                                             "caching_saving_ns",
                                             "async_saving_ns",
                                             "pool_release_threshold",
                                             "release_sync_ns"};
constexpr std::string_view kGraphRebuildFields[] = {"instantiations", "graph_launches",
                                                    "exec_updates",   "instantiate_ns",
                                                    "capture_ns",     "destroy_ns"};
constexpr std::string_view kLateRankFields[] = {"rank", "communicator", "seq", "late_by_ns",
                                                "waiting_ranks"};
constexpr std::string_view kOverlapFields[] = {"kernels", "serialised_by", "copies", "copy_ns",
                                               "kernel_ns"};
constexpr std::string_view kTwoWayCopiesFields[] = {"pairs", "copies", "copy_ns", "htod_bytes",
                                                    "dtoh_bytes"};
constexpr std::string_view kUvmGpuFields[] = {"allocation", "kernel", "fault_groups",
                                              "migrated_bytes", "migration_ns"};
constexpr std::string_view kUvmCpuFields[] = {"allocation", "fault_groups", "migrations",
                                              "migrated_bytes"};
constexpr std::string_view kUvmThrashFields[] = {"event", "events", "migrated_bytes"};
constexpr std::string_view kSharedGpuFields[] = {"gpu", "pids", "processes", "shared_ns",
                                                 "busy_ns"};

// The help lines are `profview findings --help`'s (a golden test pins them) and begin the
// "reports" cell of USAGE.md's rules table (rule_registry_test checks it).
constexpr RuleInfo kRules[] = {
    {RuleId::kBlockedOnPriorWork, "blocked-on-prior-work", RuleFamily::kHostWait,
     "a copy/memset call waited >= --min-wait for earlier device work it had to follow",
     DetailsIndex<CopyDetails>(), kCopyFields, FindHostCallFindings},
    {RuleId::kSyncApi,
     "sync-api",
     RuleFamily::kHostWait,
     "cudaDeviceSynchronize/StreamSynchronize/EventSynchronize, cuCtxSynchronize...: the wait "
     "and what it waited for",
     DetailsIndex<NoDetails>(),
     {},
     FindHostCallFindings},
    {RuleId::kImplicitSync,
     "implicit-sync",
     RuleFamily::kHostWait,
     "cudaFree, cudaFreeHost, cudaMalloc, cudaHostRegister...: the wait",
     DetailsIndex<NoDetails>(),
     {},
     FindHostCallFindings},
    {RuleId::kPageableAsyncMemcpy, "pageable-async-memcpy", RuleFamily::kHostCost,
     "an *Async copy with pageable host memory (always reported)", DetailsIndex<CopyDetails>(),
     kCopyFields, FindHostCallFindings},
    {RuleId::kSyncMemcpy, "sync-memcpy", RuleFamily::kHostCost,
     "a synchronous copy costing >= --min-wait (H2D <= 64 KiB excluded)",
     DetailsIndex<CopyDetails>(), kCopyFields, FindHostCallFindings},
    {RuleId::kSyncMemset, "sync-memset", RuleFamily::kHostCost,
     "a synchronous memset costing >= --min-wait", DetailsIndex<CopyDetails>(), kMemsetFields,
     FindHostCallFindings},
    {RuleId::kStagedPeerCopy, "staged-peer-copy", RuleFamily::kHostCost,
     "a copy between two GPUs staged through host memory (peer access not enabled) costing >= "
     "--min-wait",
     DetailsIndex<CopyDetails>(), kCopyFields, FindHostCallFindings},
    {RuleId::kGpuIdleGaps, "gpu-idle-gaps", RuleFamily::kGpuIdle,
     "GPU idle >= --gap-threshold between two operations", DetailsIndex<IdleGapDetails>(),
     kGapFields, FindGpuFindings},
    {RuleId::kGpuLowUtilization, "gpu-low-utilization", RuleFamily::kGpuIdle,
     "a chunk of the GPU's active span busy < --util-threshold",
     DetailsIndex<LowUtilizationDetails>(), kLowUtilizationFields, FindGpuFindings},
    {RuleId::kGpuIdleBreakdown, "gpu-idle-breakdown", RuleFamily::kGpuIdle,
     "the GPU idle >= --idle-share of its active span (first to last operation)",
     DetailsIndex<IdleBreakdownDetails>(), kBreakdownFields, FindGpuFindings},
    {RuleId::kStartUp, "start-up", RuleFamily::kStartUp,
     "start-up, reported once: until the first kernel, and on while module loading and context "
     "creation fill half the time since, then through a warm-up (a nearly idle GPU until a "
     "module load, ten times busier after it); later module loading counts too; the GPU rules "
     "leave out its idle time",
     DetailsIndex<StartUpDetails>(), kStartUpFields, FindGpuFindings},
    {RuleId::kLateRank, "late-rank", RuleFamily::kRankWait,
     "an NCCL collective whose ranks waited for one that arrived >= --min-wait after the "
     "others (traces of several ranks)",
     DetailsIndex<LateRankDetails>(), kLateRankFields, NoProcessPass, /*cross_rank=*/true},
    {RuleId::kAllocChurn, "alloc-churn", RuleFamily::kPattern,
     ">= --churn-min-pairs cudaMalloc/cudaFree (or other synchronous allocation) pairs of one "
     "size: host time, implicit synchronisations, and the saving of a caching allocator (every "
     "pair after the first) or of cudaMallocAsync (priced by the trace's own stream-ordered "
     "pairs, when it has some); or cudaMallocAsync/cudaFreeAsync pairs whose pool gives the "
     "memory back to the OS at each synchronisation (release threshold below the size)",
     DetailsIndex<AllocChurnDetails>(), kChurnFields, FindMemoryFindings},
    {RuleId::kGraphRebuild, "graph-rebuild", RuleFamily::kPattern,
     ">= --churn-min-pairs CUDA graph instantiations with fewer than two graph launches each: "
     "the host time of instantiating, capturing and destroying graphs that a graph "
     "instantiated once would save (all but one graph's share)",
     DetailsIndex<GraphRebuildDetails>(), kGraphRebuildFields, FindGraphFindings},
    {RuleId::kNoOverlapDefaultStream, "no-overlap-default-stream", RuleFamily::kPattern,
     "host copies and kernels serialised by the legacy default stream (could overlap: min(copy, "
     "kernel time) minus what already overlapped) or by pageable memory (a copy that held the "
     "host, then a kernel on another stream: min of the two per pair)",
     DetailsIndex<OverlapDetails>(), kOverlapFields, FindOverlapFindings},
    {RuleId::kTwoWayCopiesOneStream, "two-way-copies-one-stream", RuleFamily::kPattern,
     "host-to-device and device-to-host copies (pinned, > 64 KiB) queued one behind the other "
     "on one stream with no other work between: on two streams the GPU's copy engines run both "
     "directions at once",
     DetailsIndex<TwoWayCopiesDetails>(), kTwoWayCopiesFields, FindOverlapFindings},
    {RuleId::kUvmGpuPageFaults, "uvm-gpu-page-faults", RuleFamily::kPattern,
     "a kernel's GPU page faults on managed memory made the driver migrate its data while it ran "
     "(>= --min-wait): prefetch with cudaMemPrefetchAsync, or use device memory",
     DetailsIndex<UnifiedMemoryDetails>(), kUvmGpuFields, FindUnifiedMemoryFindings},
    {RuleId::kUvmCpuFaults, "uvm-cpu-faults", RuleFamily::kPattern,
     "the CPU touched managed memory page by page: >= 32 CPU page faults on one allocation over "
     ">= --min-wait",
     DetailsIndex<UnifiedMemoryDetails>(), kUvmCpuFields, FindUnifiedMemoryFindings},
    {RuleId::kUvmThrashing, "uvm-thrashing", RuleFamily::kPattern,
     "the driver reported thrashing, throttling or remote maps of managed memory between "
     "processors",
     DetailsIndex<UnifiedMemoryDetails>(), kUvmThrashFields, FindUnifiedMemoryFindings},
    {RuleId::kSharedGpu, "shared-gpu", RuleFamily::kPattern,
     "processes of one host that ran work on the same GPU at the same time for >= --min-wait "
     "(traces of several processes): time-sliced, each waits for the others' work",
     DetailsIndex<SharedGpuDetails>(), kSharedGpuFields, NoProcessPass, /*cross_rank=*/true},
};

constexpr bool InRuleIdOrder() {
  for (size_t i = 0; i < std::size(kRules); ++i) {
    if (static_cast<size_t>(kRules[i].rule) != i) return false;
  }
  return true;
}
static_assert(InRuleIdOrder(), "kRules must list the rules in RuleId order");
static_assert(std::size(kRules) == static_cast<size_t>(RuleId::kSharedGpu) + 1,
              "every RuleId needs its entry in kRules");

// The ids of --help's rule list are padded to this width (the longest but one), so that the
// help lines start in one column.
constexpr size_t kHelpIdWidth = 21;

}  // namespace

const char* ToString(RuleFamily family) {
  switch (family) {
    case RuleFamily::kHostWait:
      return "host-wait";
    case RuleFamily::kHostCost:
      return "host-cost";
    case RuleFamily::kGpuIdle:
      return "gpu-idle";
    case RuleFamily::kPattern:
      return "pattern";
    case RuleFamily::kStartUp:
      return "start-up";
    case RuleFamily::kRankWait:
      return "rank-wait";
  }
  return "?";
}

TimeKind TimeKindOf(RuleFamily family) {
  switch (family) {
    case RuleFamily::kHostWait:
    case RuleFamily::kHostCost:
      return TimeKind::kHost;
    case RuleFamily::kGpuIdle:
      return TimeKind::kGpuIdle;
    case RuleFamily::kPattern:
      return TimeKind::kSaving;
    case RuleFamily::kStartUp:
      return TimeKind::kStartUp;
    case RuleFamily::kRankWait:
      return TimeKind::kRankWait;
  }
  return TimeKind::kHost;
}

const char* ToString(TimeKind kind) {
  switch (kind) {
    case TimeKind::kHost:
      return "host";
    case TimeKind::kGpuIdle:
      return "gpu-idle";
    case TimeKind::kSaving:
      return "saving";
    case TimeKind::kStartUp:
      return "start-up";
    case TimeKind::kRankWait:
      return "rank-wait";
  }
  return "?";
}

std::span<const RuleInfo> Rules() { return kRules; }

const RuleInfo& Rule(RuleId rule) { return kRules[static_cast<size_t>(rule)]; }

namespace {

std::string Join(std::string_view separator, std::optional<RuleFamily> family) {
  std::string out;
  for (const RuleInfo& r : kRules) {
    if (family && r.family != *family) continue;
    if (!out.empty()) out += separator;
    out += r.id;
  }
  return out;
}

}  // namespace

std::string RuleNames(std::string_view separator) { return Join(separator, std::nullopt); }

std::string RuleNames(std::string_view separator, RuleFamily family) {
  return Join(separator, family);
}

std::string RulesHelp() {
  std::string out = "Rules:\n";
  for (const RuleInfo& r : kRules) {
    out += "  " + std::string(r.id) +
           std::string(r.id.size() < kHelpIdWidth ? kHelpIdWidth - r.id.size() + 2 : 2, ' ') +
           std::string(r.help) + "\n";
  }
  // The pattern rules: by position while they are the last two (as --help always said), else
  // by name.
  const size_t patterns = std::count_if(std::begin(kRules), std::end(kRules), [](const auto& r) {
    return r.family == RuleFamily::kPattern;
  });
  if (patterns == 0) return out;
  size_t trailing = 0;
  while (trailing < std::size(kRules) &&
         kRules[std::size(kRules) - 1 - trailing].family == RuleFamily::kPattern) {
    ++trailing;
  }
  const std::string which =
      patterns == 2 && trailing == 2
          ? "The last two"
          : "The pattern rules (" + RuleNames(", ", RuleFamily::kPattern) + ")";
  return out + which +
         " sum many calls: their time is an estimate of a saving, kept out of the host total.\n";
}

std::vector<RulePass> RulePasses() {
  std::vector<RulePass> passes;
  for (const RuleInfo& r : kRules) {
    if (std::find(passes.begin(), passes.end(), r.pass) == passes.end()) passes.push_back(r.pass);
  }
  return passes;
}

}  // namespace libprof::analysis
