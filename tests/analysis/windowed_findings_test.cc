// Proves `profview findings` in windows (windowed_findings.h) against the whole-trace engine as
// oracle: on random training loops delivered as libprof's flushes deliver them (several
// threads, two devices, streams of every class, start-up and later module loading, events
// synchronised in later steps, allocation churn, pageable copies followed by launches, long idle
// stretches with host calls in them, nested NVTX ranges), whenever the plan says the windows are
// exact every finding with its seq (and so every report) is the whole trace's, for several
// option sets that make each rule family fire; the plans are exact and cut several windows for
// most seeds, also when an epoch's NVTX range arrives after every cut it starts before; NCCL
// ranges, unified-memory counters or an event synchronisation naming a recording no window
// carries any more make the plan inexact instead of answering wrong, and a failed plan does not
// run.
#include "analysis/rules/windowed_findings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "analysis/metrics/idle_breakdown.h"
#include "analysis/metrics/memory_in_windows.h"
#include "analysis/model/window_filter.h"
#include "analysis/reports/findings_report.h"
#include "analysis/reports/memory_report.h"
#include "analysis/reports/memory_timeline_report.h"
#include "analysis/rules/findings_digest.h"
#include "tests/analysis/findings_loop.h"
#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {
namespace {

// Equal lists, or the first line where they part (a failure shows that, not every finding).
::testing::AssertionResult SameLines(const std::vector<std::string>& windowed,
                                     const std::vector<std::string>& whole) {
  for (size_t i = 0; i < std::max(windowed.size(), whole.size()); ++i) {
    const std::string w = i < windowed.size() ? windowed[i] : "(none)";
    const std::string t = i < whole.size() ? whole[i] : "(none)";
    if (w != t) {
      return ::testing::AssertionFailure() << "finding " << i << " of " << whole.size()
                                           << "\n windows: " << w << "\n whole:   " << t;
    }
  }
  return ::testing::AssertionSuccess();
}

struct Windowed {
  bool exact = false;
  std::string why;
  size_t windows = 0;
  std::vector<std::string> lines;
};

Windowed WindowedFindingsOf(const std::string& path, const FindingsOptions& options,
                            const WindowLimits& limits) {
  auto plan = WindowedFindings::Plan(path, options, limits);
  EXPECT_TRUE(plan.has_value());
  if (!plan) return {};
  Windowed w{plan->exact(), plan->why_inexact(), plan->windows(), {}};
  if (!w.exact) return w;
  std::vector<std::pair<uint64_t, std::string>> out;
  auto ran = plan->Run([&](Finding&& f, uint64_t seq) { out.push_back({seq, Describe(seq, f)}); });
  EXPECT_TRUE(ran.has_value());
  std::sort(out.begin(), out.end());
  for (auto& [seq, line] : out) w.lines.push_back(std::move(line));
  return w;
}

TEST(WindowedFindingsTest, WindowsGiveTheWholeTraceFindingsWithTheirSeqs) {
  TempDir dir;
  size_t several = 0, findings = 0, cases = 0, warm_ups = 0, warm_up_waits = 0, recompiles = 0,
         pools_giving_back = 0, recurring_set_ups = 0, graph_rebuilds = 0;
  std::map<RuleId, size_t> rules;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(seed);
    const TraceBuilder b = FindingsLoop(seed, 30);
    const std::string path = dir.Path("loop.pb");
    WindowLimits limits = WriteFlushedForWindows(b, seed, path);
    if (seed % 2 == 0) limits.list_thread_records = 1;  // each list on a thread in the tries
    if (seed % 3 == 0) limits.decoders = 3;  // chunks decoded on three threads
    for (const FindingsOptions& options : OptionSets()) {
      const Windowed w = WindowedFindingsOf(path, options, limits);
      EXPECT_TRUE(w.exact) << w.why;
      if (!w.exact) continue;
      ++cases;
      several += w.windows > 2;
      const std::vector<std::string> whole = WholeFindings(path, options);
      EXPECT_TRUE(SameLines(w.lines, whole));
      findings += whole.size();
    }
    std::vector<std::string> warnings;
    const auto loaded = LoadTraceFile(path, &warnings);
    ASSERT_TRUE(loaded.has_value());
    for (const ProcessTrace& t : *loaded) {
      for (const Finding& f : FindFindings(t, OptionSets()[0])) {
        ++rules[f.rule];
        if (const auto* d = std::get_if<StartUpDetails>(&f.details)) warm_ups += d->warm_up_ns > 0;
        warm_up_waits += f.rule == RuleId::kSyncApi && f.in_start_up &&
                         f.one_time == OneTimeWork::kXlaAutotuning;
        if (const auto* d = std::get_if<IdleBreakdownDetails>(&f.details)) {
          recompiles += d->one_time_idle_ns.value_or(0) > 0;
        }
        if (const auto* d = std::get_if<AllocChurnDetails>(&f.details)) {
          pools_giving_back += d->release_sync_ns.value_or(0) > 0;
        }
        if (const auto* d = std::get_if<StartUpDetails>(&f.details)) {
          recurring_set_ups += d->recurring_library_set_ups > 0;
        }
        graph_rebuilds += f.rule == RuleId::kGraphRebuild;
      }
      for (const Finding& f : FindFindings(t, OptionSets()[1])) ++rules[f.rule];
    }
  }
  EXPECT_GE(warm_ups, 8u);  // every third seed's warm-up was found (and the windows agreed)
  EXPECT_GE(warm_up_waits, 8u);  // and its timed candidate's sync was paid once, XLA's by its stack
  // Every fifth seed's recompilation: its idle gaps left out of the steady state, as one-time
  // work's (seeds 4, 9, 14, 19, 24: the breakdown fires on at least some of them).
  EXPECT_GE(recompiles, 2u);
  // Every fourth seed's pool, which gives its memory back at each step's end (seeds 3, 7, ...).
  EXPECT_GE(pools_giving_back, 6u);
  // Every sixth seed's plan per step (seeds 5, 11, 17, 23).
  EXPECT_EQ(recurring_set_ups, 4u);
  // Every seventh seed's graph rebuilt per step (seeds 2, 9, 16, 23).
  EXPECT_EQ(graph_rebuilds, 4u);
  EXPECT_GT(several, cases * 3 / 4);  // windows were really cut
  EXPECT_GT(findings, 1000u);
  // Every rule family of one process fired somewhere.
  for (RuleId rule : {RuleId::kBlockedOnPriorWork, RuleId::kSyncApi, RuleId::kImplicitSync,
                      RuleId::kPageableAsyncMemcpy, RuleId::kSyncMemcpy, RuleId::kGpuIdleGaps,
                      RuleId::kGpuLowUtilization, RuleId::kGpuIdleBreakdown, RuleId::kStartUp,
                      RuleId::kAllocChurn, RuleId::kNoOverlapDefaultStream}) {
    EXPECT_GT(rules[rule], 0u) << RuleName(rule);
  }
}

