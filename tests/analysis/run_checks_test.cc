// Proves profview check's parts: assertions parse into metric, unit and limit (and bad ones are
// rejected with the reason); they are evaluated against a run's summary, findings and
// iterations (kernels matched by function name, /step per iteration, regressions judged beyond
// the runs' spread); the TOML file gives the same assertions as the flags; JUnit XML escapes.
#include "analysis/rules/run_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "analysis/check_config.h"
#include "analysis/commands.h"
#include "analysis/reports/check_report.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

TEST(ParseAssertionTest, MetricsUnitsAndLimits) {
  auto count = ParseAssertion(CheckBound::kMax, "pageable-async-memcpy=0");
  ASSERT_TRUE(count) << count.error();
  EXPECT_EQ(count->metric.kind, CheckMetric::Kind::kRule);
  EXPECT_EQ(count->metric.rule, RuleId::kPageableAsyncMemcpy);
  EXPECT_EQ(count->unit, CheckUnit::kCount);

  auto per_step = ParseAssertion(CheckBound::kMax, "implicit-sync=3/step");
  ASSERT_TRUE(per_step);
  EXPECT_TRUE(per_step->per_step);
  EXPECT_DOUBLE_EQ(per_step->limit, 3);

  auto share = ParseAssertion(CheckBound::kMin, "gpu-busy=60%");
  ASSERT_TRUE(share);
  EXPECT_EQ(share->unit, CheckUnit::kShare);
  EXPECT_DOUBLE_EQ(share->limit, 0.6);

  // A C++ name with "::" keeps them; the last part is a statistic only when it is one.
  auto mean = ParseAssertion(CheckBound::kMax, "kernel:ns::nrm2_kernel:mean=1.2ms");
  ASSERT_TRUE(mean);
  EXPECT_EQ(mean->metric.row_name, "ns::nrm2_kernel");
  EXPECT_EQ(mean->metric.stat, "mean");
  EXPECT_DOUBLE_EQ(mean->limit, 1.2e6);
  auto total = ParseAssertion(CheckBound::kMax, "kernel:ns::gemm=5ms");
  ASSERT_TRUE(total);
  EXPECT_EQ(total->metric.row_name, "ns::gemm");
  EXPECT_EQ(total->metric.stat, "total");

  auto bytes = ParseAssertion(CheckBound::kMax, "memcpy:pageable:bytes=16MiB");
  ASSERT_TRUE(bytes);
  EXPECT_DOUBLE_EQ(bytes->limit, 16.0 * 1024 * 1024);
  auto bandwidth = ParseAssertion(CheckBound::kMin, "memcpy:pinned:bandwidth=20GB/s");
  ASSERT_TRUE(bandwidth);
  EXPECT_EQ(bandwidth->unit, CheckUnit::kBandwidth);

  auto regression = ParseAssertion(CheckBound::kMaxRegression, "5%");
  ASSERT_TRUE(regression);
  EXPECT_TRUE(regression->metric.figure.empty());
  EXPECT_DOUBLE_EQ(regression->limit, 0.05);
}

TEST(ParseAssertionTest, BadAssertionsSayWhy) {
  auto unknown = ParseAssertion(CheckBound::kMax, "bogus-rule=0");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("unknown metric 'bogus-rule'"), std::string::npos);
  EXPECT_FALSE(ParseAssertion(CheckBound::kMax, "implicit-sync"));       // no value
  EXPECT_FALSE(ParseAssertion(CheckBound::kMax, "gpu-busy=3"));          // needs a unit
  EXPECT_FALSE(ParseAssertion(CheckBound::kMax, "wall=60%"));            // wall is a duration
  EXPECT_FALSE(ParseAssertion(CheckBound::kMax, "kernel:k:calls=1ms"));  // calls are counted
  EXPECT_FALSE(ParseAssertion(CheckBound::kMax, "gpu-busy=60%/step"));
  EXPECT_FALSE(ParseAssertion(CheckBound::kMax, "api:cudaFree:gpu=1ms"));  // gpu: NVTX only
  EXPECT_FALSE(ParseAssertion(CheckBound::kMaxRegression, "wall=fast"));
}

