// Proves profview diff's parts: processes pair by rank, else by order; a change counts only
// beyond the threshold, the runs' own spread and the floor; per-iteration figures divide by the
// iterations, so a longer run of the same steps is not slower; rows in one run only are new or
// gone; iteration ranges are found from NVTX (top level, most repeated, quantiles); findings
// are keyed by rule and what they are about; the command's bad inputs are clear errors.
#include "analysis/metrics/run_diff.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/commands.h"
#include "analysis/metrics/iterations.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/units.h"
#include "analysis/rules/findings_diff.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

using Pairs = std::vector<std::pair<std::optional<size_t>, std::optional<size_t>>>;

RangeInstances Steps(std::vector<uint64_t> durations) {
  RangeInstances r;
  r.name = "step";
  r.durations_ns = std::move(durations);
  r.processes = 1;
  return r;
}

TEST(PairProcessesTest, ByRankWhenEveryProcessCarriesOne) {
  bool by_rank = false;
  const Pairs pairs = PairProcesses({2u, 0u, 1u}, {0u, 1u, 3u}, &by_rank);
  EXPECT_TRUE(by_rank);
  // Rank 2 has no partner; rank 3 of the new run is left over.
  EXPECT_EQ(pairs, (Pairs{{0, std::nullopt}, {1, 0}, {2, 1}, {std::nullopt, 2}}));
}

TEST(PairProcessesTest, ByOrderWhenAnyProcessLacksARank) {
  bool by_rank = true;
  const Pairs pairs = PairProcesses({1u, std::nullopt}, {0u, 1u, 2u}, &by_rank);
  EXPECT_FALSE(by_rank);
  EXPECT_EQ(pairs, (Pairs{{0, 0}, {1, 1}, {std::nullopt, 2}}));
}

TEST(CompareTest, NoiseIsTheLargestOfThresholdSpreadsAndFloor) {
  // 5% of 100 = 5: a change of 6 counts, one of 4 does not.
  EXPECT_TRUE(Compare(100, 106, 0, 0, 0.05).significant);
  EXPECT_FALSE(Compare(100, 104, 0, 0, 0.05).significant);
  // The new run's spread of 10 hides a change of 8; the floor of 20 hides one of 15.
  EXPECT_FALSE(Compare(100, 108, 1, 10, 0.05).significant);
  EXPECT_EQ(Compare(100, 108, 1, 10, 0.05).noise, 10);
  EXPECT_FALSE(Compare(100, 115, 0, 0, 0.05, 20).significant);
  // From zero: any change beyond the floor counts; relative() is unknown.
  const Change c = Compare(0, 3, 0, 0, 0.05);
  EXPECT_TRUE(c.significant);
  EXPECT_FALSE(c.relative().has_value());
  EXPECT_DOUBLE_EQ(*Compare(200, 150, 0, 0, 0).relative(), -0.25);
}

SummaryRow Row(const std::string& kind, const std::string& name, std::vector<uint64_t> values) {
  SummaryRow r;
  r.kind = kind;
  r.name = name;
  for (uint64_t v : values) r.stats.Add(v);
  return r;
}

SummaryReport Report(uint64_t trace_ns, std::vector<SummaryRow> host,
                     std::vector<SummaryRow> device = {}) {
  SummaryReport r;
  r.total.trace_ns = trace_ns;
  r.total.host = std::move(host);
  r.total.device = std::move(device);
  SortSummaryRows(&r.total.host);
  SortSummaryRows(&r.total.device);
  r.parts = {r.total};
  return r;
}

const RowDiff& Find(const std::vector<RowDiff>& rows, const std::string& name) {
  for (const RowDiff& r : rows) {
    if (r.name == name) return r;
  }
  ADD_FAILURE() << "no row " << name;
  return rows.front();
}

