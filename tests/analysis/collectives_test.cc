// Proves the collectives analysis on synthetic NCCL traces whose truth is known: the collectives
// table (operation, ranks, calls, nccl-tests bytes and bandwidths), the matching of instances
// across ranks, clock offsets found within 5 µs, each rank's wait found within 2%, the late rank
// named, unmatched calls listed rather than dropped, and payloads that cannot be decoded kept raw
// with a warning.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/commands.h"
#include "analysis/metrics/collective_stats.h"
#include "analysis/metrics/rank_skew.h"
#include "analysis/model/collectives.h"
#include "analysis/model/trace_index.h"
#include "analysis/reports/timeline_export.h"
#include "tests/analysis/scenarios.h"
#include "tests/analysis/trace_builder.h"

#include <nlohmann/json.hpp>
#include <map>
#include <sstream>

namespace libprof::analysis {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

constexpr uint64_t kComm = 0x5eed5eed12345678ull;

ProcessCollectives Extract(const ProcessTrace& trace) { return ExtractCollectives(TraceIndex(trace)); }

TEST(CollectivesTest, OneRankTableHasOperationCountBytesAndBandwidth) {
  TraceBuilder b;
  b.NcclCommInit(kComm, 1, 0, 10, 20);
  // Three AllReduces of 4 MiB (200 µs each on the device) and one AllGather of 1 MiB.
  for (int i = 0; i < 3; ++i) {
    b.NcclCollective("AllReduce", kComm, 4 << 20, 100 + i * 1000, 110 + i * 1000, 120 + i * 1000,
                     320 + i * 1000);
  }
  b.NcclCollective("AllGather", kComm, 1 << 20, 5000, 5010, 5020, 5120);
  b.SetEnd(6000);
  const ProcessCollectives p = Extract(b.Build());
  ASSERT_EQ(p.calls.size(), 4u);
  EXPECT_EQ(p.calls[0].op, "AllReduce");
  EXPECT_EQ(p.calls[0].comm, kComm);
  EXPECT_EQ(p.calls[0].comm_size, 1u);
  EXPECT_EQ(p.calls[0].comm_rank, 0);
  EXPECT_EQ(p.calls[0].reduction, "Sum");
  EXPECT_TRUE(p.calls[0].has_device_work);
  EXPECT_EQ(p.calls[0].duration(), 200'000u);
  EXPECT_EQ(p.calls[2].seq, 2u);
  EXPECT_EQ(p.calls[3].seq, 3u);  // numbered per communicator, whatever the operation

  const std::vector<ProcessCollectives> all{p};
  const auto rows = CollectiveTable(all);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].op, "AllReduce");
  EXPECT_EQ(rows[0].calls, 3u);
  EXPECT_EQ(rows[0].bytes, 3u * (4 << 20));
  EXPECT_EQ(rows[0].time_ns, 600'000u);
  EXPECT_NEAR(rows[0].algbw_gbps, (4 << 20) / 200'000.0, 1e-9);  // bytes per ns = GB/s
  EXPECT_EQ(rows[0].busbw_gbps, 0.0);  // 2(n-1)/n with n = 1
}

TEST(CollectivesTest, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("AllReduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("AllGather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("ReduceScatter", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("Broadcast", 8), 1.0);
  CollectiveCall gather{.op = "AllGather", .comm_size = 8, .bytes = 1000};
  EXPECT_EQ(AlgorithmBytes(gather), 8000u);  // the whole gathered buffer
  CollectiveCall reduce{.op = "AllReduce", .comm_size = 8, .bytes = 1000};
  EXPECT_EQ(AlgorithmBytes(reduce), 1000u);
}

// A job of `ranks` ranks whose truth is known: per rank a clock offset; per instance true
// arrivals (one rank late by a known amount), a common true end with a small exit jitter.
struct Job {
  std::vector<double> offsets_us;
  std::vector<TraceBuilder> builders;
  std::vector<std::vector<double>> true_wait_us;  // [instance][rank]
  std::vector<int> late_rank;                     // per instance
};

Job MakeJob(int ranks, int instances, int drop_last_on_rank = -1) {
  Job job;
  job.offsets_us = {0, 137.25, -80.5, 412.75, 33.0, -250.0, 5.5, 99.0};
  job.offsets_us.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    job.builders.emplace_back(1000 + r);
    job.builders[r].header().rank = r;
    job.builders[r].NcclCommInit(kComm, ranks, r, 500 + job.offsets_us[r], 600 + job.offsets_us[r]);
  }
  uint32_t lcg = 12345;
  auto jitter = [&lcg](double amplitude) {
    lcg = lcg * 1664525u + 1013904223u;
    return ((lcg >> 8) / double(1 << 24) - 0.5) * 2 * amplitude;
  };
  for (int k = 0; k < instances; ++k) {
    const double base = 2000 + k * 5000;
    const int late = ((k % 3 == 0) ? 2 : (k % 3 == 1 ? ranks - 1 : 1)) % ranks;
    job.late_rank.push_back(late);
    std::vector<double> arrive(ranks);
    double last = 0;
    for (int r = 0; r < ranks; ++r) {
      arrive[r] = base + 10 * r + jitter(20) + (r == late ? 800 + 100 * (k % 4) : 0);
      last = std::max(last, arrive[r]);
    }
    const double transfer = 300;
    std::vector<double> waits(ranks);
    for (int r = 0; r < ranks; ++r) {
      waits[r] = last - arrive[r];
      if (k == instances - 1 && r == drop_last_on_rank) continue;
      const double off = job.offsets_us[r];
      const double end = last + transfer + jitter(0.5);  // ranks leave together, within 0.5 µs
      job.builders[r].NcclCollective("AllReduce", kComm, 1 << 20, arrive[r] - 15 + off,
                                     arrive[r] - 5 + off, arrive[r] + off, end + off);
    }
    job.true_wait_us.push_back(waits);
  }
  for (auto& b : job.builders) b.SetEnd(2000 + instances * 5000 + 1000);
  return job;
}

TEST(CollectivesTest, FourRanksOffsetsWaitsAndLateRanks) {
  const int kRanks = 4, kInstances = 30;
  Job job = MakeJob(kRanks, kInstances);
  std::vector<ProcessTrace> traces;
  std::vector<ProcessCollectives> processes;
  for (auto& b : job.builders) traces.push_back(b.Build());
  for (auto& t : traces) processes.push_back(Extract(t));
  const RankSkewReport report = AnalyzeRankSkew(processes, 20'000);

  ASSERT_EQ(report.instances.size(), size_t(kInstances));
  EXPECT_TRUE(report.unmatched.empty());
  // Offsets relative to rank 0, within 5 µs.
  for (int r = 0; r < kRanks; ++r) {
    const RankClock& clock = report.clocks[r];
    ASSERT_TRUE(clock.aligned);
    EXPECT_NEAR(clock.offset_ns / 1000.0, job.offsets_us[r] - job.offsets_us[0], 5.0)
        << "rank " << r;
    EXPECT_LT(clock.max_residual_ns, 5'000u);
  }
  // Waits within 2% (summed per rank over the instances), and the late rank of each instance.
  std::vector<double> found(kRanks, 0), truth(kRanks, 0);
  for (int k = 0; k < kInstances; ++k) {
    const CollectiveInstance& inst = report.instances[k];
    EXPECT_EQ(inst.seq, uint64_t(k));
    ASSERT_EQ(inst.members.size(), size_t(kRanks));
    EXPECT_EQ(inst.members[inst.late].rank, uint32_t(job.late_rank[k])) << "instance " << k;
    double others_truth = 0;
    for (int r = 0; r < kRanks; ++r) {
      found[r] += inst.members[r].wait_ns / 1000.0;
      truth[r] += job.true_wait_us[k][r];
      if (r != job.late_rank[k]) others_truth += job.true_wait_us[k][r];
    }
    EXPECT_NEAR(inst.others_wait_ns / 1000.0, others_truth, 0.02 * others_truth + 5);
    EXPECT_GT(inst.late_by_ns, 700'000u);
  }
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_NEAR(found[r], truth[r], 0.02 * truth[r]) << "rank " << r;
  }
  // Stragglers: ranks 2, 3 and 1 were each late in a third of the instances; rank 0 never.
  uint64_t late_total = 0;
  for (const StragglerRow& row : report.stragglers) {
    late_total += row.late;
    if (row.rank == 0) {
      EXPECT_EQ(row.late, 0u);
    }
    if (row.rank == 2) {
      EXPECT_EQ(row.late, uint64_t(kInstances / 3));
    }
  }
  EXPECT_EQ(late_total, uint64_t(kInstances));
}

TEST(CollectivesTest, EightRanksOffsetsWithinFiveMicroseconds) {
  Job job = MakeJob(8, 12);
  std::vector<ProcessTrace> traces;
  std::vector<ProcessCollectives> processes;
  for (auto& b : job.builders) traces.push_back(b.Build());
  for (auto& t : traces) processes.push_back(Extract(t));
  const RankSkewReport report = AnalyzeRankSkew(processes, 20'000);
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(report.clocks[r].offset_ns / 1000.0, job.offsets_us[r], 5.0) << "rank " << r;
  }
}

TEST(CollectivesTest, CallMissingOnOneRankIsListedNotDropped) {
  Job job = MakeJob(4, 5, /*drop_last_on_rank=*/3);
  std::vector<ProcessTrace> traces;
  std::vector<ProcessCollectives> processes;
  for (auto& b : job.builders) traces.push_back(b.Build());
  for (auto& t : traces) processes.push_back(Extract(t));
  const RankSkewReport report = AnalyzeRankSkew(processes, 20'000);
  EXPECT_EQ(report.instances.size(), 4u);
  ASSERT_EQ(report.unmatched.size(), 3u);  // the three ranks that did call it
  for (const UnmatchedCall& u : report.unmatched) {
    EXPECT_EQ(u.seq, 4u);
    EXPECT_EQ(u.reason, "seen on 3 of 4 ranks");
    EXPECT_NE(u.rank, 3u);
  }
}

TEST(CollectivesTest, CommandPrintsTablesAndUndecodablePayloadWarns) {
  TempDir dir;
  Job job = MakeJob(2, 4);
  // Rank 1's last payload cut short: kept raw, the call listed without a communicator.
  job.builders[1].records().nvtx_events.back().payloads[0].data.resize(12);
  CollectivesCommandOptions options;
  for (int r = 0; r < 2; ++r) {
    options.files.push_back(dir.Path("rank" + std::to_string(r) + ".pb"));
    job.builders[r].Write(options.files.back());
  }
  std::vector<std::string> warnings;
  auto text = RunCollectives(options, &warnings);
  ASSERT_TRUE(text) << text.error();
  EXPECT_NE(text->find("AllReduce"), std::string::npos) << *text;
  EXPECT_NE(text->find("Stragglers"), std::string::npos) << *text;
  EXPECT_NE(text->find("not matched across ranks"), std::string::npos) << *text;
  EXPECT_NE(text->find("no communicator id in its NVTX payload"), std::string::npos) << *text;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("kept raw: size 12, schema 16777221 says 24"), std::string::npos)
      << warnings[0];

  options.format = OutputFormat::kJson;
  warnings.clear();
  text = RunCollectives(options, &warnings);
  ASSERT_TRUE(text) << text.error();
  EXPECT_NE(text->find("\"late_rank\""), std::string::npos);
}

// The merged timeline puts every rank on the aligned clock: the kernels of one instance end
// together although the ranks' clocks are 70-310 µs apart; one process track per rank.
TEST(CollectivesTest, TimelineExportUsesAlignedClocks) {
  std::vector<ProcessTrace> traces;
  for (const TraceBuilder& b : testing::LateRankScenario()) traces.push_back(b.Build());
  std::ostringstream out;
  ASSERT_TRUE(ExportTimeline(traces, {}, &out).has_value());
  const auto json = nlohmann::json::parse(out.str());
  EXPECT_EQ(json["otherData"]["rank_clocks"], "aligned on the ends of matched NCCL collectives");
  std::map<int, std::vector<double>> ends;  // pid -> kernel ends (µs)
  std::map<int, std::string> names;
  for (const auto& e : json["traceEvents"]) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      names[e["pid"]] = e["args"]["name"];
    }
    if (e.value("cat", "") == "kernel") ends[e["pid"]].push_back(e["ts"].get<double>() + e["dur"].get<double>());
  }
  ASSERT_EQ(ends.size(), 4u);
  for (const auto& [pid, list] : ends) {
    ASSERT_EQ(list.size(), 3u);
    for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(list[k], ends.begin()->second[k], 1.0) << pid;
    EXPECT_EQ(names[pid].rfind("rank ", 0), 0u) << names[pid];
  }
}

}  // namespace
}  // namespace libprof::analysis