CheckOutcome Eval(const std::string& text, CheckBound bound, const CheckRun& run) {
  auto a = ParseAssertion(bound, text);
  EXPECT_TRUE(a) << a.error();
  auto o = Evaluate(*a, run);
  EXPECT_TRUE(o) << o.error();
  return o ? *o : CheckOutcome{};
}

TEST(EvaluateTest, OneRunAgainstLimits) {
  Summary s;
  s.trace_ns = 1'000'000;
  s.gpu_busy_ns = 700'000;
  SummaryRow k;
  k.kind = "kernel";
  k.name = "nrm2_kernel<float, float, float, 1, 0, 128>(cublasNrm2Params<int, float, float>)";
  k.stats.Add(6000);
  k.stats.Add(8000);
  s.device = {k};
  FindingTotals findings;
  Finding f;
  f.rule = RuleId::kImplicitSync;
  f.blocked_ns = 30'000;
  findings.Add({f, f, f});
  CheckRun run;
  run.run = CheckScope{.summary = &s, .findings = &findings};
  run.step = CheckScope{.summary = &s, .findings = &findings, .per = 2};

  EXPECT_TRUE(Eval("gpu-busy=60%", CheckBound::kMin, run).passed);
  EXPECT_FALSE(Eval("gpu-busy=80%", CheckBound::kMin, run).passed);
  const CheckOutcome mean = Eval("kernel:nrm2_kernel:mean=6us", CheckBound::kMax, run);
  EXPECT_FALSE(mean.passed);
  EXPECT_DOUBLE_EQ(mean.measured, 7000);
  EXPECT_TRUE(Eval("implicit-sync=3", CheckBound::kMax, run).passed);
  const CheckOutcome per_step = Eval("implicit-sync=1/step", CheckBound::kMax, run);
  EXPECT_DOUBLE_EQ(per_step.measured, 1.5);
  EXPECT_FALSE(per_step.passed);
  EXPECT_DOUBLE_EQ(Eval("implicit-sync=100us", CheckBound::kMax, run).measured, 90'000);

  // A name absent from the run was called 0 times ("never call it" holds)...
  const CheckOutcome never = Eval("api:cudaDeviceSynchronize:calls=0", CheckBound::kMax, run);
  EXPECT_TRUE(never.passed);
  EXPECT_DOUBLE_EQ(never.measured, 0);
  EXPECT_FALSE(Eval("kernel:gemm:calls=1", CheckBound::kMin, run).passed);
  // ...but what else the run cannot answer is an error, not a pass.
  auto missing = Evaluate(*ParseAssertion(CheckBound::kMax, "kernel:gemm=1ms"), run);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "no kernel named 'gemm' in the run");
  EXPECT_FALSE(Evaluate(*ParseAssertion(CheckBound::kMax, "iteration=1ms"), run));
  EXPECT_FALSE(Evaluate(*ParseAssertion(CheckBound::kMaxRegression, "5%"), run));
}

