// Proves the partial summaries: quantiles from the log-bucketed histogram stay within 1% of the
// exact ones and merge exactly; a partial written and read back is the same partial; combining
// the partials of any split of a set of traces, directly or through a tree of combined partials,
// prints, byte for byte, what `summary` prints over all of them (tables, CSV, JSON, with
// filters, traces of two hosts); and a partial that is damaged, of another version or made with
// other options is refused with its name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "analysis/commands.h"
#include "analysis/metrics/summary.h"
#include "analysis/metrics/summary_partial.h"
#include "analysis/model/log_histogram.h"
#include "analysis/reports/summary_report.h"
#include "tests/analysis/combine_partials.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

uint64_t ExactQuantile(std::vector<uint64_t> values, double q) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

TEST(LogHistogramTest, QuantilesAreWithinOnePercentOfExact) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    // Durations from 1 ns to ~10 s, log-uniform, a different count each time.
    std::vector<uint64_t> values(1 + rng() % 5000);
    for (uint64_t& v : values) {
      v = static_cast<uint64_t>(std::exp(std::uniform_real_distribution<>(0, 23)(rng)));
    }
    Stats stats;
    for (uint64_t v : values) stats.Add(v);
    for (double q : {0.01, 0.5, 0.9, 0.99, 1.0}) {
      const double exact = static_cast<double>(ExactQuantile(values, q));
      const double got = static_cast<double>(stats.Quantile(q));
      EXPECT_LE(std::abs(got - exact), exact * 0.01) << "q=" << q << " n=" << values.size();
    }
  }
}

TEST(LogHistogramTest, MergingSplitsGivesTheSameBucketsAsAddingAll) {
  std::mt19937_64 rng(12);
  Stats all, a, b;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);  // every magnitude, 0 and 2^64-1 included
    all.Add(v);
    (i % 3 == 0 ? a : b).Add(v);
  }
  all.Add(UINT64_MAX);
  b.Add(UINT64_MAX);
  a.Merge(b);
  EXPECT_EQ(a.state().histogram.Buckets(), all.state().histogram.Buckets());
  for (double q : {0.5, 0.9, 0.99}) EXPECT_EQ(a.Quantile(q), all.Quantile(q));
  // Buckets cover every value: the lowest of a bucket maps back to it, and the next bucket
  // starts where it ends.
  for (uint32_t bucket = 0; bucket + 1 < LogHistogram::kBuckets; ++bucket) {
    ASSERT_EQ(LogHistogram::BucketOf(LogHistogram::BucketLow(bucket)), bucket);
    ASSERT_EQ(LogHistogram::BucketLow(bucket) + LogHistogram::BucketWidth(bucket),
              LogHistogram::BucketLow(bucket + 1));
  }
  EXPECT_EQ(LogHistogram::BucketOf(UINT64_MAX), LogHistogram::kBuckets - 1);
}

// Traces of a "job": several ranks on two hosts (two clocks), one of them host-only.
std::vector<std::string> WriteJob(const TempDir& dir) {
  std::vector<std::string> paths;
  for (uint32_t rank = 0; rank < 7; ++rank) {
    TraceBuilder t = rank % 3 == 0 ? Nrm2Scenario() : rank % 3 == 1 ? ThreadsScenario()
                                                                    : StreamsScenario();
    if (rank == 5) t = HostOnlyScenario();
    t.header().pid = 5000 + rank;
    t.header().rank = rank;
    t.header().hostname = rank < 4 ? "node-a" : "node-b";
    // node-a: ranks 0-2 with one wall-clock offset, rank 3 with another (its own measurement).
    t.header().wall_clock_offset_ns = rank < 3 ? 1'000'000 : rank == 3 ? 1'000'500 : 1'700'000 + rank;
    paths.push_back(dir.Path("rank" + std::to_string(rank) + ".pb"));
    t.Write(paths.back(), 512);
  }
  return paths;
}

// `summary` over all files against `combine` over partials of a random split of them.
class CombineTest : public ::testing::Test {
 protected:
  std::string Summary(const std::vector<std::string>& files, const SummaryCommandOptions& base) {
    return RunOver<SummaryCommandOptions>(&RunSummary, files, base);
  }
  // `tree`: the partials are first combined in pairs (combine --partial), then all together.
  std::string Combine(const std::vector<std::vector<std::string>>& groups,
                      const SummaryCommandOptions& base, bool tree = false) {
    return CombineRuns<SummaryCommandOptions>(dir_, &RunSummary, groups, base, tree);
  }
  TempDir dir_;
};

