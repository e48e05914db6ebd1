// Proves that findings accumulated one process at a time (FindingsDigest) give what grouping the
// whole list at once gave before: the same groups, counts, sums and worst finding (the first of
// the largest time lost, also under ties), the same totals, and the same report bytes, on the
// scenarios of several processes and on random findings with many ties, whether each process's
// list is added or its findings are streamed in any order (StreamFindings, with their seq); and
// that without --all it keeps no finding besides each group's worst and the start-up ones.
#include "analysis/rules/findings_digest.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string_view>
#include <tuple>

#include "analysis/reports/findings_report.h"
#include "analysis/rules/findings_diff.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

// The grouping as the reports did it over one list before the digest (findings.cc, 2026-11-24),
// with start-up's waits grouped without what they waited for (2026-11-29) and device findings
// per device (2026-11-30): the oracle the digest is held to.
std::vector<FindingGroup> ReferenceGroups(const std::vector<Finding>& findings) {
  using Key = std::tuple<bool, std::string_view, std::string_view, std::string_view,
                         std::string_view, std::string_view, int64_t>;
  std::map<Key, FindingGroup> groups;
  for (const Finding& f : findings) {
    FindingGroup& g =
        groups[{f.in_start_up, RuleName(f.rule), f.api,
                f.blamed.empty() || f.in_start_up ? std::string_view()
                                                  : std::string_view(f.blamed.front().name),
                DetailsGroupKey(f.details), f.call_site,
                f.device_id ? int64_t{*f.device_id} : int64_t{-1}}];
    if (g.count == 0 || f.blocked_ns > g.worst.blocked_ns) g.worst = f;
    ++g.count;
    g.total_blocked_ns += f.blocked_ns;
    g.total_host_ns += f.host_duration_ns;
  }
  std::vector<FindingGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const FindingGroup& a, const FindingGroup& b) {
    if (a.worst.in_start_up != b.worst.in_start_up) return b.worst.in_start_up;
    return a.total_blocked_ns > b.total_blocked_ns;
  });
  return out;
}

// Groups compared on what the reports print; the worst finding by its identity (pid,
// correlation id, start, rule) and explanation.
void ExpectSameGroups(const std::vector<FindingGroup>& got, const std::vector<FindingGroup>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].count, want[i].count);
    EXPECT_EQ(got[i].total_blocked_ns, want[i].total_blocked_ns);
    EXPECT_EQ(got[i].total_host_ns, want[i].total_host_ns);
    const Finding& a = got[i].worst;
    const Finding& b = want[i].worst;
    EXPECT_EQ(std::tie(a.pid, a.correlation_id, a.host_start_ns, a.rule, a.blocked_ns, a.thread_id),
              std::tie(b.pid, b.correlation_id, b.host_start_ns, b.rule, b.blocked_ns, b.thread_id));
    EXPECT_EQ(a.explanation, b.explanation);
  }
}

// Random findings of a few processes with few distinct keys and times, so that groups are
// shared across processes and the largest time lost is often tied.
std::vector<std::vector<Finding>> RandomProcesses(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<RuleId> rules = {RuleId::kSyncApi, RuleId::kBlockedOnPriorWork,
                                     RuleId::kGpuIdleGaps, RuleId::kGpuLowUtilization,
                                     RuleId::kAllocChurn, RuleId::kStartUp};
  const std::vector<std::string> apis = {"cudaMemcpy", "cudaStreamSynchronize", ""};
  const std::vector<std::string> names = {"", "gemm", "softmax"};
  std::vector<std::vector<Finding>> processes(1 + rng() % 5);
  uint64_t corr = 1;
  for (size_t p = 0; p < processes.size(); ++p) {
    const size_t n = rng() % 300;
    for (size_t i = 0; i < n; ++i) {
      Finding f;
      f.rule = rules[rng() % rules.size()];
      f.api = apis[rng() % apis.size()];
      f.pid = 100 + static_cast<uint32_t>(p);
      f.thread_id = static_cast<uint32_t>(rng() % 3);
      f.host_start_ns = (i / 4) * 1000;  // ties, broken by correlation id, then by seq
      f.correlation_id = corr++;
      f.host_duration_ns = 50 + rng() % 4;
      f.blocked_ns = rng() % 4;  // many ties
      if (const std::string& name = names[rng() % names.size()]; !name.empty()) {
        f.blamed.push_back({.kind = "kernel", .name = name});
      }
      if (f.rule == RuleId::kGpuIdleGaps || f.rule == RuleId::kGpuLowUtilization) {
        f.device_id = static_cast<uint32_t>(rng() % 2);
        f.correlation_id = 0;  // device findings have none: only seq orders them
      }
      f.call_site = rng() % 2 ? "" : "loop (app)";
      f.in_start_up = TimeKindOf(Rule(f.rule).family) == TimeKind::kHost && rng() % 5 == 0;
      f.explanation = "finding " + std::to_string(p) + "." + std::to_string(i);
      processes[p].push_back(std::move(f));
    }
    // As FindFindings returns them.
    std::stable_sort(processes[p].begin(), processes[p].end(), [](const Finding& a, const Finding& b) {
      return std::tie(a.host_start_ns, a.correlation_id) < std::tie(b.host_start_ns, b.correlation_id);
    });
  }
  return processes;
}

