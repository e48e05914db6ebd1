// shared-gpu: each process's GPUs (gpu_use.h) measured whole and window by window, and the
// cross-process rule over them (shared_gpu_rules.h): processes of one host on one GPU at the
// same time, and what is no sharing (another host, another GPU, one after the other, a shared
// stretch under --min-wait); then `findings`, `check` and `diff` over the scenario's files.
#include <gtest/gtest.h>

#include "analysis/commands.h"
#include "analysis/metrics/gpu_use.h"
#include "analysis/model/trace_index.h"
#include "analysis/rules/rule_details.h"
#include "analysis/rules/shared_gpu_rules.h"
#include "tests/analysis/combine_partials.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

constexpr const char* kSharedUuid = "GPU-222b92b5-443f-05f8-b663-f5f7c17b5e63";

// A length of `us` microseconds (Us gives a time on the builder's clock).
uint64_t Len(double us) { return Us(us) - Us(0); }

std::vector<ProcessGpuUse> Uses() {
  std::vector<ProcessGpuUse> uses;
  for (const TraceBuilder& b : SharedGpuScenario()) uses.push_back(MeasureGpuUse(b.Build()));
  return uses;
}

TEST(GpuUseTest, FirstLastAndBusyTimePerGpuByUuid) {
  const ProcessTrace t = SharedGpuScenario()[0].Build();
  const ProcessGpuUse use = MeasureGpuUse(t);
  EXPECT_EQ(use.pid, 7100u);
  EXPECT_EQ(use.hostname, "node1");
  ASSERT_EQ(use.gpus.size(), 1u);
  EXPECT_EQ(use.gpus[0].uuid, kSharedUuid);
  EXPECT_EQ(use.gpus[0].first_ns, Us(1000));
  EXPECT_EQ(use.gpus[0].last_ns, Us(10600));
  EXPECT_EQ(use.gpus[0].busy_ns, Len(2000));
  EXPECT_EQ(use.gpus[0].ops, 20u);
}

// Windows in time order give what the whole trace gives, a union piece running on across a cut.
TEST(GpuUseTest, WindowByWindowEqualsWhole) {
  const ProcessTrace t = SharedGpuScenario()[1].Build();
  const TraceIndex index(t);
  const std::vector<DeviceOp>& ops = index.device_ops();
  ASSERT_EQ(ops.size(), 20u);
  GpuUseAccumulator windows;
  windows.Add(std::span(ops).first(7));
  windows.Add(std::span(ops).subspan(7));
  const ProcessGpuUse whole = MeasureGpuUse(t);
  const ProcessGpuUse split = windows.Finish(t);
  ASSERT_EQ(split.gpus.size(), 1u);
  EXPECT_EQ(split.gpus[0].busy_ns, whole.gpus[0].busy_ns);
  EXPECT_EQ(split.gpus[0].first_ns, whole.gpus[0].first_ns);
  EXPECT_EQ(split.gpus[0].last_ns, whole.gpus[0].last_ns);
  // Overlapping operations count once.
  std::vector<DeviceOp> overlapping = {{.start_ns = 0, .end_ns = 100},
                                       {.start_ns = 50, .end_ns = 120}};
  GpuUseAccumulator once;
  once.Add(overlapping);
  ProcessTrace one = t;
  EXPECT_EQ(once.Finish(one).gpus[0].busy_ns, 120u);
}