// A rule's figure leaves out its findings in one-time work (an autotuner's own waits) and says
// how much it left out; CheckRun::keep_one_time counts them, in limits and in regressions.
TEST(EvaluateTest, RulesLeaveOutOneTimeWorkAndSayHowMuch) {
  Summary s;
  s.trace_ns = 1'000'000;
  FindingTotals findings;
  Finding own;
  own.rule = RuleId::kSyncApi;
  own.api = "cudaDeviceSynchronize";
  own.blocked_ns = 30'000;
  Finding tuning = own;
  tuning.api = "cuEventSynchronize";
  tuning.blocked_ns = 100'000;
  tuning.one_time = OneTimeWork::kXlaAutotuning;
  Finding search = tuning;
  search.one_time = OneTimeWork::kCudnnSearch;
  findings.Add({own, tuning, tuning, search});
  CheckRun run;
  run.run = CheckScope{.summary = &s, .findings = &findings};

  const CheckOutcome count = Eval("sync-api=1", CheckBound::kMax, run);
  EXPECT_TRUE(count.passed);
  EXPECT_DOUBLE_EQ(count.measured, 1);
  EXPECT_EQ(count.measured_text, "1 findings (+3 one-time left out)");
  EXPECT_EQ(count.note,
            "sync-api: 3 findings in XLA's autotuning and cuDNN's algorithm search left out: paid "
            "once, and not the program's own code (--keep-one-time counts them).");
  const CheckOutcome time = Eval("sync-api=50us", CheckBound::kMax, run);
  EXPECT_TRUE(time.passed);
  EXPECT_DOUBLE_EQ(time.measured, 30'000);
  EXPECT_EQ(time.measured_text, "30.0 µs (+300.0 µs one-time left out)");
  // A rule with no one-time findings says nothing more.
  const CheckOutcome other = Eval("implicit-sync=0", CheckBound::kMax, run);
  EXPECT_EQ(other.measured_text, "0 findings");
  EXPECT_EQ(other.note, "");
  // The table says it in full below, and so does JUnit.
  EXPECT_NE(CheckTable({count, other}, {}).find(count.note), std::string::npos);
  EXPECT_NE(CheckJunit({count}, {}).find("--keep-one-time counts them"), std::string::npos);

  run.keep_one_time = true;
  const CheckOutcome kept = Eval("sync-api=1", CheckBound::kMax, run);
  EXPECT_FALSE(kept.passed);
  EXPECT_DOUBLE_EQ(kept.measured, 4);
  EXPECT_EQ(kept.measured_text, "4 findings");
  EXPECT_EQ(kept.note, "");

  // A regression of the rule: the baseline had no tuning, the run tuned for 300 us.
  Summary base = s;
  SummaryReport b{.parts = {base}, .total = base}, n{.parts = {s}, .total = s};
  FindingTotals base_findings;
  base_findings.Add(own);
  run.baseline = &b;
  run.compared = &n;
  run.baseline_findings = &base_findings;
  run.compared_findings = &findings;
  EXPECT_FALSE(Eval("sync-api=5%", CheckBound::kMaxRegression, run).passed);
  run.keep_one_time = false;
  EXPECT_TRUE(Eval("sync-api=5%", CheckBound::kMaxRegression, run).passed);
}

TEST(EvaluateTest, RegressionsFailOnlyBeyondLimitAndSpread) {
  Summary base, next;
  base.trace_ns = 100'000'000;
  next.trace_ns = 108'000'000;  // +8%
  SummaryReport b{.parts = {base}, .total = base}, n{.parts = {next}, .total = next};
  FindingTotals none;
  CheckRun run;
  run.run = CheckScope{.summary = &next, .findings = &none};
  run.baseline = &b;
  run.compared = &n;
  run.baseline_findings = &none;
  run.compared_findings = &none;
  EXPECT_FALSE(Eval("5%", CheckBound::kMaxRegression, run).passed);
  EXPECT_TRUE(Eval("10%", CheckBound::kMaxRegression, run).passed);
  // Per iteration, the iterations' spread (interquartile range 20 ms on a 100 ms median) hides it.
  RangeInstances wide;
  wide.name = "step";
  wide.durations_ns = {80'000'000, 90'000'000, 100'000'000, 110'000'000, 120'000'000};
  wide.processes = 1;
  run.baseline_iterations = &wide;
  run.compared_iterations = &wide;
  const CheckOutcome o = Eval("wall=5%", CheckBound::kMaxRegression, run);
  EXPECT_TRUE(o.passed) << o.measured_text;
}

TEST(CheckConfigTest, TomlGivesTheAssertionsOfTheFlags) {
  TempDir dir;
  const std::string path = dir.Path("profview-check.toml");
  std::ofstream(path) << "# CI limits\n"
                         "nvtx = \"step\"\n"
                         "baseline = \"base.pb\"\n"
                         "max-regression = \"5%\"\n"
                         "keep-warm-up = true\n"
                         "keep-one-time = true\n"
                         "[max]\n"
                         "pageable-async-memcpy = 0\n"
                         "implicit-sync = \"3/step\"\n"
                         "\"kernel:nrm2_kernel:mean\" = \"1.2ms\"\n"
                         "[min]\n"
                         "gpu-busy = \"60%\"\n";
  auto config = ReadCheckConfig(path);
  ASSERT_TRUE(config) << config.error();
  EXPECT_EQ(config->nvtx, "step");
  EXPECT_TRUE(config->keep_warm_up);
  EXPECT_TRUE(config->keep_one_time);
  EXPECT_EQ(config->baseline, std::vector<std::string>{dir.Path("base.pb")});
  EXPECT_EQ(config->max_regression, std::vector<std::string>{"5%"});
  std::vector<std::string> max = config->max;
  std::sort(max.begin(), max.end());
  EXPECT_EQ(max, (std::vector<std::string>{"implicit-sync=3/step",
                                           "kernel:nrm2_kernel:mean=1.2ms",
                                           "pageable-async-memcpy=0"}));
  EXPECT_EQ(config->min, std::vector<std::string>{"gpu-busy=60%"});
}

TEST(CheckConfigTest, BadFilesAreErrors) {
  TempDir dir;
  std::ofstream(dir.Path("syntax.toml")) << "[max]\nimplicit-sync = \n";
  auto syntax = ReadCheckConfig(dir.Path("syntax.toml"));
  ASSERT_FALSE(syntax);
  EXPECT_NE(syntax.error().find("syntax.toml:2:"), std::string::npos) << syntax.error();
  std::ofstream(dir.Path("typo.toml")) << "[maximum]\nimplicit-sync = 3\n";
  auto typo = ReadCheckConfig(dir.Path("typo.toml"));
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().find("unknown key 'maximum'"), std::string::npos);
  EXPECT_FALSE(ReadCheckConfig(dir.Path("absent.toml")));
  std::ofstream(dir.Path("flag.toml")) << "keep-warm-up = 3\n";
  auto flag = ReadCheckConfig(dir.Path("flag.toml"));
  ASSERT_FALSE(flag);
  EXPECT_NE(flag.error().find("'keep-warm-up' must be true or false"), std::string::npos);
}