// Run's hooks (what the HTML report's first pass rides on): each window of the read once, in
// order, first as read (each NVTX range once) and then with its index and stream model once its
// host findings went to the sink; a host finding's call and the work it blames lie in the
// window after which it was handed on (the report looks them up there), the rest come after the
// last window and name no correlation id; the findings are unchanged.
TEST(WindowedFindingsTest, HooksSeeEveryWindowOnceInOrderAfterItsFindings) {
  TempDir dir;
  size_t looked_up = 0, several = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    const TraceBuilder b = FindingsLoop(seed, 20);
    const std::string path = dir.Path("loop.pb");
    const WindowLimits limits = WriteFlushedForWindows(b, seed, path);
    std::vector<std::string> warnings;
    const auto loaded = LoadTraceFile(path, &warnings);
    ASSERT_TRUE(loaded.has_value());
    ASSERT_EQ(loaded->size(), 1u);
    for (const FindingsOptions& options : OptionSets()) {
      auto plan = WindowedFindings::Plan(path, options, limits);
      ASSERT_TRUE(plan.has_value());
      if (!plan->exact()) continue;
      several += plan->windows() > 2;
      // `read` runs on this thread, `analysed` on the workers (after the sink, in its chain).
      std::mutex spans;
      std::vector<uint64_t> read_from, analysed_from;  // (spans')
      size_t read_nvtx = 0;
      std::vector<std::pair<uint64_t, std::string>> out;
      std::vector<Finding> since;  // handed on since the last window analysed
      WindowedFindings::Hooks hooks;
      hooks.read = [&](const ProcessTrace& w, const WindowSpan& span) {
        std::lock_guard lock(spans);
        EXPECT_TRUE(read_from.empty() || span.from_ns > read_from.back());
        EXPECT_LT(read_from.size(), analysed_from.size() + 2 + AnalysisWorkers());
        read_from.push_back(span.from_ns);
        read_nvtx += w.records.nvtx_events.size();
      };
      hooks.analysed = [&](const WindowedFindings::Window& w) {
        EXPECT_EQ(&w.index.records(), &w.trace.records);
        {
          std::lock_guard lock(spans);
          analysed_from.push_back(w.span.from_ns);
          ASSERT_LE(analysed_from.size(), read_from.size());
          EXPECT_EQ(w.span.from_ns, read_from[analysed_from.size() - 1]);
        }
        for (const Finding& f : since) {
          if (f.correlation_id != 0) {
            EXPECT_GE(w.index.LaunchingCall(f.correlation_id), 0) << Describe(0, f);
            ++looked_up;
          }
          for (const Blamed& x : f.blamed) {
            EXPECT_FALSE(w.index.OpsOf(x.correlation_id).empty()) << Describe(0, f);
          }
        }
        since.clear();
      };
      auto ran = plan->Run(
          [&](Finding&& f, uint64_t seq) {
            since.push_back(f);
            out.push_back({seq, Describe(seq, f)});
          },
          {}, hooks);
      ASSERT_TRUE(ran.has_value()) << ran.error();
      EXPECT_EQ(read_from.size(), plan->windows());
      EXPECT_EQ(analysed_from, read_from);
      EXPECT_EQ(read_nvtx, loaded->front().records.nvtx_events.size());
      for (const Finding& f : since) {  // after the last window: the process's other passes
        EXPECT_EQ(f.correlation_id, 0u) << Describe(0, f);
        EXPECT_TRUE(f.blamed.empty()) << Describe(0, f);
      }
      std::sort(out.begin(), out.end());
      std::vector<std::string> lines;
      for (auto& [seq, line] : out) lines.push_back(std::move(line));
      EXPECT_TRUE(SameLines(lines, WholeFindings(path, options)));
    }
  }
  EXPECT_GT(several, 8u);
  EXPECT_GT(looked_up, 100u);
}