TEST(CompareRunsTest, RowsAreJudgedAgainstTheirCallsSpread) {
  // cudaMalloc: one call each, 1000 -> 2000 ns: no spread, the change counts. The launches: 4
  // calls of 100 ± ~58 ns each (std of {0, 100, 100, 200} is 81.6): a total moving by 100 ns is
  // within 81.6 x sqrt(4) = 163 ns. cudaFree: only in the base run; cudaMemset only in the new.
  const SummaryReport base =
      Report(1'000'000, {Row("api", "cudaMalloc", {1000}), Row("api", "cudaLaunchKernel", {0, 100, 100, 200}),
                         Row("api", "cudaFree", {500})});
  const SummaryReport next =
      Report(1'000'000, {Row("api", "cudaMalloc", {2000}), Row("api", "cudaLaunchKernel", {0, 100, 100, 300}),
                         Row("api", "cudaMemset", {700})});
  const RunComparison diff = CompareRuns(base, next, nullptr, nullptr, DiffOptions{.min_share = 0});
  EXPECT_EQ(diff.common_names, 2u);
  EXPECT_EQ(Find(diff.host, "cudaMalloc").status, DiffStatus::kSlower);
  const RowDiff& launch = Find(diff.host, "cudaLaunchKernel");
  EXPECT_EQ(launch.status, DiffStatus::kWithinNoise);
  // The new run's spread: std of {0, 100, 100, 300} (125.83 ns) x sqrt(4 calls).
  EXPECT_NEAR(launch.total.noise, 251.661, 0.001);
  EXPECT_EQ(Find(diff.host, "cudaFree").status, DiffStatus::kDisappeared);
  EXPECT_EQ(Find(diff.host, "cudaMemset").status, DiffStatus::kAppeared);
  // Significant changes first, biggest first; the noisy launch row last.
  EXPECT_EQ(diff.host.back().name, "cudaLaunchKernel");
  EXPECT_EQ(diff.host.front().name, "cudaMalloc");
  EXPECT_EQ(diff.paired_by, "order");
}

TEST(CompareRunsTest, TheFloorHidesChangesTooSmallToMatter) {
  // 0.1% of a 1 ms run is 1 µs: a single call moving by 500 ns is noise, by 2 µs it is not.
  const SummaryReport base = Report(1'000'000, {Row("api", "a", {1000}), Row("api", "b", {1000})});
  const SummaryReport next = Report(1'000'000, {Row("api", "a", {1500}), Row("api", "b", {3000})});
  const RunComparison diff = CompareRuns(base, next, nullptr, nullptr, DiffOptions{});
  EXPECT_DOUBLE_EQ(diff.floor_ns, 1000);
  EXPECT_EQ(Find(diff.host, "a").status, DiffStatus::kWithinNoise);
  EXPECT_EQ(Find(diff.host, "b").status, DiffStatus::kSlower);
}

