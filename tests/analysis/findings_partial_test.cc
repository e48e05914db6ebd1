// Proves the partial findings: combining the partials of any split of a set of traces, directly
// or through a tree of combined partials, prints, byte for byte, what `findings` prints over all
// of them (tables, CSV, JSON, thresholds, filters, the cross-rank late-rank rule, recorded
// traces, equal findings in several processes); a partial written and read back is the same
// partial; and a partial that is damaged, of another version or kind, or made with other
// thresholds is refused with its name.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "analysis/commands.h"
#include "analysis/rules/findings_partial.h"
#include "tests/analysis/combine_partials.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

// A job whose processes between them trip every family of rules: host waits (twice the same,
// in two processes, so that which process's finding is the worst depends on their order), GPU
// idle, launch-bound, overlap, start-up, call sites, unified memory, pools, and four ranks of an
// NCCL job (late-rank, computed only once every rank is in), two processes on one GPU
// (shared-gpu, likewise); then some recorded traces.
std::vector<std::string> WriteJob(const TempDir& dir) {
  std::vector<TraceBuilder> traces;
  for (auto* make : {&Nrm2Scenario, &Nrm2Scenario, &IdleScenario, &LaunchBoundScenario,
                     &OverlapScenario, &StartUpScenario, &CallSitesScenario, &UnifiedMemoryScenario,
                     &MemoryPoolScenario, &TwoWayCopiesScenario}) {
    traces.push_back(make());
  }
  for (TraceBuilder& rank : LateRankScenario()) traces.push_back(std::move(rank));
  for (TraceBuilder& p : SharedGpuScenario()) traces.push_back(std::move(p));
  std::vector<std::string> paths;
  for (size_t i = 0; i < traces.size(); ++i) {
    traces[i].header().pid = 7000 + static_cast<uint32_t>(i);
    paths.push_back(dir.Path("p" + std::to_string(i) + ".pb"));
    traces[i].Write(paths.back(), 512);
  }
  for (const char* recorded : {"normalize_nrm2.pb", "alloc_loop.pb", "torch_item_loop.pb"}) {
    paths.push_back(std::string(LIBPROF_SAMPLE_TRACES) + "/" + recorded);
  }
  std::sort(paths.begin(), paths.end());  // `findings` over them in name order, as a glob
  return paths;
}

class FindingsCombineTest : public ::testing::Test {
 protected:
  std::string Findings(const std::vector<std::string>& files, const FindingsCommandOptions& base) {
    return RunOver<FindingsCommandOptions>(&RunFindings, files, base);
  }
  // `tree`: the partials are first combined in pairs (combine --partial), then all together.
  std::string Combine(const std::vector<std::vector<std::string>>& groups,
                      const FindingsCommandOptions& base, bool tree = false) {
    return CombineRuns<FindingsCommandOptions>(dir_, &RunFindings, groups, base, tree);
  }
  TempDir dir_;
};

TEST_F(FindingsCombineTest, AnySplitPrintsWhatFindingsPrintsOverAllFiles) {
  const std::vector<std::string> files = WriteJob(dir_);
  std::mt19937_64 rng(17);
  std::vector<FindingsCommandOptions> variants(6);
  variants[1].format = OutputFormat::kJson;
  variants[2].format = OutputFormat::kCsv;
  variants[3].thresholds.min_wait_ns = 100'000;
  variants[3].thresholds.util_chunks = 7;
  variants[4].filters.pids = {7000, 7001, 7006};
  variants[5].call_sites.framework_paths = {"/nothing/"};
  variants[5].format = OutputFormat::kJson;
  for (size_t v = 0; v < variants.size(); ++v) {
    const std::string expected = Findings(files, variants[v]);
    ASSERT_EQ(expected.find("error"), std::string::npos) << v << ": " << expected;
    if (v == 0) {
      // What the job is there for: the cross-process rules and a finding in two processes.
      EXPECT_NE(expected.find("late-rank"), std::string::npos);
      EXPECT_NE(expected.find("shared-gpu: processes"), std::string::npos);
      EXPECT_NE(expected.find("blocked-on-prior-work"), std::string::npos);
    }
    for (int trial = 0; trial < 5; ++trial) {
      const std::vector<std::vector<std::string>> groups = RandomSplit(files, rng);
      EXPECT_EQ(Combine(groups, variants[v], trial % 2 == 1), expected)
          << "variant " << v << " trial " << trial << ", " << groups.size() << " groups";
    }
  }
}