TEST(WindowedFindingsTest, TheReportsOfTheWindowsAreTheWholeTraces) {
  // The digest's groups (worst findings chosen by seq among ties) and --all's list.
  TempDir dir;
  const TraceBuilder b = FindingsLoop(7, 60);
  const std::string path = dir.Path("loop.pb");
  b.WriteFlushed(path, 100, 50);
  for (const FindingsOptions& options : OptionSets()) {
    auto plan = WindowedFindings::Plan(path, options, LimitsFor(100, 50, 32));
    ASSERT_TRUE(plan.has_value());
    ASSERT_TRUE(plan->exact()) << plan->why_inexact();
    EXPECT_GT(plan->windows(), 5u);
    FindingsDigest grouped, all(true);
    grouped.BeginProcess();
    std::vector<std::pair<uint64_t, Finding>> found;
    ASSERT_TRUE(plan->Run([&](Finding&& f, uint64_t seq) {
                      grouped.Add(Finding(f), seq);
                      found.push_back({seq, std::move(f)});
                    })
                    .has_value());
    all.Add(InFindOrder(std::move(found)));
    std::vector<std::string> warnings;
    auto loaded = LoadTraceFile(path, &warnings);
    ASSERT_TRUE(loaded.has_value());
    const ProcessTrace& whole = loaded->front();
    FindingsDigest grouped_whole, all_whole(true);
    grouped_whole.BeginProcess();
    StreamFindings(whole, options,
                   [&](Finding&& f, uint64_t seq) { grouped_whole.Add(std::move(f), seq); });
    all_whole.Add(FindFindings(whole, options));
    const FindingsReportContext context{.thresholds = options, .trace_ns = whole.window_ns()};
    EXPECT_EQ(FindingsTable(grouped, context), FindingsTable(grouped_whole, context));
    EXPECT_EQ(FindingsJson(grouped, context), FindingsJson(grouped_whole, context));
    // AddTo: only the findings that can become their group's worst come with their text.
    FindingsDigest added;
    ASSERT_TRUE(plan->AddTo(&added).has_value());
    EXPECT_EQ(FindingsTable(added, context), FindingsTable(grouped_whole, context));
    EXPECT_EQ(FindingsJson(added, context), FindingsJson(grouped_whole, context));
    FindingsReportContext listed = context;
    listed.all = true;
    EXPECT_EQ(FindingsCsv(all, listed), FindingsCsv(all_whole, listed));
  }
}

