// Proves the unified-memory picture on UnifiedMemoryScenario (hand-computed in scenarios.cc):
// migrations by direction with bytes and busy time; GPU fault groups attributed to the kernel
// running on the faulting device (inside, between and across kernels, two devices), with the
// allocation the address lies in; CPU faults per allocation with the migrations they caused;
// thrashing and throttling; a newer writer's counter kind skipped with a warning; the three
// findings rules; the summary's device rows; device memory over time and the failed allocation;
// and that every format renders.
#include "analysis/metrics/unified_memory.h"

#include <gtest/gtest.h>

#include "analysis/commands.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/summary.h"
#include "analysis/reports/memory_timeline_report.h"
#include "analysis/reports/unified_memory_report.h"
#include "analysis/rules/findings.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

constexpr uint64_t kMiB = 1 << 20;

class UnifiedMemoryTest : public ::testing::Test {
 protected:
  UnifiedMemoryTest() : trace_(UnifiedMemoryScenario().RoundTrip(dir_.Path("uvm.pb"))) {}
  TempDir dir_;
  ProcessTrace trace_;
};

TEST_F(UnifiedMemoryTest, MigrationsByDirection) {
  const UnifiedMemoryReport r = AnalyzeUnifiedMemory(trace_);
  ASSERT_EQ(r.migrations.size(), 2u);
  const UvmMigrationRow& htod = r.migrations[0];
  EXPECT_EQ(UvmDirection(htod.src_device_id, htod.dst_device_id), "host → device");
  EXPECT_EQ(htod.dst_device_id, 0u);
  EXPECT_EQ(htod.count, 128u);
  EXPECT_EQ(htod.bytes, 256 * kMiB);
  EXPECT_EQ(htod.busy_ns, 10'240'000u);  // back to back: one span
  const UvmMigrationRow& dtoh = r.migrations[1];
  EXPECT_EQ(UvmDirection(dtoh.src_device_id, dtoh.dst_device_id), "device → host");
  EXPECT_EQ(dtoh.count, 64u);
  EXPECT_EQ(dtoh.bytes, 256 * kMiB);
  EXPECT_EQ(dtoh.busy_ns, 64u * 50'000);
  EXPECT_EQ(UvmDirection(0, 1), "device 0 → device 1");
}

// Inside a kernel, between kernels, on another device, and starting in a kernel but ending after.
TEST_F(UnifiedMemoryTest, FaultGroupsGoToTheKernelRunningOnTheirDevice) {
  const UnifiedMemoryReport r = AnalyzeUnifiedMemory(trace_);
  ASSERT_EQ(r.gpu_faults.size(), 4u);
  const UvmKernelFaults& touch = r.gpu_faults[0];
  EXPECT_EQ(touch.kernel, "touch");
  EXPECT_EQ(touch.device_id, 0u);
  EXPECT_EQ(touch.launches, 1u);
  EXPECT_EQ(touch.fault_records, 128u);
  EXPECT_EQ(touch.fault_groups, 256u);
  EXPECT_EQ(touch.fault_ns, 128u * 5'000);
  EXPECT_EQ(touch.migrated_bytes, 256 * kMiB);
  EXPECT_EQ(touch.migration_ns, 10'240'000u);
  EXPECT_EQ(touch.kernel_ns, 12'000'000u);
  ASSERT_TRUE(touch.allocation.known);
  EXPECT_EQ(touch.allocation.api, "cudaMallocManaged");
  EXPECT_EQ(touch.allocation.bytes, 256 * kMiB);

  EXPECT_EQ(r.gpu_faults[1].kernel, "tail");
  EXPECT_EQ(r.gpu_faults[1].fault_groups, 4u);
  EXPECT_EQ(r.gpu_faults[1].fault_ns, 110'000u);
  EXPECT_EQ(r.gpu_faults[2].kernel, "other");
  EXPECT_EQ(r.gpu_faults[2].device_id, 1u);
  EXPECT_EQ(r.gpu_faults[2].fault_groups, 3u);
  EXPECT_EQ(r.gpu_faults[3].kernel, "[between kernels]");
  EXPECT_EQ(r.gpu_faults[3].device_id, 0u);
  EXPECT_EQ(r.gpu_faults[3].fault_groups, 1u);
}

TEST_F(UnifiedMemoryTest, CpuFaultsContentionAndUnknownKinds) {
  const UnifiedMemoryReport r = AnalyzeUnifiedMemory(trace_);
  ASSERT_EQ(r.cpu_faults.size(), 1u);
  const UvmCpuFaults& c = r.cpu_faults[0];
  EXPECT_EQ(c.faults, 64u);
  EXPECT_EQ(c.last_ns - c.first_ns, 6'300'000u);
  EXPECT_EQ(c.migrations_to_host, 64u);
  EXPECT_EQ(c.bytes_to_host, 256 * kMiB);
  EXPECT_EQ(c.allocation.api, "cudaMallocManaged");

  ASSERT_EQ(r.contention.size(), 2u);
  EXPECT_EQ(r.contention[0].kind, UvmCounterKind::kThrashing);
  EXPECT_EQ(r.contention[0].processors, 0b11u);
  EXPECT_EQ(r.contention[0].count, 3u);
  EXPECT_EQ(r.contention[0].bytes, 3u * 64 * 1024);
  EXPECT_EQ(r.contention[0].last_ns - r.contention[0].first_ns, 400'000u);
  EXPECT_EQ(r.contention[1].kind, UvmCounterKind::kThrottling);
  EXPECT_EQ(r.contention[1].processors, 1u);

  EXPECT_EQ(r.unknown_records, 1u);
  EXPECT_EQ(r.unknown_kinds, std::vector<uint32_t>{42});
  EXPECT_EQ(UnknownUvmWarning(r),
            "1 unified-memory records of unknown counter kind 42 skipped (written by a newer "
            "libprof)");
  EXPECT_EQ(r.records, trace_.records.unified_memory_counters.size() - 1);
}

// A trace whose records all come from a newer writer is read, with the warning, not refused.
TEST_F(UnifiedMemoryTest, NewerCounterKindsAreReadWithAWarning) {
  TraceBuilder b;
  b.records().unified_memory_counters.push_back(
      {.counter_kind = static_cast<UvmCounterKind>(9), .value = 1, .start_ns = Us(5)});
  b.records().unified_memory_counters.push_back(
      {.counter_kind = static_cast<UvmCounterKind>(12), .value = 1, .start_ns = Us(6)});
  b.SetEnd(10);
  const std::string path = dir_.Path("newer.pb");
  b.Write(path);
  MemoryCommandOptions options;
  options.files = {path};
  std::vector<std::string> warnings;
  auto out = RunMemory(options, &warnings);
  ASSERT_TRUE(out.has_value()) << out.error();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("2 unified-memory records of unknown counter kinds 9, 12 skipped"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(out->find("No unified-memory records of a known kind."), std::string::npos) << *out;
}

TEST_F(UnifiedMemoryTest, FindingsRules) {
  const std::vector<Finding> findings = FindFindings(trace_, {});
  std::vector<const Finding*> gpu, cpu, thrash;
  for (const Finding& f : findings) {
    if (f.rule == RuleId::kUvmGpuPageFaults) gpu.push_back(&f);
    if (f.rule == RuleId::kUvmCpuFaults) cpu.push_back(&f);
    if (f.rule == RuleId::kUvmThrashing) thrash.push_back(&f);
  }
  // touch (10.24 ms of migrations), tail (110 µs of faults), other (20 µs: the default
  // --min-wait); not the 10 µs between kernels.
  ASSERT_EQ(gpu.size(), 3u);
  EXPECT_EQ(gpu[0]->blocked_ns, 10'240'000u);
  EXPECT_EQ(gpu[0]->device_id, 0u);
  EXPECT_EQ(gpu[0]->explanation,
            "kernel touch raised 256 page-fault groups on GPU 0 migrating 256.00 MiB host→device "
            "in 10.24 ms, in cudaMallocManaged 256.00 MiB; prefetch the range with "
            "cudaMemPrefetchAsync before the launch, or use device memory");
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0]->blocked_ns, 6'300'000u);
  EXPECT_NE(cpu[0]->explanation.find("64 CPU page faults in 6.3 ms on cudaMallocManaged "
                                     "256.00 MiB, pulling 256.00 MiB back to the host in 64 "
                                     "migrations (4.00 MiB each)"),
            std::string::npos)
      << cpu[0]->explanation;
  ASSERT_EQ(thrash.size(), 2u);
  EXPECT_NE(thrash[0]->explanation.find("3 thrashing events"), std::string::npos);
  EXPECT_EQ(thrash[1]->device_id, 1u);

  // Raising --min-wait past the fault handling keeps only the kernel that migrated.
  FindingsOptions strict;
  strict.min_wait_ns = 1'000'000;
  size_t kept = 0;
  for (const Finding& f : FindFindings(trace_, strict)) kept += f.rule == RuleId::kUvmGpuPageFaults;
  EXPECT_EQ(kept, 1u);
}

TEST_F(UnifiedMemoryTest, SummaryCountsMigrationsOnTheDeviceSide) {
  const Summary s = Summarize(trace_, {});
  const SummaryRow* htod = nullptr;
  for (const SummaryRow& r : s.device) {
    if (r.name == "[unified memory host → device]") htod = &r;
  }
  ASSERT_NE(htod, nullptr);
  EXPECT_EQ(htod->kind, "uvm");
  EXPECT_EQ(htod->stats.count(), 128u);
  EXPECT_EQ(htod->bytes, 256 * kMiB);
  EXPECT_EQ(htod->stats.total(), 128u * 80'000);
}

TEST_F(UnifiedMemoryTest, MemoryTimelineAndFailedAllocation) {
  const TraceIndex index(trace_);
  const MemoryTimeline t = BuildMemoryTimeline(trace_, index);
  ASSERT_EQ(t.devices.size(), 1u);  // managed memory is not device memory in use
  EXPECT_EQ(t.devices[0].peak_bytes, 1024 * kMiB);
  ASSERT_EQ(t.devices[0].steps.size(), 1u);
  ASSERT_EQ(t.failed.size(), 1u);
  EXPECT_EQ(t.failed[0].api, "cudaMalloc");
  EXPECT_EQ(t.failed[0].return_value, 2);
  EXPECT_EQ(t.failed[0].in_use, (std::vector<std::pair<uint32_t, uint64_t>>{{0, 1024 * kMiB}}));
  const std::string table = MemoryTimelineTable({t}, 120);
  EXPECT_NE(table.find("Device 0 memory in use over time (peak 1.00 GiB)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("device 0: 1.00 GiB"), std::string::npos) << table;
  EXPECT_NE(MemoryTimelineJson({t}).find("\"failed_allocations\""), std::string::npos);
  EXPECT_NE(MemoryTimelineCsv({t}).find("failed:cudaMalloc:0"), std::string::npos);
}

// A device with many changes is shown in at most kMaxTimelineRows rows, each the largest value.
TEST(MemoryTimelineTest, LongTimelinesAreCoarsenedToTheirMaximum) {
  TraceBuilder b;
  for (int i = 0; i < 200; ++i) {
    MemoryOp op;
    op.operation = i % 2 == 0 ? MemoryOperation::kAllocation : MemoryOperation::kRelease;
    op.memory_kind = MemoryKind::kDevice;
    op.address = 0x1000;
    op.bytes = (i == 100 ? 8 : 1) * kMiB;
    op.time_ns = Us(10.0 * i);
    b.records().memory_ops.push_back(op);
  }
  b.SetEnd(2000);
  const ProcessTrace trace = b.Build();
  const MemoryTimeline t = BuildMemoryTimeline(trace, TraceIndex(trace));
  EXPECT_EQ(t.devices.at(0).steps.size(), 200u);
  EXPECT_EQ(t.devices.at(0).peak_bytes, 8 * kMiB);
  const std::string table = MemoryTimelineTable({t}, 120);
  EXPECT_NE(table.find("In use (max)"), std::string::npos);
  EXPECT_NE(table.find("8.00 MiB"), std::string::npos);
  size_t rows = 0;
  for (size_t p = table.find("│"); p != std::string::npos; p = table.find("\n│", p + 1)) ++rows;
  EXPECT_LE(rows, kMaxTimelineRows + 2);
}

TEST_F(UnifiedMemoryTest, EveryFormatRenders) {
  const UnifiedMemoryReport r = AnalyzeUnifiedMemory(trace_);
  const std::string table = UnifiedMemoryTable(r, 160);
  EXPECT_NE(table.find("Unified memory migrations"), std::string::npos);
  EXPECT_NE(table.find("GPU page-fault groups by kernel"), std::string::npos);
  EXPECT_NE(table.find("CPU page faults by allocation"), std::string::npos);
  EXPECT_NE(table.find("Thrashing, throttling and remote maps"), std::string::npos);
  EXPECT_NE(UnifiedMemoryCsvRows(r).find("uvm_gpu_faults,4242,touch,managed,0"), std::string::npos);

  // Through the command, in each format; the JSON is one document with the section in it.
  MemoryCommandOptions options;
  options.files = {trace_.path};
  std::vector<std::string> warnings;
  options.format = OutputFormat::kJson;
  auto json = RunMemory(options, &warnings);
  ASSERT_TRUE(json.has_value()) << json.error();
  EXPECT_NE(json->find("\"unified_memory\""), std::string::npos);
  EXPECT_NE(json->find("\"failed_allocations\""), std::string::npos);
  options.format = OutputFormat::kTable;
  auto text = RunMemory(options, &warnings);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("Failed allocations"), std::string::npos);
  EXPECT_NE(text->find("GPU page-fault groups by kernel"), std::string::npos);
  // A trace without unified memory or failures prints exactly memory's own report.
  TraceBuilder plain = UnifiedMemoryScenario();
  plain.records().unified_memory_counters.clear();
  plain.records().api_calls.pop_back();
  const std::string path = dir_.Path("plain.pb");
  plain.Write(path);
  options.files = {path};
  auto without = RunMemory(options, &warnings);
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(without->find("Unified memory"), std::string::npos) << *without;
  EXPECT_EQ(without->find("Failed allocations"), std::string::npos) << *without;
}

}  // namespace
}  // namespace libprof::analysis::testing