TEST_F(CombineTest, AnySplitPrintsWhatSummaryPrintsOverAllFiles) {
  const std::vector<std::string> files = WriteJob(dir_);
  std::mt19937_64 rng(13);
  std::vector<SummaryCommandOptions> variants(12);
  variants[1].format = OutputFormat::kJson;
  variants[2].format = OutputFormat::kCsv;
  variants[3].raw = true;
  variants[4].filters.from_ns = 50'000;
  variants[4].filters.to_ns = 4'000'000;
  variants[5].filters.pids = {5001, 5004};
  variants[6].filters.nvtx = {"step"};  // only the Threads ranks have it
  variants[7].filters.tids = {101};
  // --findings: each process's findings travel in its partial.
  for (size_t v = 8; v < 12; ++v) variants[v].findings = true;
  variants[9].format = OutputFormat::kJson;
  variants[10].format = OutputFormat::kCsv;
  variants[11].filters.pids = {5000, 5002, 5004};
  for (size_t v = 0; v < variants.size(); ++v) {
    const std::string expected = Summary(files, variants[v]);
    ASSERT_EQ(expected.find("error"), std::string::npos) << v << ": " << expected;
    for (int trial = 0; trial < 6; ++trial) {
      const std::vector<std::vector<std::string>> groups = RandomSplit(files, rng);
      EXPECT_EQ(Combine(groups, variants[v], trial % 2 == 1), expected)
          << "variant " << v << " trial " << trial;
    }
  }
}

TEST_F(CombineTest, FilterErrorsWaitForTheCombination) {
  const std::vector<std::string> files = WriteJob(dir_);
  SummaryCommandOptions pid;
  pid.filters.pids = {5006};  // in the last file only: partials of the others are fine
  EXPECT_EQ(Combine({{files[0]}, {files[6]}}, pid), Summary({files[0], files[6]}, pid));
  SummaryCommandOptions missing;
  missing.filters.pids = {1};
  EXPECT_EQ(Combine({{files[0]}, {files[1]}}, missing),
            "error: no process with pid 1 in the traces");
  SummaryCommandOptions nvtx;
  nvtx.filters.nvtx = {"nope"};
  EXPECT_EQ(Combine({{files[1]}, {files[4]}}, nvtx),
            "error: no NVTX range named 'nope' in the traces");
}

TEST_F(CombineTest, APartialReadBackIsTheSamePartial) {
  const std::vector<std::string> files = WriteJob(dir_);
  auto partial = SummarizeFilesPartial(files, {}, {});
  ASSERT_TRUE(partial) << partial.error();
  const std::string json = SummaryPartialJson(*partial);
  auto parsed = ParseSummaryPartial(json, "p.json");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(SummaryPartialJson(*parsed), json);
  EXPECT_EQ(parsed->state.parts.size(), files.size());
  // Two hosts: only the wall-clock unions can be the answer.
  EXPECT_FALSE(parsed->state.same_clock);
  EXPECT_FALSE(parsed->state.on_shared_clock);
  ASSERT_TRUE(parsed->state.on_wall_clock);
  EXPECT_FALSE(parsed->state.on_wall_clock->device.empty());
  // One file: the unions once, on its own clock, with its wall-clock offset.
  auto one = SummarizeFilesPartial({files[0]}, {}, {});
  ASSERT_TRUE(one);
  EXPECT_TRUE(one->state.on_shared_clock);
  EXPECT_EQ(one->state.uniform_wall_offset, 1'000'000);
  EXPECT_FALSE(one->state.on_wall_clock);
}