TEST(WindowedFindingsTest, AStreamSynchronisedWithoutWorkInItsWindowFollowsItsLegacyLinks) {
  // Stream 13 (no STREAM record: blocking) has work only in the first window; in the second,
  // a synchronisation of it waits for the legacy stream's kernel, as the whole trace says.
  TraceBuilder b;
  b.AddContext(1, 0);
  b.Launch("early", 10, 13, 15, 30, 13, 1);
  b.Api("cudaStreamSynchronize", 31, 40, 1);
  b.Launch("legacy", 5000, 5003, 5010, 5200, 0, 2);
  const uint64_t corr = b.Api("cudaStreamSynchronize", 5005, 5201, 1);
  b.AddSync(SyncType::kStreamSynchronize, 5005, 5201, corr, 13);
  b.SetEnd(5300);
  TempDir dir;
  b.Write(dir.Path("t.pb"));
  const FindingsOptions options;
  const Windowed w =
      WindowedFindingsOf(dir.Path("t.pb"), options, {.horizon_ns = 1000, .cut_every_records = 1});
  ASSERT_TRUE(w.exact) << w.why;
  EXPECT_GT(w.windows, 1u);
  const std::vector<std::string> whole = WholeFindings(dir.Path("t.pb"), options);
  ASSERT_FALSE(whole.empty());
  EXPECT_NE(whole.front().find("via the legacy default stream"), std::string::npos) << whole.front();
  EXPECT_TRUE(SameLines(w.lines, whole));
}

