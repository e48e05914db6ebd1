// Proves that the rule registry is the one list of findings rules: viewer-cli/USAGE.md's rules
// table names exactly the registered rules, each with its family and its --help line, and every
// field a rule's findings carry is documented; and that the findings the rules produce (on the
// synthetic scenarios and the recorded fixtures) hold the details their registry entry names
// and render no field it does not list.
#include "analysis/rules/rule_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/metrics/rank_skew.h"
#include "analysis/model/collectives.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"
#include "analysis/rules/findings.h"
#include "analysis/rules/rank_rules.h"
#include "analysis/rules/rule_details.h"
#include "analysis/rules/shared_gpu_rules.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

std::string ReadUsage() {
  std::ifstream in(LIBPROF_USAGE_MD);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text of the `profview findings` section (up to the next "### " heading).
std::string FindingsSection(const std::string& usage) {
  const size_t start = usage.find("### `profview findings`");
  if (start == std::string::npos) return "";
  const size_t end = usage.find("\n### ", start + 1);
  return usage.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string Trim(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

std::string WithoutBackticks(std::string s) {
  std::erase(s, '`');
  return s;
}

struct UsageRow {
  std::string family;
  std::string reports;
};

// The rows of the table after "Rules (their ids are an interface):", by rule id: the cells
// `id` | family | reports | time lost.
std::map<std::string, UsageRow> RulesTable(const std::string& section) {
  std::map<std::string, UsageRow> rows;
  const size_t start = section.find("Rules (their ids are an interface):");
  if (start == std::string::npos) return rows;
  std::istringstream lines(section.substr(start));
  std::string line;
  std::getline(lines, line);  // the sentence
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.empty() && !in_table) continue;
    if (line.rfind("|", 0) != 0) break;
    in_table = true;
    if (line.rfind("| `", 0) != 0) continue;  // header and separator
    std::vector<std::string> cells;
    std::stringstream cell_stream(line.substr(1));
    std::string cell;
    while (std::getline(cell_stream, cell, '|')) cells.push_back(Trim(cell));
    EXPECT_GE(cells.size(), 3u) << line;
    if (cells.size() < 3) continue;
    const std::string id = WithoutBackticks(cells[0]);
    EXPECT_FALSE(rows.contains(id)) << "USAGE.md lists " << id << " twice";
    rows[id] = {cells[1], WithoutBackticks(cells[2])};
  }
  return rows;
}

TEST(RuleRegistryTest, UsageRulesTableMatchesTheRegistry) {
  const std::string section = FindingsSection(ReadUsage());
  ASSERT_FALSE(section.empty()) << "no `profview findings` section in " << LIBPROF_USAGE_MD;
  const std::map<std::string, UsageRow> rows = RulesTable(section);
  ASSERT_FALSE(rows.empty()) << "no rules table in the findings section";
  std::set<std::string> registered;
  for (const RuleInfo& rule : Rules()) {
    const std::string id(rule.id);
    registered.insert(id);
    const auto row = rows.find(id);
    if (row == rows.end()) {
      ADD_FAILURE() << "USAGE.md's rules table lacks the registered rule " << id;
      continue;
    }
    EXPECT_EQ(row->second.family, ToString(rule.family)) << id;
    EXPECT_EQ(row->second.reports.rfind(rule.help, 0), 0u)
        << id
        << ": the reports cell must start with the rule's help line\n  registry: " << rule.help
        << "\n  USAGE.md: " << row->second.reports;
    for (std::string_view field : rule.fields) {
      EXPECT_NE(section.find("`" + std::string(field) + "`"), std::string::npos)
          << id << "'s field " << field << " is not documented in USAGE.md";
    }
  }
  for (const auto& [id, row] : rows) {
    EXPECT_TRUE(registered.contains(id)) << "USAGE.md names the unregistered rule " << id;
  }
}

TEST(RuleRegistryTest, IdsAreUniqueAndHelpListsEachRule) {
  std::set<std::string_view> ids;
  const std::string help = RulesHelp();
  for (const RuleInfo& rule : Rules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id;
    EXPECT_EQ(&Rule(rule.rule), &rule);
    EXPECT_NE(help.find("  " + std::string(rule.id) + " "), std::string::npos) << rule.id;
    EXPECT_NE(help.find(rule.help), std::string::npos) << rule.id;
    EXPECT_LT(rule.details, std::variant_size_v<FindingDetails>) << rule.id;
    EXPECT_NE(rule.pass, nullptr) << rule.id;
  }
}

// Every finding of `trace` holds its rule's details and renders only fields its entry lists.
void CheckFindings(const ProcessTrace& trace, std::set<RuleId>* seen) {
  for (const Finding& f : FindFindings(trace, {})) {
    const RuleInfo& rule = Rule(f.rule);
    seen->insert(f.rule);
    EXPECT_EQ(f.details.index(), rule.details) << rule.id;
    DetailFields(f.details, [&](std::string_view key, const auto&, FieldUse) {
      EXPECT_NE(std::find(rule.fields.begin(), rule.fields.end(), key), rule.fields.end())
          << rule.id << " renders " << key << ", which its registry entry does not list";
    });
  }
}

TEST(RuleRegistryTest, FindingsHoldTheDetailsTheirEntryNames) {
  TempDir dir;
  std::set<RuleId> seen;
  int n = 0;
  for (const TraceBuilder& b :
       {Nrm2Scenario(), StreamsScenario(), ThreadsScenario(), IdleScenario(), LaunchBoundScenario(),
        OverlapScenario(), CallSitesScenario(), UnifiedMemoryScenario(), StagedPeerCopyScenario(),
        HostFunctionScenario(), GraphRebuildScenario(12, 1, true), TwoWayCopiesScenario()}) {
    CheckFindings(b.RoundTrip(dir.Path(std::to_string(n++) + ".pb")), &seen);
  }
  for (const auto& entry : std::filesystem::directory_iterator(LIBPROF_SAMPLE_TRACES)) {
    if (entry.path().extension() != ".pb") continue;
    std::vector<std::string> warnings;
    auto traces = LoadTraceFile(entry.path().string(), &warnings);
    ASSERT_TRUE(traces.has_value()) << traces.error();
    for (const ProcessTrace& t : *traces) CheckFindings(t, &seen);
  }
  // The cross-process rules, over the ranks of a job.
  std::vector<ProcessCollectives> ranks;
  std::vector<ProcessTrace> traces;
  for (const TraceBuilder& b : LateRankScenario()) traces.push_back(b.Build());
  for (const ProcessTrace& t : traces) ranks.push_back(ExtractCollectives(TraceIndex(t)));
  std::vector<Finding> cross = FindLateRanks(ranks, AnalyzeRankSkew(ranks, 20'000), {});
  std::vector<ProcessGpuUse> gpu_use;  // and processes on one GPU
  for (const TraceBuilder& b : SharedGpuScenario()) gpu_use.push_back(MeasureGpuUse(b.Build()));
  for (Finding& f : FindSharedGpus(gpu_use, {})) cross.push_back(std::move(f));
  for (const Finding& f : cross) {
    const RuleInfo& rule = Rule(f.rule);
    EXPECT_TRUE(rule.cross_rank) << rule.id;
    seen.insert(f.rule);
    EXPECT_EQ(f.details.index(), rule.details) << rule.id;
    DetailFields(f.details, [&](std::string_view key, const auto&, FieldUse) {
      EXPECT_NE(std::find(rule.fields.begin(), rule.fields.end(), key), rule.fields.end())
          << rule.id << " renders " << key << ", which its registry entry does not list";
    });
  }
  // Each rule fires somewhere, so the check above covered it.
  for (const RuleInfo& rule : Rules()) EXPECT_TRUE(seen.contains(rule.rule)) << rule.id;
}

}  // namespace
}  // namespace libprof::analysis::testing
