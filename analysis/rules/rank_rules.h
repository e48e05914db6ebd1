// late-rank: NCCL collectives whose ranks waited for one rank that arrived last (rank_skew.h).
// It needs the traces of every rank, so it is not a per-process pass: its registry pass finds
// nothing, and RunFindings calls FindLateRanks once all processes are read.
//
// Layer: analysis/rules/.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "analysis/metrics/rank_skew.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

// The registry's pass for cross-rank rules: nothing to find in one process.
void NoProcessPass(const RuleInput& input, std::vector<Finding>* out);

// One finding per matched instance whose late rank arrived >= options.min_wait_ns after the
// latest other rank, in the late rank's process.
std::vector<Finding> FindLateRanks(std::span<const ProcessCollectives> processes,
                                   const RankSkewReport& skew, const FindingsOptions& options);

// "rank 3 reached AllReduce #812 2.10 ms after the others; the other 7 ranks waited 14.70 ms in
// all".
std::string LateRankSentence(const CollectiveInstance& instance);

}  // namespace libprof::analysis