TEST_F(CombineTest, BadPartialsAreRefusedWithTheirName) {
  const std::vector<std::string> files = WriteJob(dir_);
  SummaryCommandOptions o;
  o.files = {files[0]};
  o.partial_output = dir_.Path("good.json");
  std::vector<std::string> w;
  ASSERT_TRUE(RunSummary(o, &w));
  const std::string good = Slurp(o.partial_output);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir_.Path(name)) << text;
    return dir_.Path(name);
  };
  std::string other_version = good;
  const std::string version = "\"version\":" + std::to_string(kSummaryPartialVersion);
  other_version.replace(other_version.find(version), version.size(), "\"version\":2");
  // A call count that its histogram does not add up to (keys are written in name order, so a
  // Stats' count follows its buckets).
  std::string bad_stats = good;
  bad_stats.replace(bad_stats.find("],\"count\":"), 10, "],\"count\":9");
  std::string bad_clock = good;  // a shared clock denied, its unions still there
  bad_clock.replace(bad_clock.find("\"same_clock\":true"), 17, "\"same_clock\":false");
  std::string bad_pieces = good;  // union pieces that are not base64 varints
  bad_pieces.replace(bad_pieces.find("\"host\":\"") + 8, 1, "!");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {write("clock.json", bad_clock), "union lists that do not fit its clock"},
      {write("pieces.json", bad_pieces), "an interval list that is not base64"},
      {write("cut.json", good.substr(0, good.size() / 2)), "not a partial summary (not JSON)"},
      {write("trace.json", "{\"traceEvents\": []}"), "not a partial summary"},
      {write("v2.json", other_version),
       "format version 2; this profview reads version " + std::to_string(kSummaryPartialVersion)},
      {write("stats.json", bad_stats), "damaged partial summary"},
      {write("missing.json", "{\"format\":\"libprof-summary-partial\"," + version + "}"),
       "damaged partial summary"},
  };
  for (const auto& [path, message] : cases) {
    CombineCommandOptions c;
    c.files = {o.partial_output, path};
    auto out = RunCombine(c, &w);
    ASSERT_FALSE(out) << path;
    EXPECT_EQ(out.error().rfind(path + ": ", 0), 0u) << out.error();
    EXPECT_NE(out.error().find(message), std::string::npos) << out.error();
  }
  CombineCommandOptions c;
  c.files = {dir_.Path("absent.json")};
  EXPECT_EQ(RunCombine(c, &w).error(), dir_.Path("absent.json") + ": cannot open the partial");
  // Partials made with different options would add up different things.
  SummaryCommandOptions raw = o;
  raw.raw = true;
  raw.files = {files[1]};
  raw.partial_output = dir_.Path("raw.json");
  ASSERT_TRUE(RunSummary(raw, &w));
  c.files = {o.partial_output, raw.partial_output};
  EXPECT_EQ(RunCombine(c, &w).error(),
            raw.partial_output + ": made with other options or filters (--raw, --by, " +
                "--findings, --pid, --tid, --nvtx, --from, --to) than " + o.partial_output);
  // A partial with each process's findings and one without cannot make one rank table.
  SummaryCommandOptions found = raw;
  found.raw = false;
  found.findings = true;
  found.partial_output = dir_.Path("found.json");
  ASSERT_TRUE(RunSummary(found, &w));
  c.files = {o.partial_output, found.partial_output};
  EXPECT_NE(RunCombine(c, &w).error().find(found.partial_output + ": made with other options"),
            std::string::npos);
  c.files = {o.partial_output, o.partial_output};
  EXPECT_EQ(RunCombine(c, &w).error(), files[0] + " is in two partial summaries: " +
                                           o.partial_output + " and " + o.partial_output);
}

