// `profview summary --findings`: each process's findings in brief (summary.h ProcessFindings:
// its host time lost and its top group, as `profview findings` over that process alone prints
// them), for the per-process table of a many-rank job. A second read of the traces, one file
// at a time, paid only when asked for: in windows (bounded memory) where they give the exact
// findings, as `profview findings` reads them (rules/windowed_findings.h), else whole.
//
// Layer: analysis/ (commands). Runs rules/findings.h and names groups as reports/ do.
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "analysis/metrics/summary.h"
#include "analysis/model/filters.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

// The brief of one process's findings (grouped as `profview findings` groups them).
ProcessFindings BriefFindings(const ProcessTrace& trace, const FindingsOptions& options);

// Sets `findings` of every part of `parts` (the summaries of `files`' processes, matched by
// trace path and pid) from a second read of the files with the same filters (with filters,
// each process whole). An error: a file that cannot be read now.
std::expected<void, std::string> AddProcessFindings(const std::vector<std::string>& files,
                                                    const FilterOptions& filters,
                                                    const FindingsOptions& options,
                                                    std::vector<Summary>* parts);

}  // namespace libprof::analysis