// A cut may fall while a host function runs (nothing recorded runs then): the operations of later
// windows queued behind it, on its stream or through an event recorded after it, still wait
// behind it, as in the whole trace.
TEST(WindowedFindingsTest, WorkQueuedBehindAHostFunctionOfAnEarlierWindowWaitsForIt) {
  TraceBuilder b;
  b.AddContext(1, 0);
  b.AddStream(14, StreamType::kNonBlocking);
  b.AddStream(15, StreamType::kNonBlocking);
  b.Launch("first", 10, 13, 15, 115, 14, 1);
  b.Api("cudaLaunchHostFunc", 20, 22, 1);  // runs from 115 to about 2115
  b.records().api_calls.back().stream_id = 14;
  b.AddEvent(1, 1, b.Api("cudaEventRecord", 23, 24, 1), 14);
  // Nothing recorded runs from 115 to 1000: a cut falls there.
  b.Launch("second", 1000, 1003, 2121, 2221, 14, 1);
  const uint64_t wait = b.Api("cudaStreamWaitEvent", 1005, 1006, 1);
  b.AddSync(SyncType::kStreamWaitEvent, 1005, 1006, wait, 15, 1);
  b.Launch("third", 1007, 1010, 2118, 2200, 15, 1);
  b.Api("cudaDeviceSynchronize", 1011, 2222, 1);
  b.SetEnd(2300);
  TempDir dir;
  b.Write(dir.Path("t.pb"));
  FindingsOptions options;
  options.idle_share = 0.1;
  const Windowed w =
      WindowedFindingsOf(dir.Path("t.pb"), options, {.horizon_ns = 100, .cut_every_records = 1});
  ASSERT_TRUE(w.exact) << w.why;
  EXPECT_GT(w.windows, 1u);
  const std::vector<std::string> whole = WholeFindings(dir.Path("t.pb"), options);
  EXPECT_TRUE(SameLines(w.lines, whole));
  // The gap before "third" (115 to 2118 µs): the host outside calls until "third"'s launch at
  // 1007 (but for "second"'s launch, 1000-1003), that launch call, then the host function,
  // through the event.
  const ProcessTrace t = b.Build();
  const TraceIndex index(t);
  const std::vector<DeviceIdle> devices = ClassifyIdle(index);
  ASSERT_EQ(devices.size(), 1u);
  const IdleTotals totals = SumIdle(devices[0].pieces, 0, UINT64_MAX);
  EXPECT_EQ(totals.host_function_ns, 1'108'000u);
  EXPECT_EQ(totals.launch_ns, 6'000u);
}

// `profview memory`'s figures in windows (memory_in_windows.h) are the whole trace's: the same
// loops, whose allocations are freed windows later, with their memory records.
TEST(WindowedFindingsTest, MemoryInWindowsIsTheWholeTraces) {
  TempDir dir;
  size_t several = 0, exact = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    TraceBuilder b = FindingsLoop(seed, 30);
    // Allocations that live across steps: freed in reverse order at the end.
    const uint64_t first = b.records().api_calls.front().start_ns;
    for (uint64_t i = 0; i < 20; ++i) {
      b.records().memory_ops.push_back(MemoryOp{.operation = MemoryOperation::kAllocation,
                                                .memory_kind = MemoryKind::kDevice,
                                                .address = 0x9000000 + i * 0x1000,
                                                .bytes = 4096 * (i + 1),
                                                .time_ns = first + 5'000 + i * 900'000,
                                                .device_id = static_cast<uint32_t>(i % 2)});
    }
    const std::string path = dir.Path("loop.pb");
    b.WriteFlushed(path, 100, 50);
    auto windowed = AnalyzeMemoryInWindows(path, false, LimitsFor(100, 50, 24));
    ASSERT_TRUE(windowed.has_value());
    if (!windowed->has_value()) continue;
    ++exact;
    std::vector<std::string> warnings;
    const auto loaded = LoadTraceFile(path, &warnings);
    ASSERT_TRUE(loaded.has_value());
    const ProcessTrace& t = loaded->front();
    const TraceIndex index(t);
    const StreamModel model(index);
    std::vector<MemoryReport> whole{AnalyzeMemory(t, index, model)};
    std::vector<UnifiedMemoryReport> whole_unified{AnalyzeUnifiedMemory(t, index)};
    std::vector<MemoryTimeline> whole_timeline{BuildMemoryTimeline(t, index)};
    std::vector<MemoryPoolReport> whole_pools{AnalyzeMemoryPools(t)};
    MemoryResults& w = **windowed;
    std::vector<MemoryReport> reports{w.report};
    std::vector<UnifiedMemoryReport> unified{w.unified};
    std::vector<MemoryTimeline> timelines{w.timeline};
    std::vector<MemoryPoolReport> pools{w.pools};
    EXPECT_EQ(MemoryJson(reports, &unified, &timelines, &pools),
              MemoryJson(whole, &whole_unified, &whole_timeline, &whole_pools));
    EXPECT_EQ(MemoryTimelineJson(timelines), MemoryTimelineJson(whole_timeline));
    EXPECT_FALSE(whole.front().churn.empty());
    several += WindowedFindingsOf(path, FindingsOptions{}, LimitsFor(100, 50, 24)).windows > 2;
  }
  EXPECT_GT(exact, 9u);
  EXPECT_GT(several, 9u);
}

