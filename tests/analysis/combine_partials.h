// The test side of `profview combine`: partials of groups of traces written, then combined,
// directly or through a tree of `combine --partial`; shared by the summary and findings
// partial tests.
#pragma once

#include <algorithm>
#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "analysis/commands.h"
#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {

inline std::string JoinWarnings(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += "\nwarning: " + l;
  return s;
}

// Writes each group's partial with `write_partial(files, output path)` into `dir`, combines them
// (`tree`: first in pairs with combine --partial, then all together) and returns combine's
// output and warnings, or "error: " and the first error.
using WritePartial = std::function<std::expected<std::string, std::string>(
    const std::vector<std::string>& files, const std::string& output)>;
inline std::string CombineGroups(const TempDir& dir,
                                 const std::vector<std::vector<std::string>>& groups,
                                 const WritePartial& write_partial, OutputFormat format,
                                 size_t terminal_width, bool tree) {
  CombineCommandOptions combine;
  combine.format = format;
  combine.terminal_width = terminal_width;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::string output = dir.Path("part" + std::to_string(g) + ".json");
    auto written = write_partial(groups[g], output);
    if (!written) return "error: " + written.error();
    combine.files.push_back(output);
  }
  if (tree) {
    std::vector<std::string> level;
    for (size_t i = 0; i < combine.files.size(); i += 2) {
      CombineCommandOptions pair;
      pair.files = {combine.files.begin() + static_cast<long>(i),
                    combine.files.begin() +
                        static_cast<long>(std::min(i + 2, combine.files.size()))};
      pair.partial_output = dir.Path("level" + std::to_string(i) + ".json");
      std::vector<std::string> ignored;
      auto written = RunCombine(pair, &ignored);
      if (!written) return "error: " + written.error();
      level.push_back(pair.partial_output);
    }
    combine.files = level;
  }
  std::vector<std::string> warnings;
  auto out = RunCombine(combine, &warnings);
  return (out ? *out : "error: " + out.error()) + JoinWarnings(warnings);
}

}  // namespace libprof::analysis::testing
