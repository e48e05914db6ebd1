#include "analysis/rules/rank_rules.h"

#include <algorithm>
#include <cstdio>

#include "analysis/model/units.h"

namespace libprof::analysis {

void NoProcessPass(const RuleInput& /*input*/, std::vector<Finding>* /*out*/) {}

std::string LateRankSentence(const CollectiveInstance& i) {
  const InstanceMember& late = i.members[i.late];
  return "rank " + std::to_string(late.rank) + " reached " + i.op + " #" + std::to_string(i.seq) +
         " " + FormatDuration(static_cast<double>(i.late_by_ns)) + " after the others; the other " +
         std::to_string(i.members.size() - 1) + " rank" + (i.members.size() == 2 ? "" : "s") +
         " waited " + FormatDuration(static_cast<double>(i.others_wait_ns)) + " in all";
}

std::vector<Finding> FindLateRanks(std::span<const ProcessCollectives> processes,
                                   const RankSkewReport& skew, const FindingsOptions& options) {
  std::vector<Finding> out;
  for (const CollectiveInstance& i : skew.instances) {
    if (i.members.size() < 2 || i.late_by_ns == 0 || i.late_by_ns < options.min_wait_ns) continue;
    const InstanceMember& late = i.members[i.late];
    const ProcessCollectives& process = processes[late.process];
    const CollectiveCall& call = process.calls[late.call];
    char comm[24];
    std::snprintf(comm, sizeof(comm), "%016llx", static_cast<unsigned long long>(i.comm));
    Finding f;
    f.rule = RuleId::kLateRank;
    f.api = i.op;
    f.file = process.path;
    f.pid = process.pid;
    f.thread_id = call.thread_id;
    f.host_start_ns = call.host_start_ns - std::min(call.host_start_ns, process.origin_ns);
    // The others' waits, summed over ranks: time lost by the job, not by this call.
    f.host_duration_ns = i.others_wait_ns;
    f.blocked_ns = i.others_wait_ns;
    f.device_id = call.device_id;
    f.explanation = LateRankSentence(i);
    LateRankDetails details;
    details.rank = late.rank;
    details.communicator = comm;
    details.seq = i.seq;
    details.late_by_ns = i.late_by_ns;
    details.waiting_ranks = static_cast<uint32_t>(i.members.size() - 1);
    f.details = std::move(details);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace libprof::analysis
