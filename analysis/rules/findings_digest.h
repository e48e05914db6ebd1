// What `profview findings` prints, accumulated one process after another: the groups (the worst
// finding of each, its count and time lost), the totals of the headlines per kind of time, the
// start-up lines and the number of findings of each kind. A process's findings go in as soon as
// they are found and are dropped then: memory holds the groups (one per rule, API, blamed work,
// details' key and call site: a few hundred in a training loop), not a million findings of 64
// ranks. Only `--all` (every finding listed) keeps every finding, because it prints them.
//
// Adding in the order the whole-trace path listed them (process after process, each by time, the
// cross-rank findings last) gives exactly the groups, order and worst findings GroupFindings gives
// over the concatenated list: a group's worst is its first finding of the largest time lost.
// Issues 13 (diff with findings) and 16 (the HTML report) take the same per-process findings.
//
// Layer: analysis/rules/. Reads only findings.h's Finding and the registry's families.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/rules/findings.h"
#include "analysis/rules/rule_registry.h"

namespace libprof::analysis {

// The headlines' totals, per kind of time (rule_registry.h TimeKind).
struct FindingsTotals {
  uint64_t host = 0, gpu_idle = 0, saving = 0, start_up = 0, rank_wait = 0;
  // Of `host`: start-up's own work and waits but one-time work's; one-time work's (an autotuner,
  // torch.compile), and the kinds of that work (bits of OneTimeWorkBit).
  uint64_t host_in_start_up = 0;
  uint64_t host_in_one_time = 0;
  uint32_t one_time_kinds = 0;
  // Not in `gpu_idle`: the GPU's idle time during one-time work after start-up, which the GPU
  // rules left out (the start-up findings' one_time_gpu_idle_ns).
  uint64_t gpu_idle_in_one_time = 0;
  size_t host_threads = 0;        // distinct (pid, thread) with a host finding
  // Of `host`: the host-wait rules' (waits for the GPU's work), neither start-up's nor one-time
  // work's.
  uint64_t host_waits = 0;
  // What bounds `host_waits`: the GPU's work takes as long without them, so they can shorten
  // the run by at most bound_span_ns - bound_gpu_busy_ns. Summed over the processes with such
  // waits: their busiest device's steady state and its busy time when all their waits came
  // after start-up (StartUpDetails::steady_ns, steady_gpu_busy_ns), else its span from its
  // first operation to its last (active_ns, active_gpu_busy_ns). 0 when a process with waits
  // has no start-up finding (no bound known).
  uint64_t bound_span_ns = 0, bound_gpu_busy_ns = 0;
  size_t bound_processes = 0;
  bool bound_after_start_up = true;  // every process's bound is its steady state's
};

class FindingsDigest {
 public:
  // `keep_all`: also keep every finding in order, for `--all`.
  explicit FindingsDigest(bool keep_all = false) : keep_all_(keep_all) {}

  // Adds findings after those added before, in list order (one process's, by time, as
  // FindFindings returns them; then the cross-rank ones).
  void Add(std::vector<Finding> findings);
  void Add(Finding finding);
  // The findings of the next process, in any order, as StreamFindings hands them on: a group's
  // worst is then the one FindFindings' order puts first (by host_start_ns, correlation id,
  // then `seq`), so the result is what adding FindFindings' list gives, without the list.
  // Not with keep_all (--all prints the findings in order: add the list).
  void BeginProcess() { ++process_; }
  void Add(Finding finding, uint64_t seq);
  // Whether Add(finding, seq) would keep the finding (a group's worst from now on, a start-up
  // finding, or every one with keep_all), so that it must come whole (FindingFilter); the
  // others count by the fields of their group's key and times only.
  bool WantsWhole(const Finding& finding, uint64_t seq) const;