std::vector<Finding> Concatenated(const std::vector<std::vector<Finding>>& processes) {
  std::vector<Finding> all;
  for (const auto& p : processes) all.insert(all.end(), p.begin(), p.end());
  return all;
}

TEST(FindingsDigestTest, RandomProcessesGroupAsTheWholeListDid) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    const auto processes = RandomProcesses(seed);
    const std::vector<Finding> all = Concatenated(processes);
    FindingsDigest digest;
    for (const auto& p : processes) digest.Add(p);
    ExpectSameGroups(digest.Groups(), ReferenceGroups(all));
    EXPECT_EQ(digest.size(), all.size());
    EXPECT_TRUE(digest.all().empty());  // nothing kept but the groups without --all
    std::set<uint32_t> pids;
    size_t host = 0, start_ups = 0;
    uint64_t host_ns = 0;
    for (const Finding& f : all) {
      pids.insert(f.pid);
      const TimeKind kind = TimeKindOf(Rule(f.rule).family);
      if (kind == TimeKind::kHost) {
        ++host;
        host_ns += f.blocked_ns;
      }
      start_ups += kind == TimeKind::kStartUp;
    }
    EXPECT_EQ(digest.processes(), pids.size());
    EXPECT_EQ(digest.Count(TimeKind::kHost), host);
    EXPECT_EQ(digest.Totals().host, host_ns);
    EXPECT_EQ(digest.start_ups().size(), start_ups);
  }
}

TEST(FindingsDigestTest, FindingsStreamedInAnyOrderGroupAsTheirSortedListDoes) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    const auto processes = RandomProcesses(seed);
    std::mt19937_64 rng(seed);
    FindingsDigest digest;
    for (const auto& p : processes) {
      // seq: the place in the sorted list, which ties of time and correlation id fall back on.
      std::vector<std::pair<uint64_t, Finding>> shuffled;
      for (size_t i = 0; i < p.size(); ++i) shuffled.push_back({i, p[i]});
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      digest.BeginProcess();
      for (auto& [seq, f] : shuffled) digest.Add(std::move(f), seq);
    }
    ExpectSameGroups(digest.Groups(), ReferenceGroups(Concatenated(processes)));
  }
}

TEST(FindingsDigestTest, ReportsOfProcessesAddedInTurnEqualTheConcatenatedList) {
  TempDir dir;
  // Several processes with host, GPU, pattern and start-up findings, and two ranks.
  std::vector<ProcessTrace> traces;
  int n = 0;
  for (const TraceBuilder& b : {StreamsScenario(), ThreadsScenario(), IdleScenario(),
                                LaunchBoundScenario(), OverlapScenario(), StartUpScenario(),
                                Nrm2Scenario()}) {
    traces.push_back(b.RoundTrip(dir.Path("t" + std::to_string(n++) + ".pb")));
  }
  for (bool all : {false, true}) {
    SCOPED_TRACE(all);
    FindingsReportContext context{.all = all};
    FindingsDigest digest(all);
    std::vector<Finding> list;
    for (const ProcessTrace& t : traces) {
      std::vector<Finding> part = FindFindings(t, {});
      list.insert(list.end(), part.begin(), part.end());
      digest.Add(std::move(part));
    }
    ASSERT_GT(list.size(), 20u);
    ExpectSameGroups(digest.Groups(), ReferenceGroups(list));
    EXPECT_EQ(FindingsTable(digest, context), FindingsTable(list, context));
    EXPECT_EQ(FindingsJson(digest, context), FindingsJson(list, context));
    EXPECT_EQ(FindingsCsv(digest, context), FindingsCsv(list, context));
    EXPECT_EQ(FindingsHeadline(digest, context), FindingsHeadline(list, context));
    if (!all) {
      // Streamed as found, each process's findings in the passes' order, not by time.
      FindingsDigest streamed;
      size_t n = 0;
      for (const ProcessTrace& t : traces) {
        streamed.BeginProcess();
        StreamFindings(t, {}, [&](Finding&& f, uint64_t seq) {
          ++n;
          streamed.Add(std::move(f), seq);
        });
      }
      EXPECT_EQ(n, list.size());
      ExpectSameGroups(streamed.Groups(), ReferenceGroups(list));
      EXPECT_EQ(FindingsTable(streamed, context), FindingsTable(list, context));
      EXPECT_EQ(FindingsJson(streamed, context), FindingsJson(list, context));

      // With WantsWhole asked first: the host findings that cannot become their group's worst
      // come without their text, and the reports are the same.
      FindingsDigest filtered;
      size_t without_text = 0;
      for (const ProcessTrace& t : traces) {
        filtered.BeginProcess();
        StreamFindings(
            t, {},
            [&](Finding&& f, uint64_t seq) {
              if (f.explanation.empty()) ++without_text;
              filtered.Add(std::move(f), seq);
            },
            [&](const Finding& f, uint64_t seq) { return filtered.WantsWhole(f, seq); });
      }
      EXPECT_GT(without_text, 0u);
      ExpectSameGroups(filtered.Groups(), ReferenceGroups(list));
      EXPECT_EQ(FindingsTable(filtered, context), FindingsTable(list, context));
      EXPECT_EQ(FindingsJson(filtered, context), FindingsJson(list, context));
      EXPECT_EQ(FindingsCsv(filtered, context), FindingsCsv(list, context));
      EXPECT_EQ(FindingsHeadline(filtered, context), FindingsHeadline(list, context));
    }
    EXPECT_EQ(digest.all().size(), all ? list.size() : 0u);
  }
}

