// `profview collectives`: the collectives table (collective_stats.h) and, over several ranks, the
// clock alignment, the per-rank straggler table, the instances with the longest waits and the
// calls that could not be matched across ranks (rank_skew.h); as tables or JSON.
//
// Layer: analysis/reports/.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "analysis/metrics/collective_stats.h"
#include "analysis/metrics/rank_skew.h"

namespace libprof::analysis {

struct CollectivesReport {
  std::vector<ProcessCollectives> processes{};
  std::vector<CollectiveRow> table{};
  RankSkewReport skew{};  // empty with one process
  size_t top = 10;      // instances listed, longest others' wait first
};

std::string CollectivesTable(const CollectivesReport& report, size_t width);
// The first table alone (as `profview summary` appends it).
std::string CollectiveRowsTable(const std::vector<CollectiveRow>& table, size_t processes,
                                size_t width);
std::string CollectivesJson(const CollectivesReport& report);

}  // namespace libprof::analysis
