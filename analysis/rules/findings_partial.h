// Partial findings: what `profview findings --partial` writes for some of a job's traces and
// `profview combine` merges, so that the map step (one worker per group of files) and the
// reduce step of a many-rank analysis print what `findings` over all the files prints.
//
// Layer: analysis/rules/. Serialises findings_digest.h's state and the collectives the
// cross-rank rules need; no analysis of its own beyond running those rules at the end.
//
// A partial holds the grouped findings of its processes (FindingsDigest::State: each group's
// count, sums and worst finding, the headline's sums, the start-up findings), each process's
// place (trace path, then its order in the file), the NCCL collectives of the processes that
// have some (the late-rank rule compares ranks, so it runs only once everything is combined),
// each process's GPUs (for shared-gpu, likewise),
// the analysed time, the thresholds and filters it was made with, what the filters matched and
// the traces' warnings. Combining renumbers the processes in trace path order, so that combining
// the partials of any split of a set of files gives byte for byte what `findings` prints over
// those files in name order (a shell glob). Combining gives a partial again (`combine
// --partial`), so a reduce can be a tree.
// Format: one JSON object, {"format": "libprof-findings-partial", "version": 1, ...}; a reader
// refuses any other format or version rather than guess.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/metrics/gpu_use.h"
#include "analysis/model/collectives.h"
#include "analysis/model/filters.h"
#include "analysis/rules/findings.h"
#include "analysis/rules/findings_digest.h"

namespace libprof::analysis {

inline constexpr std::string_view kFindingsPartialFormat = "libprof-findings-partial";
// 2: the start-up finding gained its warm-up (warm_up_ns, warm_up_gpu_busy_ns, gpu_busy_after).
// 3: a finding's one_time (one_time_work.h) and the sums' host_in_one_time and one_time_kinds.
// 4: gpu-idle-breakdown's one_time_idle_ns and start-up's one_time_gpu_idle_ns (idle time left
//    out as one-time work's), and the sums' gpu_idle_in_one_time.
// 5: the GPU rules' idle time behind host functions and inside CUDA graphs (IdleTotals'
//    host_function_ns, in_graph_ns).
// 6: alloc-churn's pool_release_threshold and release_sync_ns (a pool that gives its memory
//    back); the GPU rules' idle time behind memory waits and other GPUs' work (IdleTotals'
//    memory_wait_ns, other_device_ns); start-up's
//    recurring_library_set_ups and recurring_module_loads.
// 7: the graph-rebuild rule's findings (its details).
// 8: each process's GPUs (gpu_use), for the cross-process rule shared-gpu; start-up's
//    recurring_compilations.
// 9: the host-wait rules' time outside start-up and one-time work (sums' host_waits) and each
//    pid's first such wait (first_waits); start-up's active_ns, active_gpu_busy_ns, steady_ns
//    and steady_gpu_busy_ns; each finding's call_site_line.
inline constexpr uint32_t kFindingsPartialVersion = 9;

struct FindingsPartial {
  FindingsOptions thresholds;  // with the call-site rule
  FilterOptions filters;
  std::vector<std::string> files;  // the trace files it covers, in the order read
  // The processes, numbered 1..n as the digest numbers them: trace path, order in the file.
  struct Process {
    std::string file;
    uint32_t index = 0;
  };
  std::vector<Process> processes;
  FindingsDigest::State digest;
  // Of the processes with NCCL ranges: the process number and its collectives.
  std::vector<std::pair<uint64_t, ProcessCollectives>> collectives;
  // Every process's GPUs (shared-gpu), by process number.
  std::vector<std::pair<uint64_t, ProcessGpuUse>> gpu_use;
  uint64_t trace_ns = 0;  // analysed time, summed over the processes
  FilterMatches matches;
  struct Warning {
    std::string file;
    std::string text;
  };
  std::vector<Warning> warnings;  // the traces', in file order
};

std::string FindingsPartialJson(const FindingsPartial& partial);

// Whether `text` is a findings partial (by its format field; summary partials are not).
bool IsFindingsPartial(std::string_view text);

// Parses what FindingsPartialJson wrote. Errors name `name` (the partial's file): not JSON,
// another format or version, a missing or mistyped field, an unknown rule.
std::expected<FindingsPartial, std::string> ParseFindingsPartial(std::string_view text,
                                                                 const std::string& name);

// The partial of `files` (one process at a time, each file read in windows as `findings` reads
// it, else loaded, filtered and analysed whole, before the next): what `findings` would group,
// without printing it. Errors as `findings` gives them.
std::expected<FindingsPartial, std::string> FindFindingsPartial(
    const std::vector<std::string>& files, const FilterOptions& filters,
    const FindingsOptions& thresholds);

// Combines findings partials; each is merged when Finish (or TakePartial) runs, since the
// process order is known only once every partial is in (a partial is small: groups, not
// findings).
class FindingsPartialsCombiner {
 public:
  // Errors: thresholds, call-site rule or filters other than the first partial's; a trace file
  // already in an earlier partial. `name` names the partial in them.
  std::expected<void, std::string> Add(FindingsPartial partial, const std::string& name);
  // `combine --partial`: everything added, as one partial (the late-rank rule not yet run).
  FindingsPartial TakePartial();
  // What `findings` prints over all the partials' files: the digest (with the late-rank
  // findings), the analysed time and the thresholds; the traces' warnings are appended to
  // *warnings; the filters' errors as `findings` gives them.
  struct Result {
    FindingsDigest digest;
    uint64_t trace_ns = 0;
    FindingsOptions thresholds;
  };
  std::expected<Result, std::string> Finish(std::vector<std::string>* warnings);

 private:
  // Every partial merged: their findings into *digest, their processes numbered in trace path
  // order; the rest returned as one partial (without its digest state).
  FindingsPartial MergeInto(FindingsDigest* digest);

  std::vector<FindingsPartial> partials_;
  std::string first_name_;
  std::unordered_map<std::string, std::string> source_of_;  // trace file -> its partial's name
};

}  // namespace libprof::analysis