TEST(CompareRunsTest, PerIterationFiguresDivideByTheIterations) {
  // Twice the steps, each the same: per run the kernel total doubles, per iteration it does not.
  std::vector<uint64_t> ten(10, 1000), twenty(20, 1000);
  const SummaryReport base = Report(10'000, {}, {Row("kernel", "k", ten)});
  const SummaryReport next = Report(20'000, {}, {Row("kernel", "k", twenty)});
  EXPECT_EQ(Find(CompareRuns(base, next, nullptr, nullptr, {}).device, "k").status,
            DiffStatus::kSlower);
  RangeInstances steps_base = Steps(ten);
  RangeInstances steps_next = Steps(twenty);
  const RunComparison diff = CompareRuns(base, next, &steps_base, &steps_next, {});
  const RowDiff& k = Find(diff.device, "k");
  EXPECT_EQ(k.status, DiffStatus::kWithinNoise);
  EXPECT_DOUBLE_EQ(k.total.base, 1000);
  EXPECT_DOUBLE_EQ(k.total.next, 1000);
  EXPECT_DOUBLE_EQ(k.calls.next, 1);
  ASSERT_EQ(diff.headline.front().id, "iteration");
  EXPECT_FALSE(diff.headline.front().change.significant);
}

TEST(CompareRunsTest, MeansOfOneCallAreNeverJudged) {
  const SummaryReport base = Report(1'000'000, {Row("api", "a", {1000}), Row("api", "b", {10, 12})});
  const SummaryReport next = Report(1'000'000, {Row("api", "a", {5000}), Row("api", "b", {20, 22})});
  const RunComparison diff = CompareRuns(base, next, nullptr, nullptr, {});
  EXPECT_FALSE(Find(diff.host, "a").mean.significant);
  EXPECT_TRUE(Find(diff.host, "b").mean.significant);  // 11 -> 21, std 1.4
}

// A copy row of `bytes` per call, and the Summary::copies entry that names it.
SummaryRow Copy(MemoryKind src, MemoryKind dst, CopyKind kind, std::vector<uint64_t> values,
                uint64_t bytes, std::vector<CopyRow>* copies) {
  SummaryRow r = Row("memcpy", TraceIndex::CopyName(src, dst, kind), values);
  r.has_bytes = true;
  r.bytes = bytes * values.size();
  copies->push_back({.copy_kind = kind, .src_kind = src, .dst_kind = dst});
  return r;
}

TEST(CompareRunsTest, CopiesThatChangedMemoryKindArePairedByDirection) {
  // HtoD moved from pageable to pinned memory (one row gone, one new: paired, faster). DtoH had
  // two rows gone and one new: which one moved is unknown, so they stay apart.
  using enum MemoryKind;
  SummaryReport base = Report(1'000'000, {});
  SummaryReport next = Report(1'000'000, {});
  base.total.device = {
      Copy(kPageable, kDevice, CopyKind::kHtoD, {900, 900}, 1000, &base.total.copies),
      Copy(kDevice, kPageable, CopyKind::kDtoH, {500}, 1000, &base.total.copies),
      Copy(kDevice, kManaged, CopyKind::kDtoH, {500}, 1000, &base.total.copies)};
  next.total.device = {
      Copy(kPinned, kDevice, CopyKind::kHtoD, {100, 100}, 1000, &next.total.copies),
      Copy(kDevice, kPinned, CopyKind::kDtoH, {100}, 1000, &next.total.copies)};
  const RunComparison diff =
      CompareRuns(base, next, nullptr, nullptr, DiffOptions{.min_share = 0});
  const RowDiff& htod = Find(diff.device, "[copy pageable → pinned to device]");
  EXPECT_EQ(htod.status, DiffStatus::kFaster);
  EXPECT_EQ(htod.base_name, "[copy pageable to device memory]");
  EXPECT_EQ(htod.next_name, "[copy pinned to device memory]");
  EXPECT_DOUBLE_EQ(htod.total.base, 1800);
  EXPECT_DOUBLE_EQ(htod.total.next, 200);
  EXPECT_EQ(Find(diff.device, "[copy device to pageable memory]").status,
            DiffStatus::kDisappeared);
  EXPECT_EQ(Find(diff.device, "[copy device to pinned memory]").status, DiffStatus::kAppeared);
  EXPECT_EQ(diff.device.size(), 4u);
  EXPECT_EQ(diff.common_names, 0u);  // a pairing is not a name in common
}

TEST(CompareRunsTest, ApiTimeVariesAsItsRowsDoTogether) {
  // The context creation (100 µs) moves from cudaMalloc to the first cudaHostAlloc. CUDA API
  // time grows by 10 µs: within the spread of the new run's rows together (cudaHostAlloc's
  // {100000, 10000}: std 63640 x sqrt(2 calls) = 90000), where the 5% threshold alone (5.5 µs)
  // would call it slower.
  SummaryReport base = Report(1'000'000, {Row("api", "cudaMalloc", {100'000}),
                                          Row("api", "cudaLaunchKernel", {10'000})});
  SummaryReport next = Report(1'000'000, {Row("api", "cudaMalloc", {10'000}),
                                          Row("api", "cudaHostAlloc", {100'000, 10'000})});
  base.total.host_api_ns = 110'000;
  next.total.host_api_ns = 120'000;
  const RunComparison diff = CompareRuns(base, next, nullptr, nullptr, DiffOptions{});
  ASSERT_EQ(diff.headline[1].id, "host_api");
  EXPECT_FALSE(diff.headline[1].change.significant);
  EXPECT_NEAR(diff.headline[1].change.noise, 90'000, 1);
  // Without the rows' spread the threshold decides, as before.
  SummaryReport quiet = Report(1'000'000, {Row("api", "cudaLaunchKernel", {110'000})});
  quiet.total.host_api_ns = 110'000;
  const RunComparison steady = CompareRuns(quiet, next, nullptr, nullptr, DiffOptions{});
  EXPECT_NEAR(steady.headline[1].change.noise, 90'000, 1);  // the new run's rows still count
  const RunComparison same = CompareRuns(quiet, quiet, nullptr, nullptr, DiffOptions{});
  EXPECT_DOUBLE_EQ(same.headline[1].change.noise, 5'500);
}

TEST(IterationsTest, QuantilesInterpolate) {
  RangeInstances r = Steps({10, 20, 30, 40, 1000});
  EXPECT_DOUBLE_EQ(r.Median(), 30);
  EXPECT_DOUBLE_EQ(r.Quantile(0.25), 20);
  EXPECT_DOUBLE_EQ(r.Quantile(0.75), 40);
  EXPECT_DOUBLE_EQ(r.Spread(), 20);  // the slow first step does not widen it
  EXPECT_DOUBLE_EQ(RangeInstances{}.Median(), 0);
}

TEST(IterationsTest, TheMostRepeatedTopLevelRangeIsTheIteration) {
  TempDir dir;
  TrainingStepsScenario(4, false).Write(dir.Path("a.pb"), 512);
  TrainingStepsScenario(6, false).Write(dir.Path("b.pb"), 512);
  auto a = ReadRunRanges({dir.Path("a.pb")}, "");
  auto b = ReadRunRanges({dir.Path("b.pb")}, "forward");
  ASSERT_TRUE(a && b);
  // "forward" (nested) is not top level; "step" is, 4 and 6 times.
  EXPECT_EQ(a->top_level.count({"", "forward"}), 0u);
  const RangeInstances* step = CommonIterationRange(*a, *b);
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->Label(), "step");
  EXPECT_EQ(step->durations_ns, std::vector<uint64_t>(4, 990'000));
  // Asked for by name, a nested range counts too.
  EXPECT_TRUE(b->wanted_found);
  EXPECT_EQ(b->wanted.durations_ns.size(), 6u);
  EXPECT_EQ(b->wanted.PerProcess(), 6);
}

TEST(IterationsTest, LeadingIterationsOverThreeTimesTheMedianAreWarmUp) {
  TempDir dir;
  WarmUpStepsScenario(6, 20000).Write(dir.Path("a.pb"));
  auto a = ReadRunRanges({dir.Path("a.pb")}, "");
  ASSERT_TRUE(a);
  const RangeInstances& step = a->top_level.at({"", "step"});
  ASSERT_EQ(step.in_order.size(), 6u);
  EXPECT_EQ(step.in_order[0].start_ns, 100'000u);  // from the header's recording start
  EXPECT_EQ(step.in_order[0].duration_ns, 20'000'000u);
  EXPECT_EQ(LeadingWarmUp(step), 1u);
  uint64_t from_ns = 0;
  const RangeInstances kept = WithoutLeading(step, 1, &from_ns);
  EXPECT_EQ(from_ns, 20'110'000u);
  EXPECT_EQ(kept.durations_ns, std::vector<uint64_t>(5, 990'000));
  EXPECT_EQ(kept.in_order.size(), 5u);

  auto steps = [](std::vector<uint64_t> in_order) {
    RangeInstances r;
    for (uint64_t ns : in_order) r.in_order.push_back({ns, ns});
    r.durations_ns = std::move(in_order);
    std::sort(r.durations_ns.begin(), r.durations_ns.end());
    r.processes = 1;
    return r;
  };
  EXPECT_EQ(LeadingWarmUp(steps({50, 40, 10, 11, 12, 10, 9})), 2u);
  EXPECT_EQ(LeadingWarmUp(steps({10, 50, 11, 12})), 0u);     // only leading ones
  EXPECT_EQ(LeadingWarmUp(steps({50, 40, 60, 10, 11})), 0u);  // more than half
  EXPECT_EQ(LeadingWarmUp(steps({50, 10, 11})), 0u);          // fewer than 3 left
  RangeInstances two_processes = steps({50, 10, 11, 12, 10});
  two_processes.processes = 2;
  EXPECT_EQ(LeadingWarmUp(two_processes), 0u);
  RangeInstances no_start = steps({50, 10, 11, 12, 10});
  no_start.in_order.clear();  // (no recording start in the header)
  EXPECT_EQ(LeadingWarmUp(no_start), 0u);
}

TEST(RunDiffCommandTest, WarmUpIterationsAreLeftOutUnlessKept) {
  TempDir dir;
  WarmUpStepsScenario(6, 20000).Write(dir.Path("warm.pb"));
  WarmUpStepsScenario(6, 990).Write(dir.Path("plain.pb"));
  std::vector<std::string> warnings;
  DiffCommandOptions o;
  o.base = {dir.Path("warm.pb")};
  o.next = {dir.Path("plain.pb")};
  o.findings = false;
  auto table = RunDiff(o, &warnings);
  ASSERT_TRUE(table) << table.error();
  EXPECT_NE(table->find("base 5, new 6 iterations"), std::string::npos) << *table;
  EXPECT_NE(table->find("Warm-up left out of the base run: its first iteration (20.0 ms) took "
                        "over 3.0x the median"),
            std::string::npos)
      << *table;
  // The warm-up's kernel and module load are not per-iteration figures of the base run.
  EXPECT_EQ(table->find("autotune"), std::string::npos) << *table;
  EXPECT_EQ(table->find("cuLibraryLoadData"), std::string::npos) << *table;
  o.format = OutputFormat::kJson;
  auto json = RunDiff(o, &warnings);
  ASSERT_TRUE(json);
  EXPECT_NE(json->find("\"warm_up_ns\": [20000000]"), std::string::npos) << *json;
  EXPECT_NE(json->find("\"warm_up_ns\": []"), std::string::npos) << *json;
  o.keep_warm_up = true;
  o.format = OutputFormat::kTable;
  auto kept = RunDiff(o, &warnings);
  ASSERT_TRUE(kept);
  EXPECT_NE(kept->find("base 6, new 6 iterations"), std::string::npos) << *kept;
  EXPECT_EQ(kept->find("Warm-up left out"), std::string::npos);
  EXPECT_NE(kept->find("autotune"), std::string::npos) << *kept;
}

Finding MakeFinding(RuleId rule, const std::string& api, const std::string& blamed,
                    uint64_t blocked) {
  Finding f;
  f.rule = rule;
  f.api = api;
  f.blocked_ns = blocked;
  f.correlation_id = blocked;  // differs between runs: not part of the key
  if (!blamed.empty()) {
    Blamed b;
    b.kind = "kernel";
    b.name = blamed;
    f.blamed.push_back(b);
  }
  return f;
}

TEST(FindingsDiffTest, FindingsAreMatchedByRuleAndWhatTheyAreAbout) {
  FindingTotals base, next;
  base.Add({MakeFinding(RuleId::kBlockedOnPriorWork, "cudaMemcpyAsync", "nrm2", 4'900'000),
            MakeFinding(RuleId::kBlockedOnPriorWork, "cudaMemcpyAsync", "nrm2", 100'000),
            MakeFinding(RuleId::kSyncApi, "cudaDeviceSynchronize", "spin", 50'000)});
  next.Add({MakeFinding(RuleId::kBlockedOnPriorWork, "cudaMemcpyAsync", "nrm2", 200'000),
            MakeFinding(RuleId::kImplicitSync, "cudaFree", "spin", 30'000)});
  EXPECT_EQ(base.OfRule(RuleId::kBlockedOnPriorWork).count, 2u);
  EXPECT_EQ(base.OfRule(RuleId::kBlockedOnPriorWork).blocked_ns, 5'000'000u);
  const std::vector<FindingDiff> diff =
      CompareFindings(base.Totals(), next.Totals(), 1, 1, 0.05, 0);
  ASSERT_EQ(diff.size(), 3u);
  EXPECT_EQ(diff[0].key.rule, RuleId::kBlockedOnPriorWork);  // the biggest change first
  EXPECT_EQ(diff[0].status, DiffStatus::kFaster);
  EXPECT_DOUBLE_EQ(diff[0].blocked.base, 5'000'000);
  EXPECT_DOUBLE_EQ(diff[0].blocked.next, 200'000);
  EXPECT_EQ(diff[1].status, DiffStatus::kDisappeared);  // sync-api, 50 µs
  EXPECT_EQ(diff[2].status, DiffStatus::kAppeared);     // implicit-sync, 30 µs
}

TEST(UnitsTest, PercentagesParseAndPrintSigned) {
  EXPECT_DOUBLE_EQ(*ParsePercent("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*ParsePercent("0.5"), 0.005);
  EXPECT_FALSE(ParsePercent("five%").has_value());
  EXPECT_FALSE(ParsePercent("5%%").has_value());
  EXPECT_EQ(FormatSignedPercent(0.125), "+12.50%");
  EXPECT_EQ(FormatSignedPercent(-0.9988), "-99.88%");
}

TEST(RunDiffCommandTest, BadInputsAreClearErrors) {
  TempDir dir;
  TrainingStepsScenario(3, false).Write(dir.Path("steps.pb"));
  HostOnlyScenario().Write(dir.Path("hostonly.pb"));
  TraceBuilder other(99);
  other.Api("cuSomethingElse", 1, 2);
  other.SetEnd(10);
  other.Write(dir.Path("other.pb"));
  std::vector<std::string> warnings;
  DiffCommandOptions o;
  o.base = {dir.Path("steps.pb")};
  o.next = {dir.Path("missing.pb")};
  auto missing = RunDiff(o, &warnings);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("missing.pb"), std::string::npos) << missing.error();
  o.next = {dir.Path("other.pb")};
  auto disjoint = RunDiff(o, &warnings);
  ASSERT_FALSE(disjoint);
  EXPECT_NE(disjoint.error().find("no API call, GPU operation or NVTX range name in common"),
            std::string::npos);
  o.next = {dir.Path("steps.pb")};
  o.nvtx = "nope";
  auto no_range = RunDiff(o, &warnings);
  ASSERT_FALSE(no_range);
  EXPECT_EQ(no_range.error(), "no NVTX range named 'nope' in the base run");
  o.nvtx = "";
  o.threshold = -1;
  EXPECT_FALSE(RunDiff(o, &warnings));
}

}  // namespace
}  // namespace libprof::analysis::testing