TEST(RankTableTest, TheRankThatComputedLongestComesFirst) {
  std::vector<Summary> parts(3);
  for (uint32_t i = 0; i < 3; ++i) {
    parts[i].rank = i;
    parts[i].pid = 100 + i;
    parts[i].trace_ns = 1'000'000;
  }
  parts[0].gpu_busy_ns = 500'000;
  parts[1].gpu_busy_ns = 900'000;  // the straggler
  parts[2].gpu_busy_ns = 500'000;
  SummaryRow sync{.name = "cudaDeviceSynchronize", .kind = "api"};
  sync.stats.Add(400'000);
  parts[0].host.push_back(sync);  // waited longer than rank 2: less of a straggler
  const std::string table = RankTable(parts, 120);
  const size_t r1 = table.find("│ 101 "), r2 = table.find("│ 102 "), r0 = table.find("│ 100 ");
  ASSERT_NE(r0, std::string::npos) << table;
  EXPECT_LT(r1, r2);
  EXPECT_LT(r2, r0);
  EXPECT_NE(table.find("400.0 µs"), std::string::npos) << table;
  EXPECT_EQ(SyncCallNs(parts[0]), 400'000u);
}

// summary --findings puts in each process's row what `profview findings` over that process's
// file alone says: its host headline and its first host group.
TEST_F(CombineTest, SummaryFindingsAreWhatFindingsSaysOfEachProcess) {
  const std::vector<std::string> files = WriteJob(dir_);
  SummaryCommandOptions o;
  o.files = files;
  o.findings = true;
  o.format = OutputFormat::kJson;
  std::vector<std::string> w;
  auto summary = RunSummary(o, &w);
  ASSERT_TRUE(summary) << summary.error();
  const nlohmann::json processes = nlohmann::json::parse(*summary).at("processes");
  ASSERT_EQ(processes.size(), files.size());
  size_t with_top = 0;
  for (const nlohmann::json& p : processes) {
    FindingsCommandOptions f;
    f.files = {p.at("file").get<std::string>()};
    f.format = OutputFormat::kJson;
    auto findings = RunFindings(f, &w);
    ASSERT_TRUE(findings) << findings.error();
    const nlohmann::json expected = nlohmann::json::parse(*findings);
    const nlohmann::json& brief = p.at("findings");
    EXPECT_EQ(brief.at("host_lost_ns"), expected.at("totals").at("host_ns")) << f.files[0];
    uint64_t count = 0;
    const nlohmann::json* top = nullptr;
    for (const nlohmann::json& g : expected.at("findings")) {
      count += g.at("count").get<uint64_t>();
      if (top == nullptr && g.at("time_kind") == "host") top = &g;
    }
    EXPECT_EQ(brief.at("count").get<uint64_t>(), count) << f.files[0];
    if (top == nullptr) continue;
    ++with_top;
    EXPECT_EQ(brief.at("top").at("rule"), top->at("rule")) << f.files[0];
    EXPECT_EQ(brief.at("top").at("api"), top->at("api")) << f.files[0];
    EXPECT_EQ(brief.at("top").at("total_blocked_ns"), top->at("total_blocked_ns")) << f.files[0];
    EXPECT_EQ(brief.at("top").at("count"), top->at("count")) << f.files[0];
  }
  EXPECT_GE(with_top, 4u);  // the Nrm2 and Threads ranks wait on the GPU
  // The table: the findings' columns instead of the sync-call time and top API.
  o.format = OutputFormat::kTable;
  o.terminal_width = 200;
  auto table = RunSummary(o, &w);
  ASSERT_TRUE(table) << table.error();
  EXPECT_NE(table->find("Host time lost"), std::string::npos) << *table;
  EXPECT_NE(table->find("│ blocked-on-prior-work │ cudaMemcpyAsync → worker(float*, int) "),
            std::string::npos)
      << *table;
  EXPECT_EQ(table->find("In sync calls"), std::string::npos) << *table;
}

TEST(RankTableTest, WithFindingsTheRankThatLostLeastComesFirstAmongEquals) {
  std::vector<Summary> parts(3);
  for (uint32_t i = 0; i < 3; ++i) {
    parts[i].rank = i;
    parts[i].pid = 100 + i;
    parts[i].trace_ns = 1'000'000;
    parts[i].gpu_busy_ns = 500'000;
    parts[i].findings = ProcessFindings{.host_lost_ns = 300'000 - 100'000 * i};
  }
  parts[1].findings->top_rule = "sync-api";
  parts[1].findings->top_api = "cudaDeviceSynchronize";
  parts[1].findings->top_waiting_for = "step_kernel";
  parts[1].findings->top_time_lost_ns = 200'000;
  const std::string table = RankTable(parts, 160);
  const size_t r2 = table.find("│ 102 "), r1 = table.find("│ 101 "), r0 = table.find("│ 100 ");
  ASSERT_NE(r0, std::string::npos) << table;
  EXPECT_LT(r2, r1);
  EXPECT_LT(r1, r0);
  const size_t row1 = table.find("│ 101 ");
  const std::string line1 = table.substr(row1, table.find('\n', row1) - row1);
  EXPECT_NE(line1.find("│ sync-api "), std::string::npos) << table;
  EXPECT_NE(line1.find("│ cudaDeviceSynchronize → step_kernel "), std::string::npos) << table;
  EXPECT_NE(line1.find("│ 500.0 µs (50.00%) │"), std::string::npos) << table;
  // One process without findings (an old partial, say): the table falls back to sync calls.
  parts[2].findings.reset();
  EXPECT_NE(RankTable(parts, 160).find("In sync calls"), std::string::npos);
}

}  // namespace
}  // namespace libprof::analysis::testing