TEST(WindowedFindingsTest, WhatWindowsCannotAnswerMakesThePlanInexact) {
  TempDir dir;
  const FindingsOptions options;
  {
    // An epoch's range is written at its end, long after cuts it starts before: the first read
    // keeps it for the second's windows (not inexact).
    const TraceBuilder b = FindingsLoop(3, 30, {.epoch_range = true});
    b.WriteFlushed(dir.Path("epoch.pb"), 50, 50);
    auto plan = WindowedFindings::Plan(dir.Path("epoch.pb"), options, LimitsFor(50, 50, 16));
    ASSERT_TRUE(plan.has_value());
    ASSERT_TRUE(plan->exact()) << plan->why_inexact();
    EXPECT_GT(plan->windows(), 5u);
    std::vector<std::pair<uint64_t, std::string>> found;
    ASSERT_TRUE(plan->Run([&](Finding&& f, uint64_t seq) {
                      found.push_back({seq, Describe(seq, f)});
                    })
                    .has_value());
    std::sort(found.begin(), found.end());
    std::vector<std::string> lines;
    for (auto& [seq, line] : found) lines.push_back(line);
    EXPECT_TRUE(SameLines(lines, WholeFindings(dir.Path("epoch.pb"), options)));
  }
  {
    TraceBuilder b = FindingsLoop(4, 10);
    b.records().unified_memory_counters.push_back(
        UnifiedMemoryCounter{.start_ns = b.records().api_calls.front().start_ns,
                             .end_ns = b.records().api_calls.front().end_ns});
    b.WriteFlushed(dir.Path("uvm.pb"), 50, 50);
    auto plan = WindowedFindings::Plan(dir.Path("uvm.pb"), options, LimitsFor(50, 50, 16));
    ASSERT_TRUE(plan.has_value());
    EXPECT_FALSE(plan->exact());
    EXPECT_FALSE(plan->Run([](Finding&&, uint64_t) {}).has_value());
  }
  {
    TraceBuilder b;
    b.NcclCommInit(1, 2, 0, 10, 20);
    b.NcclCollective("AllReduce", 1, 1024, 30, 40, 45, 60);
    b.Write(dir.Path("nccl.pb"));
    auto plan = WindowedFindings::Plan(dir.Path("nccl.pb"), options);
    ASSERT_TRUE(plan.has_value());
    EXPECT_FALSE(plan->exact());
  }
  {
    // Of 10 loops whose event synchronisations name old recordings, those where an earlier
    // window no longer carries the one named are inexact, the others equal the whole trace.
    size_t inexact = 0;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      const TraceBuilder b = FindingsLoop(seed, 30, {.stale_event_syncs = true});
      b.WriteFlushed(dir.Path("stale.pb"), 50, 50);
      const Windowed w = WindowedFindingsOf(dir.Path("stale.pb"), options, LimitsFor(50, 50, 16));
      if (!w.exact) {
        inexact += w.why.find("event") != std::string::npos;
      } else {
        EXPECT_TRUE(SameLines(w.lines, WholeFindings(dir.Path("stale.pb"), options)));
      }
    }
    EXPECT_GT(inexact, 0u);
  }
  EXPECT_FALSE(WindowedFindings::Plan(dir.Path("missing.pb"), options).has_value());
}

// --- Filters in windows (window_filter.h) --------------------------------------------------

// Filter sets for a loop's trace whose recording lasts `length_ns`: each kind alone and
// together, ranges that nest and ranges written long after they began, filters that leave the
// process out or match nothing.
std::vector<FilterOptions> FilterSets(uint64_t length_ns) {
  std::vector<FilterOptions> sets(12);
  sets[0].nvtx = {"step"};
  sets[1].nvtx = {"iteration"};
  sets[2].nvtx = {"epoch"};  // one range over every step, when the loop has it
  sets[3].tids = {101, 100};
  sets[4].tids = {100};
  sets[4].nvtx = {"iteration"};
  sets[5].from_ns = length_ns / 4;
  sets[5].to_ns = length_ns * 3 / 4;
  sets[6].from_ns = length_ns / 3;
  sets[7].pids = {4242};
  sets[7].to_ns = length_ns / 2;
  sets[7].nvtx = {"step", "epoch"};
  sets[8].pids = {1};  // another process's
  sets[9].nvtx = {"nothing"};
  sets[10].tids = {102, 7};
  sets[10].from_ns = length_ns / 5;
  sets[11].tids = {101, 100};  // active in the first windows only
  sets[11].to_ns = length_ns / 3;
  return sets;
}

std::string FilterName(const FilterOptions& f) {
  std::string s;
  for (uint32_t pid : f.pids) s += " --pid " + std::to_string(pid);
  for (uint32_t tid : f.tids) s += " --tid " + std::to_string(tid);
  for (const std::string& n : f.nvtx) s += " --nvtx " + n;
  if (f.from_ns) s += " --from " + std::to_string(*f.from_ns);
  if (f.to_ns) s += " --to " + std::to_string(*f.to_ns);
  return s;
}

// The whole trace filtered as profview filters it: its process (if kept) and what matched.
struct WholeFiltered {
  std::optional<ProcessTrace> trace;
  FilterMatches matches;
};
WholeFiltered FilterWhole(const std::string& path, const FilterOptions& filters) {
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(path, &warnings);
  EXPECT_TRUE(loaded.has_value());
  WholeFiltered out;
  auto kept = FilterProcesses(std::move(*loaded), filters, &out.matches);
  EXPECT_TRUE(kept.has_value());
  if (!kept->empty()) out.trace = std::move(kept->front());
  return out;
}