TEST(SharedGpuRuleTest, ProcessesOnOneGpuAtOnce) {
  const std::vector<ProcessGpuUse> uses = Uses();
  const std::vector<Finding> found = FindSharedGpus(uses, {});
  ASSERT_EQ(found.size(), 1u);  // 7102 runs on another GPU
  const Finding& f = found[0];
  EXPECT_EQ(f.rule, RuleId::kSharedGpu);
  EXPECT_EQ(f.pid, 7100u);  // the first to use it
  EXPECT_EQ(f.device_id, 0u);
  // Shared from B's first kernel (3.25 ms) to A's last end (10.6 ms); A's recording starts at
  // 0.1 ms.
  EXPECT_EQ(f.host_start_ns, Len(3250 - 100));
  EXPECT_EQ(f.host_duration_ns, Len(7350));
  const auto& d = std::get<SharedGpuDetails>(f.details);
  EXPECT_EQ(d.gpu, kSharedUuid);
  EXPECT_EQ(d.pids, "7100, 7101");
  EXPECT_EQ(d.processes, 2u);
  EXPECT_EQ(d.shared_ns, Len(7350));
  // Each one's 2 ms of kernels spread over its 9.6 ms span, 7.35 ms of it shared: 1.53 ms.
  EXPECT_EQ(d.busy_ns, 2 * Len(1531.25));
  EXPECT_NE(f.explanation.find("processes 7100 and 7101 on node1 ran work on the same GPU (" +
                               std::string(kSharedUuid) + ") at the same time for 7.35 ms"),
            std::string::npos)
      << f.explanation;
  EXPECT_NE(f.explanation.find("torch.cuda.set_device(local_rank)"), std::string::npos);
  // Busy 21% of the shared time together: as much as independent work would overlap
  // (1.53 ms x 1.53 ms / 7.35 ms = 319.01 µs), taken in turns by two.
  EXPECT_EQ(f.blocked_ns, 159'505u);
  EXPECT_EQ(f.explanation.find("over 100%"), std::string::npos);
}

// Kernels of both processes in flight at once, each one's time stretched by the other's turns
// (as two GEMM loops on one H200 recorded): busy beyond the shared time ran in turns.
TEST(SharedGpuRuleTest, BusyBeyondTheSharedTimeRanInTurns) {
  std::vector<ProcessGpuUse> uses = Uses();
  uses.pop_back();
  for (ProcessGpuUse& u : uses) u.gpus[0].busy_ns = u.gpus[0].last_ns - u.gpus[0].first_ns;
  const std::vector<Finding> found = FindSharedGpus(uses, {});
  ASSERT_EQ(found.size(), 1u);
  // Each busy its whole span: 7.35 ms each in the 7.35 ms shared, 7.35 ms of it at once, half of
  // which each would save.
  EXPECT_EQ(found[0].blocked_ns, Len(7350) / 2);
  EXPECT_NE(found[0].explanation.find("(200.00% of it together: over 100%, so their kernels ran "
                                      "at the same time, taking turns"),
            std::string::npos)
      << found[0].explanation;
}

TEST(SharedGpuRuleTest, NoSharingAcrossHostsOrInTurnOrBrief) {
  std::vector<ProcessGpuUse> uses = Uses();
  uses.pop_back();
  uses[1].hostname = "node2";  // the same UUID on another machine cannot be the same GPU
  EXPECT_TRUE(FindSharedGpus(uses, {}).empty());
  uses = Uses();
  uses.pop_back();
  uses[1].gpus[0].first_ns += Len(7350);  // starts as A ends: one after the other
  uses[1].gpus[0].last_ns += Len(7350);
  EXPECT_TRUE(FindSharedGpus(uses, {}).empty());
  uses = Uses();
  FindingsOptions options;
  options.min_wait_ns = Len(7351);  // the shared stretch is shorter
  EXPECT_TRUE(FindSharedGpus(uses, options).empty());
  options.min_wait_ns = Len(7350);
  EXPECT_EQ(FindSharedGpus(uses, options).size(), 1u);
}

// Through `findings` over the files: the finding in the pattern table, after every process's
// own findings.
TEST(SharedGpuRuleTest, FindingsOverTheFiles) {
  TempDir dir;
  std::vector<std::string> files;
  for (const TraceBuilder& b : SharedGpuScenario()) {
    files.push_back(dir.Path(std::to_string(b.Build().header.pid) + ".pb"));
    b.Write(files.back(), 512);
  }
  const std::string out = RunOver<FindingsCommandOptions>(&RunFindings, files, {});
  EXPECT_NE(out.find("shared-gpu"), std::string::npos) << out;
  EXPECT_NE(out.find("pid 7100 shared-gpu: processes 7100 and 7101 on node1"), std::string::npos)
      << out;
  // One process alone shares nothing.
  EXPECT_EQ(RunOver<FindingsCommandOptions>(&RunFindings, {files[0]}, {}).find("shared-gpu:"),
            std::string::npos);
}

// `check` and `diff` run the cross-process rules over a run's files too: a limit on shared-gpu
// holds only where no two processes shared a GPU, and a run that adds a process on the same GPU
// shows the finding as new.
TEST(SharedGpuRuleTest, CheckAndDiffSeeIt) {
  TempDir dir;
  std::vector<std::string> files;
  for (const TraceBuilder& b : SharedGpuScenario()) {
    files.push_back(dir.Path(std::to_string(b.Build().header.pid) + ".pb"));
    b.Write(files.back(), 512);
  }
  std::vector<std::string> warnings;
  CheckCommandOptions check;
  check.max = {"shared-gpu=0"};
  check.files = {files[0]};
  auto alone = RunCheck(check, &warnings);
  ASSERT_TRUE(alone) << alone.error();
  EXPECT_TRUE(alone->passed) << alone->text;
  check.files = files;
  auto shared = RunCheck(check, &warnings);
  ASSERT_TRUE(shared) << shared.error();
  EXPECT_FALSE(shared->passed) << shared->text;
  EXPECT_NE(shared->text.find("shared-gpu"), std::string::npos) << shared->text;

  DiffCommandOptions diff;
  diff.base = {files[0]};
  diff.next = files;
  diff.format = OutputFormat::kJson;
  auto compared = RunDiff(diff, &warnings);
  ASSERT_TRUE(compared) << compared.error();
  EXPECT_NE(compared->find("\"rule\": \"shared-gpu\""), std::string::npos) << *compared;
}

}  // namespace
}  // namespace libprof::analysis::testing
