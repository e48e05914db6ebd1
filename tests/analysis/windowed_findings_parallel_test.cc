// Proves that findings in windows analysed on several threads (windowed_findings.h over
// ordered_pipeline.h) are exactly those of one thread and of the whole-trace engine: on random
// training loops cut into small windows, every finding with its seq and text, the digest's table
// and JSON (whose filter decides which findings come whole by their seq) and --all's CSV are the
// same with 1, 2, 3 and 8 workers, with and without filters; whatever findings a FindingFilter
// wants whole come whole, the others without text, as from the whole trace; and a sink that
// throws in a window reaches the caller without hanging the workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model/trace_loader.h"
#include "analysis/reports/findings_report.h"
#include "analysis/rules/findings_digest.h"
#include "analysis/rules/rule_registry.h"
#include "analysis/rules/windowed_findings.h"
#include "tests/analysis/findings_loop.h"
#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {
namespace {

// Sets PROFVIEW_THREADS (AnalysisWorkers) for its lifetime.
class Workers {
 public:
  explicit Workers(size_t n) {
    if (const char* env = std::getenv("PROFVIEW_THREADS")) saved_ = env;
    setenv("PROFVIEW_THREADS", std::to_string(n).c_str(), 1);
  }
  ~Workers() {
    if (saved_) {
      setenv("PROFVIEW_THREADS", saved_->c_str(), 1);
    } else {
      unsetenv("PROFVIEW_THREADS");
    }
  }

