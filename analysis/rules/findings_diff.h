// Findings of two runs compared: which appeared, which disappeared, which changed the time they
// lose ("cudaMemcpyAsync blocked on nrm2_kernel: 4.9 ms -> 0.2 ms"), for `profview diff`, and
// the totals per rule that `profview check` asserts on.
//
// Layer: analysis/rules/. Reads only findings.h's public result (Finding), keyed by the rule and
// what the finding is about, so that how the engine finds, groups or ranks findings can change
// underneath.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics/run_diff.h"
#include "analysis/rules/findings.h"
#include "analysis/rules/rule_registry.h"

namespace libprof::analysis {

// What a finding is about, the same in two runs of one program: the rule, the API call (or the
// device, for device rules), the first work it blamed, the details' group key (rule_details.h)
// and the call site. Correlation ids, times, threads and streams are left out: they differ
// between runs. One-time work (an autotuner, torch.compile) is keyed by its kind instead of what
// it waited for and where from, as `profview findings` groups it: the candidates a tuner times
// differ from run to run.
struct FindingKey {
  RuleId rule = RuleId::kBlockedOnPriorWork;
  std::string api;
  std::optional<uint32_t> device_id;
  std::string blamed_kind, blamed;
  std::string detail;
  std::string call_site;
  OneTimeWork one_time = OneTimeWork::kNone;
  auto operator<=>(const FindingKey&) const = default;
  bool operator==(const FindingKey&) const = default;
};
FindingKey KeyOf(const Finding& finding);

// The findings of one run with one key: how many, and the time they lost.
struct FindingTotal {
  FindingKey key;
  uint64_t count = 0;
  uint64_t blocked_ns = 0;
};

// Accumulates findings (of one process after another) into totals by key.
class FindingTotals {
 public:
  void Add(const Finding& finding);  // in any order (StreamFindings' findings as they come)
  void Add(const std::vector<Finding>& findings);
  // Sorted by key.
  std::vector<FindingTotal> Totals() const;
  // Over every key of one rule: its one-time work's findings (an autotuner's or a compiler's
  // own calls, one_time_work.h) only with `with_one_time`.
  FindingTotal OfRule(RuleId rule, bool with_one_time = true) const;
  // A rule's findings in one-time work: their total and kinds (OneTimeWorkBit's).
  struct OneTimeShare {
    FindingTotal total;
    uint32_t kinds = 0;
  };
  OneTimeShare OneTimeOf(RuleId rule) const;

 private:
  std::map<FindingKey, FindingTotal> totals_;  // small: one per key
};

struct FindingDiff {
  FindingKey key;
  std::optional<FindingTotal> base, next;
  Change blocked;  // time lost per iteration (or per run), ns; noise: threshold and floor
  Change count;    // findings per iteration (or per run)
  DiffStatus status = DiffStatus::kWithinNoise;  // kSlower: loses more time
};

// Every key of either run; sorted: changes first, then by |change in time lost|, then key.
std::vector<FindingDiff> CompareFindings(const std::vector<FindingTotal>& base,
                                         const std::vector<FindingTotal>& next, double base_per,
                                         double next_per, double threshold, double floor_ns);

}  // namespace libprof::analysis
