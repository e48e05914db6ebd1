// The test side of `profview combine`: partials of groups of traces written, then combined,
// directly or through a tree of `combine --partial`, against the command over all the traces;
// shared by the summary and findings partial tests.
#pragma once

#include <algorithm>
#include <expected>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
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

// RunSummary or RunFindings: the command whose output partials must reproduce.
template <class Options>
using RunCommand = std::expected<std::string, std::string> (*)(const Options&,
                                                               std::vector<std::string>*);

// `run` over `files` with `base`'s options: its output and warnings, or "error: " and the error.
template <class Options>
std::string RunOver(RunCommand<Options> run, const std::vector<std::string>& files,
                    const Options& base) {
  Options o = base;
  o.files = files;
  std::vector<std::string> warnings;
  auto out = run(o, &warnings);
  return (out ? *out : "error: " + out.error()) + JoinWarnings(warnings);
}

// CombineGroups with each group's partial written by `run` with `base`'s options.
template <class Options>
std::string CombineRuns(const TempDir& dir, RunCommand<Options> run,
                        const std::vector<std::vector<std::string>>& groups, const Options& base,
                        bool tree) {
  auto write = [&](const std::vector<std::string>& files, const std::string& output) {
    Options o = base;
    o.files = files;
    o.partial_output = output;
    std::vector<std::string> ignored;
    return run(o, &ignored);
  };
  return CombineGroups(dir, groups, write, base.format, base.terminal_width, tree);
}

// `files` in random groups, each group's files in random order, the groups in random order.
inline std::vector<std::vector<std::string>> RandomSplit(const std::vector<std::string>& files,
                                                         std::mt19937_64& rng) {
  const size_t n_groups = 1 + rng() % files.size();
  std::vector<std::vector<std::string>> groups(n_groups);
  for (const std::string& f : files) groups[rng() % n_groups].push_back(f);
  std::erase_if(groups, [](const auto& g) { return g.empty(); });
  for (auto& g : groups) std::shuffle(g.begin(), g.end(), rng);
  std::shuffle(groups.begin(), groups.end(), rng);
  return groups;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace libprof::analysis::testing