 private:
  std::optional<std::string> saved_;
};

// Findings in FindFindings' order, each Describe'd without its seq.
std::vector<std::string> InOrder(std::vector<std::pair<uint64_t, Finding>> found) {
  std::vector<std::string> lines;
  for (const Finding& f : InFindOrder(std::move(found))) lines.push_back(Describe(0, f));
  return lines;
}

std::vector<std::string> WholeInOrder(const std::string& path, const FindingsOptions& options) {
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(path, &warnings);
  EXPECT_TRUE(loaded.has_value() && loaded->size() == 1);
  if (!loaded || loaded->size() != 1) return {};
  std::vector<std::pair<uint64_t, Finding>> found;
  StreamFindings(loaded->front(), options, [&](Finding&& f, uint64_t seq) {
    found.push_back({seq, std::move(f)});
  });
  return InOrder(std::move(found));
}

// What `profview findings` would print of `path` in windows, with `workers` threads: every
// finding (Describe'd, by seq), the digest's table and JSON (AddTo: text only for the findings
// that may become their group's worst) and --all's CSV.
struct Printed {
  bool exact = false;
  size_t windows = 0;
  std::vector<std::string> lines;     // with seqs, as handed on
  std::vector<std::string> in_order;  // FindFindings' order, without seqs
  std::string table, json, csv;
};
Printed PrintedWith(size_t workers, const std::string& path, const FindingsOptions& options,
                    const WindowLimits& limits, const FilterOptions& filters = {}) {
  const Workers scoped(workers);
  Printed p;
  auto plan = WindowedFindings::Plan(path, options, filters, limits);
  EXPECT_TRUE(plan.has_value());
  if (!plan || !plan->exact()) return p;
  p.exact = true;
  p.windows = plan->windows();
  std::vector<std::pair<uint64_t, Finding>> found;
  EXPECT_TRUE(plan->Run([&](Finding&& f, uint64_t seq) {
                    p.lines.push_back(Describe(seq, f));
                    found.push_back({seq, std::move(f)});
                  })
                  .has_value());
  std::sort(p.lines.begin(), p.lines.end());
  FindingsDigest digest, all(true);
  EXPECT_TRUE(plan->AddTo(&digest).has_value());
  p.in_order = InOrder(found);
  all.Add(InFindOrder(std::move(found)));
  const FindingsReportContext context{.thresholds = options, .trace_ns = plan->whole().window_ns()};
  p.table = FindingsTable(digest, context);
  p.json = FindingsJson(digest, context);
  FindingsReportContext listed = context;
  listed.all = true;
  p.csv = FindingsCsv(all, listed);
  return p;
}

TEST(WindowedFindingsParallelTest, SeveralWorkersGiveOneWorkersAndTheWholeTracesFindings) {
  TempDir dir;
  size_t compared = 0, several = 0;
  for (uint64_t seed = 101; seed <= 110; ++seed) {
    SCOPED_TRACE(seed);
    const TraceBuilder b =
        FindingsLoop(seed, 40, {.epoch_range = seed % 3 == 0, .stale_event_syncs = false});
    const std::string path = dir.Path("loop.pb");
    const WindowLimits limits = WriteFlushedForWindows(b, seed, path, 48);
    for (const FindingsOptions& options : OptionSets()) {
      const Printed one = PrintedWith(1, path, options, limits);
      ASSERT_TRUE(one.exact);
      several += one.windows > 8;
      // (the whole trace's findings sorted as Describe'd lines, as `one.lines` are)
      // (Seqs of the windows and of the whole trace may differ where a thread's calls reach the
      // file after a later window's: they order only a call's own findings, so the lists in
      // FindFindings' order are compared.)
      EXPECT_EQ(one.in_order, WholeInOrder(path, options));
      for (size_t workers : {2, 3, 8}) {
        SCOPED_TRACE(workers);
        const Printed many = PrintedWith(workers, path, options, limits);
        ASSERT_TRUE(many.exact);
        EXPECT_EQ(many.windows, one.windows);
        EXPECT_EQ(many.lines, one.lines);  // seqs too
        EXPECT_EQ(many.table, one.table);
        EXPECT_EQ(many.json, one.json);
        EXPECT_EQ(many.csv, one.csv);
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 10u * OptionSets().size() * 3);
  EXPECT_GT(several, compared / 3 / 2);  // most cases cut many windows
}

TEST(WindowedFindingsParallelTest, FilteredWindowsOnSeveralWorkersAreOneWorkers) {
  TempDir dir;
  TraceBuilder b = FindingsLoop(5, 40, {.epoch_range = true});
  const std::string path = dir.Path("loop.pb");
  b.WriteFlushed(path, 100, 50);
  const WindowLimits limits = LimitsFor(100, 50, 24);
  const uint64_t length_ns = b.records().api_calls.back().end_ns;
  std::vector<FilterOptions> sets(4);
  sets[0].nvtx = {"iteration"};
  sets[1].tids = {100};
  sets[2].from_ns = length_ns / 4;
  sets[2].to_ns = length_ns * 3 / 4;
  sets[3].nvtx = {"epoch"};
  for (size_t i = 0; i < sets.size(); ++i) {
    SCOPED_TRACE(i);
    const Printed one = PrintedWith(1, path, OptionSets()[0], limits, sets[i]);
    const Printed many = PrintedWith(4, path, OptionSets()[0], limits, sets[i]);
    EXPECT_EQ(many.exact, one.exact);
    EXPECT_EQ(many.lines, one.lines);
    EXPECT_EQ(many.table, one.table);
    EXPECT_EQ(many.json, one.json);
  }
}

TEST(WindowedFindingsParallelTest, AnyFilterGetsTheFindingsOneThreadAndTheWholeTraceGive) {
  // Filters that want few, most, every or no host finding whole (the workers then write the text
  // of all or of none, and the ordered stage corrects the rest): every finding, with or without
  // its text, is the whole trace's (stateless filters: the seqs of windows and whole may differ).
  TempDir dir;
  const TraceBuilder b = FindingsLoop(21, 50);
  const std::string path = dir.Path("loop.pb");
  b.WriteFlushed(path, 100, 50);
  const WindowLimits limits = LimitsFor(100, 50, 24);
  const FindingsOptions options = OptionSets()[0];
  const std::vector<std::pair<std::string, FindingFilter>> filters = {
      {"every", [](const Finding&, uint64_t) { return true; }},
      {"none", [](const Finding&, uint64_t) { return false; }},
      {"a third", [](const Finding& f, uint64_t) { return f.correlation_id % 3 == 0; }},
      {"waits", [](const Finding& f, uint64_t) {
         return Rule(f.rule).family == RuleFamily::kHostWait && f.correlation_id != 0;
       }},
      {"costs", [](const Finding& f, uint64_t) {
         return Rule(f.rule).family != RuleFamily::kHostWait;
       }}};
  auto printed = [&](std::vector<std::pair<uint64_t, Finding>> found, uint64_t trace_ns) {
    FindingsDigest all(true);
    all.Add(InFindOrder(std::move(found)));
    FindingsReportContext context{.thresholds = options, .trace_ns = trace_ns};
    context.all = true;
    return FindingsJson(all, context);
  };
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(path, &warnings);
  ASSERT_TRUE(loaded.has_value() && loaded->size() == 1);
  const ProcessTrace& whole = loaded->front();
  for (const auto& [name, filter] : filters) {
    SCOPED_TRACE(name);
    std::vector<std::pair<uint64_t, Finding>> of_whole;
    StreamFindings(
        whole, options, [&](Finding&& f, uint64_t seq) { of_whole.push_back({seq, std::move(f)}); },
        filter);
    const std::string expected = printed(std::move(of_whole), whole.window_ns());
    for (size_t workers : {1, 4}) {
      SCOPED_TRACE(workers);
      const Workers scoped(workers);
      auto plan = WindowedFindings::Plan(path, options, limits);
      ASSERT_TRUE(plan.has_value());
      ASSERT_TRUE(plan->exact()) << plan->why_inexact();
      ASSERT_GT(plan->windows(), 5u);
      std::vector<std::pair<uint64_t, Finding>> found;
      ASSERT_TRUE(
          plan->Run([&](Finding&& f, uint64_t seq) { found.push_back({seq, std::move(f)}); },
                    filter)
              .has_value());
      EXPECT_EQ(printed(std::move(found), plan->whole().window_ns()), expected);
    }
  }
}

TEST(WindowedFindingsParallelTest, ASinkThatThrowsInAWindowReachesTheCaller) {
  TempDir dir;
  const TraceBuilder b = FindingsLoop(9, 60);
  const std::string path = dir.Path("loop.pb");
  b.WriteFlushed(path, 100, 50);
  for (size_t workers : {1, 4}) {
    SCOPED_TRACE(workers);
    const Workers scoped(workers);
    auto plan = WindowedFindings::Plan(path, OptionSets()[0], LimitsFor(100, 50, 24));
    ASSERT_TRUE(plan.has_value());
    ASSERT_TRUE(plan->exact()) << plan->why_inexact();
    ASSERT_GT(plan->windows(), 5u);
    for (size_t throw_at : {size_t{0}, size_t{40}, size_t{300}}) {
      size_t handed = 0;
      try {
        (void)plan->Run([&](Finding&&, uint64_t) {
          if (handed++ == throw_at) throw std::runtime_error("sink failed");
        });
        ADD_FAILURE() << "no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "sink failed");
      }
      EXPECT_EQ(handed, throw_at + 1);
    }
    // The plan still runs whole afterwards.
    size_t findings = 0;
    EXPECT_TRUE(plan->Run([&](Finding&&, uint64_t) { ++findings; }).has_value());
    EXPECT_GT(findings, 300u);
  }
}

}  // namespace
}  // namespace libprof::analysis::testing