// Waits on CUDA graphs group whichever graph they waited for: a program that captures and
// instantiates a graph per step waits on a new graph id every time (.carry/s17/
// graph_reinstantiate.cu: 300 groups of one). A kernel is still its own group.
TEST(FindingsDigestTest, WaitsOnDifferentGraphsAreOneGroup) {
  FindingsDigest digest;
  digest.BeginProcess();
  uint64_t seq = 0;
  for (const auto& [kind, name, blocked] :
       {std::tuple{"graph", "[graph 7]", 10u}, std::tuple{"graph", "[graph 8]", 30u},
        std::tuple{"graph", "[graph 9]", 20u}, std::tuple{"kernel", "gemm", 5u}}) {
    Finding f;
    f.rule = RuleId::kSyncApi;
    f.api = "cudaStreamSynchronize";
    f.pid = 1;
    f.correlation_id = seq + 1;
    f.host_start_ns = seq * 100;
    f.blocked_ns = blocked;
    f.blamed.push_back({.kind = kind, .name = name});
    digest.Add(std::move(f), seq++);
  }
  const std::vector<FindingGroup> groups = digest.Groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].count, 3u);
  EXPECT_EQ(groups[0].total_blocked_ns, 60u);
  EXPECT_EQ(groups[0].worst.blamed.front().name, "[graph 8]");
  EXPECT_EQ(groups[1].count, 1u);
}

// A wait whose call site names a line of Python groups by that line whichever kernel it met
// (a CuPy loop's cupy.asnumpy waited on 7 kernels over 400 steps); a native call site, a
// function that may wait at several places, keeps the blamed work in the key. diff's key
// (findings_diff.h) does the same.
TEST(FindingsDigestTest, WaitsAtOnePythonLineAreOneGroup) {
  for (const bool line : {true, false}) {
    FindingsDigest digest;
    digest.BeginProcess();
    FindingTotals totals;
    uint64_t seq = 0;
    for (const auto& [kernel, blocked] :
         {std::pair{"cupy_add", 10u}, std::pair{"cupy_sqrt", 30u}, std::pair{"cupy_exp", 20u}}) {
      Finding f;
      f.rule = RuleId::kBlockedOnPriorWork;
      f.api = "cudaMemcpyAsync";
      f.pid = 1;
      f.correlation_id = seq + 1;
      f.host_start_ns = seq * 100;
      f.blocked_ns = blocked;
      f.call_site =
          line ? "cudaMemcpyAsync ← loop.py:8 in <module>" : "cudaMemcpyAsync ← main (app)";
      f.call_site_line = line;
      f.blamed.push_back({.kind = "kernel", .name = kernel});
      totals.Add(f);
      digest.Add(std::move(f), seq++);
    }
    const std::vector<FindingGroup> groups = digest.Groups();
    ASSERT_EQ(groups.size(), line ? 1u : 3u);
    EXPECT_EQ(groups[0].worst.blamed.front().name, "cupy_sqrt");
    EXPECT_EQ(totals.Totals().size(), line ? 1u : 3u);
  }
}

}  // namespace
}  // namespace libprof::analysis::testing