TEST(CheckReportTest, JunitEscapesAndCountsFailures) {
  EXPECT_EQ(XmlEscape("a<b & \"c\"\x01"), "a&lt;b &amp; &quot;c&quot;?");
  const std::string xml =
      CheckJunit({CheckOutcome{.assertion = "kernel:f<int>:mean ≤ 1 ms", .passed = false,
                               .measured_text = "2 ms"},
                  CheckOutcome{.assertion = "wall ≤ 1 s", .passed = true, .measured_text = "0.5 s"}},
                 CheckReportContext{.inputs = {"run.pb"}, .scope = ""});
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("name=\"kernel:f&lt;int&gt;:mean ≤ 1 ms\""), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"measured 2 ms\""), std::string::npos);
}

TEST(RunCheckCommandTest, PerStepOnATrainingLoop) {
  TempDir dir;
  TrainingStepsScenario(10, true).Write(dir.Path("run.pb"));
  std::vector<std::string> warnings;
  CheckCommandOptions o;
  o.files = {dir.Path("run.pb")};
  o.max = {"blocked-on-prior-work=1/step", "kernel:gemm:mean=400us"};
  o.junit = dir.Path("junit.xml");
  auto result = RunCheck(o, &warnings);
  ASSERT_TRUE(result) << result.error();
  EXPECT_TRUE(result->passed) << result->text;
  o.max = {"blocked-on-prior-work=0/step"};
  result = RunCheck(o, &warnings);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->passed);
  std::ifstream junit(dir.Path("junit.xml"));
  std::string xml((std::istreambuf_iterator<char>(junit)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos);
  o.max = {};
  EXPECT_FALSE(RunCheck(o, &warnings));  // no assertion
}

// Per step, the warm-up iteration (20 ms, with a module load and an autotuned kernel) is left
// out as diff leaves it; --keep-warm-up counts it.
TEST(RunCheckCommandTest, PerStepLeavesOutTheWarmUp) {
  TempDir dir;
  WarmUpStepsScenario(6, 20000).Write(dir.Path("run.pb"));
  std::vector<std::string> warnings;
  CheckCommandOptions o;
  o.files = {dir.Path("run.pb")};
  o.max = {"api:cuLibraryLoadData:calls=0/step", "kernel:autotune:calls=0/step"};
  auto result = RunCheck(o, &warnings);
  ASSERT_TRUE(result) << result.error();
  EXPECT_TRUE(result->passed) << result->text;
  EXPECT_NE(result->text.find("5 iterations, after 1 warm-up iteration left out"),
            std::string::npos)
      << result->text;
  o.keep_warm_up = true;
  result = RunCheck(o, &warnings);
  ASSERT_TRUE(result) << result.error();
  EXPECT_FALSE(result->passed) << result->text;
}

}  // namespace
}  // namespace libprof::analysis::testing