  // Groups as GroupFindings sorts them: start-up's after the rest, then the largest time lost
  // first, ties in the key's order.
  std::vector<FindingGroup> Groups() const;
  // Every finding added, in order; empty unless made with keep_all.
  const std::vector<Finding>& all() const { return all_; }
  bool keeps_all() const { return keep_all_; }
  // The start-up findings (one per process with device work), in order.
  const std::vector<Finding>& start_ups() const { return start_ups_; }
  FindingsTotals Totals() const;
  size_t Count(TimeKind kind) const { return counts_[static_cast<size_t>(kind)]; }
  size_t size() const { return size_; }
  // Distinct pids of the findings added.
  size_t processes() const { return pids_.size(); }

  // What a findings partial keeps of a digest (findings_partial.h), its processes numbered
  // 1..processes in the order they were added (BeginProcess). Not of a keep_all digest.
  // Where a finding stands in the order of everything added: the process, then (streamed
  // adds) its time, correlation id and seq, or (list adds) its place in the list.
  using Order = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;

  struct State {
    struct Group {
      FindingGroup group;
      Order worst{};  // the worst finding's place
    };
    std::vector<Group> groups;
    std::vector<std::pair<uint64_t, Finding>> start_ups;  // (process, finding)
    std::array<size_t, 5> counts{};                       // per TimeKind
    size_t size = 0;
    std::vector<uint32_t> pids;
    FindingsTotals sums;  // all but gpu_idle and host_threads
    std::vector<std::pair<uint32_t, uint32_t>> host_threads;
    struct Idle {
      uint32_t pid = 0, device = 0;
      RuleId rule = RuleId::kGpuIdleGaps;
      uint64_t ns = 0;
    };
    std::vector<Idle> idle;
    uint64_t processes = 0;
    std::vector<std::pair<uint32_t, uint64_t>> first_waits;  // (pid, FindingsDigest's)
  };
  State TakeState();
  // Adds a state of other processes than those added so far, renumbering its processes with
  // `process` (1..n to this digest's numbers): a group's worst finding is then the one the
  // whole list would have put first. Afterwards SetProcesses(total) so that BeginProcess goes
  // on after the last.
  void Merge(State state, const std::function<uint64_t(uint64_t)>& process);
  void SetProcesses(uint64_t processes) { process_ = processes; }

 private:
  // The grouping key of findings.h's FindingGroup; the rule by its name, so that groups of
  // equal time keep the name order. Views compare as the owned strings do.
  using Key = std::tuple<bool, OneTimeWork, std::string_view, std::string, std::string,
                         std::string, std::string, int64_t>;  // int64_t: the device, or -1

  struct Group {
    FindingGroup group;
    Order worst;
  };
  // Whether a finding losing `blocked_ns`, at `order`, is the group's worst from now on: the
  // first of the largest time lost, in the order of everything added.
  static bool BecomesWorst(const Group& group, uint64_t blocked_ns, const Order& order);
  void Add(Finding finding, const Order& order);
  // The group of `finding` (created empty if new); Find: nullptr if none yet.
  Group& GroupOf(const Finding& finding);
  const Group* Find(const Finding& finding) const;

  bool keep_all_;
  uint64_t process_ = 0;
  uint64_t position_ = 0;  // of list adds
  std::map<Key, Group, std::less<>> groups_;
  std::vector<Finding> all_;
  std::vector<Finding> start_ups_;
  std::vector<uint64_t> start_up_process_;  // the process of each of start_ups_
  size_t counts_[5] = {};  // per TimeKind
  size_t size_ = 0;
  std::set<uint32_t> pids_;
  // The totals' parts: host time and its threads; GPU idle time per (pid, device) and rule
  // (the breakdown, gaps and chunks overlap: the largest of the three counts).
  FindingsTotals sums_;
  std::set<std::pair<uint32_t, uint32_t>> host_threads_;
  std::map<std::pair<uint32_t, uint32_t>, std::map<RuleId, uint64_t>> idle_;
  // Per pid: the earliest start of a wait counted in host_waits (trace time from its recording
  // start), which says whether all came after start-up.
  std::map<uint32_t, uint64_t> first_waits_;
};

}  // namespace libprof::analysis