TEST_F(FindingsCombineTest, TheWorstOfEqualFindingsIsTheFirstProcessInNameOrder) {
  const std::vector<std::string> files = WriteJob(dir_);
  // p0 and p1 hold the same findings (pids 7000 and 7001): grouped, the worst shown is p0's
  // whichever partial came first.
  FindingsCommandOptions json;
  json.format = OutputFormat::kJson;
  const std::string p0 = dir_.Path("p0.pb"), p1 = dir_.Path("p1.pb");
  const std::string combined = Combine({{p1}, {p0}}, json);
  EXPECT_EQ(combined, Findings({p0, p1}, json));
  EXPECT_NE(combined.find("\"pid\": 7000"), std::string::npos);
  EXPECT_EQ(combined.find("\"pid\": 7001"), std::string::npos) << combined;
}

TEST_F(FindingsCombineTest, FilterErrorsWaitForTheCombination) {
  const std::vector<std::string> files = WriteJob(dir_);
  FindingsCommandOptions pid;
  pid.filters.pids = {7001};  // in one file only: the partial of another is fine
  EXPECT_EQ(Combine({{dir_.Path("p0.pb")}, {dir_.Path("p1.pb")}}, pid),
            Findings({dir_.Path("p0.pb"), dir_.Path("p1.pb")}, pid));
  FindingsCommandOptions missing;
  missing.filters.pids = {1};
  EXPECT_EQ(Combine({{dir_.Path("p0.pb")}, {dir_.Path("p1.pb")}}, missing),
            "error: no process with pid 1 in the traces");
}

TEST_F(FindingsCombineTest, APartialReadBackIsTheSamePartial) {
  const std::vector<std::string> files = WriteJob(dir_);
  auto partial = FindFindingsPartial(files, {}, {});
  ASSERT_TRUE(partial) << partial.error();
  const std::string json = FindingsPartialJson(*partial);
  auto parsed = ParseFindingsPartial(json, "p.json");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(FindingsPartialJson(*parsed), json);
  EXPECT_EQ(parsed->processes.size(), files.size());
  EXPECT_EQ(parsed->collectives.size(), 4u);  // the four ranks, for the late-rank rule
  EXPECT_FALSE(parsed->digest.groups.empty());
}

TEST_F(FindingsCombineTest, BadPartialsAreRefusedWithTheirName) {
  const std::vector<std::string> files = WriteJob(dir_);
  FindingsCommandOptions o;
  o.files = {dir_.Path("p0.pb")};
  o.partial_output = dir_.Path("good.json");
  std::vector<std::string> w;
  ASSERT_TRUE(RunFindings(o, &w));
  const std::string good = Slurp(o.partial_output);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir_.Path(name)) << text;
    return dir_.Path(name);
  };
  auto replaced = [&](std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };
  SummaryCommandOptions summary;
  summary.files = {dir_.Path("p1.pb")};
  summary.partial_output = dir_.Path("summary.json");
  ASSERT_TRUE(RunSummary(summary, &w));
  const std::string version = std::to_string(kFindingsPartialVersion);
  const std::string newer = std::to_string(kFindingsPartialVersion + 1);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {write("cut.json", good.substr(0, good.size() / 2)), "not partial findings"},
      {write("newer.json", replaced(good, "\"version\":" + version, "\"version\":" + newer)),
       "format version " + newer + "; this profview reads version " + version},
      {write("rule.json", replaced(good, "\"rule\":\"blocked-on-prior-work\"", "\"rule\":\"nope\"")),
       "unknown rule \"nope\""},
      {write("process.json", replaced(good, "\"order\":[1,", "\"order\":[9,")),
       "a finding of a process it does not list"},
      {write("missing.json",
             "{\"format\":\"libprof-findings-partial\",\"version\":" + version + "}"),
       "damaged findings partial"},
      {summary.partial_output, "not partial findings, as " + o.partial_output + " is"},
  };
  for (const auto& [path, message] : cases) {
    CombineCommandOptions c;
    c.files = {o.partial_output, path};
    auto out = RunCombine(c, &w);
    ASSERT_FALSE(out) << path;
    EXPECT_EQ(out.error().rfind(path + ": ", 0), 0u) << out.error();
    EXPECT_NE(out.error().find(message), std::string::npos) << out.error();
  }
  // Partials made with other thresholds would group other findings.
  FindingsCommandOptions longer = o;
  longer.thresholds.min_wait_ns = 1'000'000;
  longer.files = {dir_.Path("p1.pb")};
  longer.partial_output = dir_.Path("longer.json");
  ASSERT_TRUE(RunFindings(longer, &w));
  CombineCommandOptions c;
  c.files = {o.partial_output, longer.partial_output};
  auto out = RunCombine(c, &w);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().find("made with other thresholds"), std::string::npos) << out.error();
  // The same trace in two partials would count twice.
  c.files = {o.partial_output, o.partial_output};
  out = RunCombine(c, &w);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().find("is in two findings partials"), std::string::npos) << out.error();
}

}  // namespace
}  // namespace libprof::analysis::testing