void AppendTimed(const TraceRecords& from, TraceRecords* to) {
  ForEachList(from, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsTimed<T>) ListOf<T>(*to).insert(ListOf<T>(*to).end(), list.begin(), list.end());
  });
}

// The same timed records of every kind, in any order.
::testing::AssertionResult SameTimedRecords(TraceRecords a, TraceRecords b) {
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  ForEachList(a, [&]<typename T>(std::vector<T>& list) {
    if constexpr (kIsTimed<T>) {
      std::vector<T>& other = ListOf<T>(b);
      auto key = [](const T& x) {
        uint64_t t = 0, corr = 0;
        if constexpr (kHasTime<T>) t = StartNs(x);
        if constexpr (kHasCorrelation<T>) corr = x.correlation_id;
        return std::pair{t, corr};
      };
      auto by_key = [&](const T& x, const T& y) { return key(x) < key(y); };
      std::stable_sort(list.begin(), list.end(), by_key);
      std::stable_sort(other.begin(), other.end(), by_key);
      if (result && !std::is_permutation(list.begin(), list.end(), other.begin(), other.end())) {
        result = ::testing::AssertionFailure()
                 << RecordKind<T>::kList << ": " << list.size() << " in windows, " << other.size()
                 << " in the whole trace";
      }
    }
  });
  return result;
}

// What WindowFilter makes of a trace read in windows: the timed records its windows keep, after
// as many reads as Settle asks for, and a further read's (Apply).
struct FilteredInWindows {
  WindowFilter::Outcome outcome = WindowFilter::Outcome::kInexact;
  std::string why;
  int reads = 0;
  size_t windows = 0;
  bool kept = false;
  FilterMatches matches;
  std::vector<Interval> analysed;
  TraceRecords learnt, applied;
};
FilteredInWindows FilterInWindows(const std::string& path, const FilterOptions& filters,
                                  const WindowLimits& limits) {
  WindowFilter filter(filters);
  FilteredInWindows out;
  ProcessTrace whole;
  while (out.reads < 3) {
    out.learnt = {};
    auto read = ReadInWindows(path, limits, [&](ProcessTrace& w, const WindowSpan& span) {
      if (filter.Learn(&w, span)) AppendTimed(w.records, &out.learnt);
    });
    EXPECT_TRUE(read.has_value() && read->exact);
    if (!read || !read->exact) return out;
    ++out.reads;
    out.windows = read->windows;
    whole = std::move(read->whole);
    out.outcome = filter.Settle(whole, &out.why);
    if (out.outcome != WindowFilter::Outcome::kReadAgain) break;
  }
  out.kept = filter.kept();
  out.matches = filter.matches();
  out.analysed = filter.Windows(whole);
  if (out.kept) {
    auto read = ReadInWindows(path, limits, [&](ProcessTrace& w, const WindowSpan&) {
      filter.Apply(&w);
      AppendTimed(w.records, &out.applied);
    });
    EXPECT_TRUE(read.has_value() && read->exact);
  }
  return out;
}

void ExpectSameMatches(const FilterMatches& windows, const FilterMatches& whole) {
  EXPECT_EQ(windows.pids, whole.pids);
  EXPECT_EQ(windows.tids, whole.tids);  // in the same order: a findings partial lists them
  EXPECT_EQ(windows.nvtx, whole.nvtx);
}

TEST(WindowedFindingsTest, FilteredWindowsKeepTheRecordsTheFilteredWholeTraceKeeps) {
  TempDir dir;
  size_t read_again = 0, several = 0, cases = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed);
    TraceBuilder b = FindingsLoop(seed, 30, {.epoch_range = seed % 2 == 0});
    if (seed % 4 == 1) {
      // The recording starts before the header says (a record precedes it).
      b.header().start_time_ns = b.records().api_calls[1].start_ns;
    } else if (seed % 4 == 3) {
      // The recording ends with a mark that --from/--to leave out (it starts where the
      // recording ends).
      const uint64_t last = b.Build().end_ns();
      b.AddRange("the end", (last - kT0) / 1000.0 + 1, (last - kT0) / 1000.0 + 1, 100,
                 NvtxKind::kMark);
      b.SetEnd(0);
    }
    const std::string path = dir.Path("loop.pb");
    const WindowLimits limits = WriteFlushedForWindows(b, seed, path);
    const ProcessTrace loaded = FilterWhole(path, {}).trace.value();
    for (const FilterOptions& filters : FilterSets(loaded.window_ns())) {
      SCOPED_TRACE(FilterName(filters));
      const FilteredInWindows w = FilterInWindows(path, filters, limits);
      ASSERT_EQ(w.outcome, WindowFilter::Outcome::kExact) << w.why;
      ++cases;
      read_again += w.reads > 1;
      several += w.windows > 2;
      const WholeFiltered whole = FilterWhole(path, filters);
      ExpectSameMatches(w.matches, whole.matches);
      ASSERT_EQ(w.kept, whole.trace.has_value());
      if (!w.kept) continue;
      EXPECT_EQ(w.analysed, whole.trace->windows);
      EXPECT_TRUE(SameTimedRecords(w.learnt, whole.trace->records));
      EXPECT_TRUE(SameTimedRecords(w.applied, whole.trace->records));
    }
  }
  EXPECT_GT(several, cases * 3 / 4);
  EXPECT_GT(read_again, cases / 10);  // late ranges and moved recordings were met
}

