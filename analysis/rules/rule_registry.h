// The findings rules, registered once. Each entry gives a rule's stable id (an interface, like
// the JSON field names), its family, its one-line help, the details its findings carry
// (rule_details.h) and the pass that computes it. Everything that lists or tells rules apart
// reads it: the engine runs the passes in registry order (findings.cc), the reports account and
// mark findings by family (findings_report.cc, timeline_args.cc, timeline_export.cc),
// `profview findings --help` lists RulesHelp(), and tests/analysis/rule_registry_test.cc fails
// when viewer-cli/USAGE.md's rules table disagrees with the registry.
//
// Adding a rule: a RuleId and its kRules entry (rule_registry.cc); its details struct in
// FindingDetails when its fields are new (rule_details.h); the code that makes its findings, in
// an existing pass or a new one (a new <topic>_rules.{h,cc}, listed in analysis/CMakeLists.txt);
// its row in USAGE.md's rules table; tests in tests/analysis/findings_test.cc.
//
// Layer: analysis/rules/, rules. The header needs only the standard library (the
// types a pass takes are declared, not included), so reports and the CLI include it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace libprof::analysis {

struct ProcessTrace;
class TraceIndex;
class StreamModel;
struct FindingsOptions;
struct Finding;

// One per registered rule, in the order of the registry (Rules()).
enum class RuleId : uint8_t {
  kBlockedOnPriorWork,
  kSyncApi,
  kImplicitSync,
  kPageableAsyncMemcpy,
  kSyncMemcpy,
  kSyncMemset,
  kStagedPeerCopy,
  kGpuIdleGaps,
  kGpuLowUtilization,
  kGpuIdleBreakdown,
  kStartUp,
  kLateRank,
  kAllocChurn,
  kGraphRebuild,
  kNoOverlapDefaultStream,
  kTwoWayCopiesOneStream,
  kUvmGpuPageFaults,
  kUvmCpuFaults,
  kUvmThrashing,
  kSharedGpu,
};

// What a rule's time lost (Finding::blocked_ns) is, which says how reports add it up.
enum class RuleFamily : uint8_t {
  kHostWait,  // host time an API call waited for earlier device work (at most one per call)
  kHostCost,  // host time an API call spent on its own synchronous work, besides its wait
  kGpuIdle,   // idle time of a device
  kPattern,   // a saving estimated over many calls, which may have findings of their own
  kStartUp,   // wall time from the recording start until the steady state, paid once
  kRankWait,  // time other ranks waited in a collective for a late rank (summed over ranks)
};
// "host-wait", "host-cost", "gpu-idle", "pattern", "start-up", "rank-wait"
const char* ToString(RuleFamily family);

// The unit a family's time lost is in, which says which table of `profview findings` shows it
// and the JSON/CSV field "time_kind": "host" (host-wait, host-cost: host time of API calls),
// "gpu-idle" (idle device time), "saving" (pattern: an estimate), "start-up" (wall time),
// "rank-wait" (rank-wait: time ranks waited for a late rank, summed over ranks).
enum class TimeKind : uint8_t { kHost, kGpuIdle, kSaving, kStartUp, kRankWait };
TimeKind TimeKindOf(RuleFamily family);
const char* ToString(TimeKind kind);

// What a pass reads: one process, its index and stream model (built once for all passes).
struct RuleInput {
  const ProcessTrace& trace;
  const TraceIndex& index;
  const StreamModel& model;
  const FindingsOptions& options;
  // The end of the process's last kernel or graph (of those with a duration), where `index`
  // holds only a window of the process (windowed_findings.h); none: the index's own.
  std::optional<uint64_t> last_kernel_end_ns;
};
// Appends the findings of its rules to *out. Rules that share their work (the seven host rules
// account a call's wait and own cost together; the GPU rules share the idle breakdown) share
// a pass, which runs once.
using RulePass = void (*)(const RuleInput& input, std::vector<Finding>* out);

struct RuleInfo {
  RuleId rule;
  std::string_view id;  // "blocked-on-prior-work"
  RuleFamily family;
  std::string_view help;                     // one line, in --help and USAGE.md's rules table
  size_t details;                            // the FindingDetails alternative its findings hold
  std::span<const std::string_view> fields;  // the JSON fields those details add
  RulePass pass;
  // A rule over several processes (the ranks of a job): its pass finds nothing in one process;
  // RunFindings computes it once every process has been read (rank_rules.h).
  bool cross_rank = false;
};

// Every rule, in RuleId order (the order --help and USAGE.md list them in).
std::span<const RuleInfo> Rules();
const RuleInfo& Rule(RuleId rule);
inline std::string_view RuleName(RuleId rule) { return Rule(rule).id; }
// The rules' ids joined by `separator`, all of them or those of one family.
std::string RuleNames(std::string_view separator);
std::string RuleNames(std::string_view separator, RuleFamily family);

// The "Rules:" section of `profview findings --help`: one line per rule (id, help) and what
// the pattern rules' time means.
std::string RulesHelp();

// Every registered pass once, in registry order (the order of their first rule): the engine
// (findings.cc StreamFindings) runs each once.
std::vector<RulePass> RulePasses();

}  // namespace libprof::analysis