TEST(WindowedFindingsTest, FindingsWithFiltersInWindowsAreTheFilteredWholeTraces) {
  // Every finding with its seq, the time analysed and what the filters matched, for the filter
  // sets above and the option sets that make each rule fire.
  TempDir dir;
  size_t exact = 0, cases = 0, findings = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    const TraceBuilder b = FindingsLoop(seed, 30, {.epoch_range = seed % 3 == 0});
    const std::string path = dir.Path("loop.pb");
    const WindowLimits limits = WriteFlushedForWindows(b, seed * 7, path);
    const ProcessTrace loaded = FilterWhole(path, {}).trace.value();
    for (const FilterOptions& filters : FilterSets(loaded.window_ns())) {
      SCOPED_TRACE(FilterName(filters));
      const WholeFiltered whole = FilterWhole(path, filters);
      for (const FindingsOptions& options : OptionSets()) {
        ++cases;
        auto plan = WindowedFindings::Plan(path, options, filters, limits);
        ASSERT_TRUE(plan.has_value());
        // A pageable copy the --to edge leaves unpaired pairs with nothing in the whole trace
        // either: only --nvtx, which keeps calls windows apart, may stop the windows here.
        if (filters.nvtx.empty()) EXPECT_TRUE(plan->exact()) << plan->why_inexact();
        if (!plan->exact()) continue;
        ++exact;
        ExpectSameMatches(plan->matches(), whole.matches);
        ASSERT_EQ(plan->kept(), whole.trace.has_value());
        if (!plan->kept()) continue;
        EXPECT_EQ(plan->whole().window_ns(), whole.trace->window_ns());
        std::vector<std::pair<uint64_t, std::string>> found;
        ASSERT_TRUE(plan->Run([&](Finding&& f, uint64_t seq) {
                          found.push_back({seq, Describe(seq, f)});
                        })
                        .has_value());
        std::sort(found.begin(), found.end());
        std::vector<std::string> lines;
        for (auto& [seq, line] : found) lines.push_back(line);
        std::vector<std::pair<uint64_t, std::string>> expected;
        StreamFindings(*whole.trace, options, [&](Finding&& f, uint64_t seq) {
          expected.push_back({seq, Describe(seq, f)});
        });
        std::sort(expected.begin(), expected.end());
        std::vector<std::string> whole_lines;
        for (auto& [seq, line] : expected) whole_lines.push_back(line);
        EXPECT_TRUE(SameLines(lines, whole_lines));
        findings += lines.size();
      }
    }
  }
  EXPECT_GT(exact, cases * 3 / 4);  // the filters rarely stop the windows
  EXPECT_GT(findings, 1000u);
}

TEST(WindowedFindingsTest, FiltersThatSelectNoTimeLeaveTheErrorToTheWholePath) {
  TempDir dir;
  const TraceBuilder b = FindingsLoop(5, 5);
  b.Write(dir.Path("t.pb"));
  FilterOptions filters;
  filters.from_ns = 5'000;
  filters.to_ns = 5'000;
  auto plan = WindowedFindings::Plan(dir.Path("t.pb"), FindingsOptions{}, filters);
  ASSERT_TRUE(plan.has_value());
  EXPECT_FALSE(plan->exact());
}

}  // namespace
}  // namespace libprof::analysis::testing
