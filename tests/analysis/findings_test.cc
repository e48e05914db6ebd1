// Proves each findings rule on synthetic traces, including the tricky cases of the issue: two
// streams where only one had to wait; legacy default vs non-blocking vs per-thread default
// streams; four threads each blocked on its own stream's kernel; a blocked call with no device
// work of its own (cudaFree); graph launches; event waits; and that no finding's blocked time
// exceeds its host time.
#include "analysis/rules/findings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "tests/analysis/findings_loop.h"
#include "tests/analysis/scenarios.h"
#include "analysis/metrics/start_up.h"
#include "analysis/metrics/summary.h"
#include "analysis/reports/findings_report.h"
#include "analysis/reports/summary_report.h"
#include "analysis/rules/findings_digest.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis::testing {
namespace {

std::vector<Finding> Of(const std::vector<Finding>& all, const std::string& rule) {
  std::vector<Finding> out;
  for (const Finding& f : all) {
    if (RuleName(f.rule) == rule) out.push_back(f);
  }
  return out;
}

const Finding* ByCorr(const std::vector<Finding>& all, const std::string& rule, uint64_t corr) {
  for (const Finding& f : all) {
    if (RuleName(f.rule) == rule && f.correlation_id == corr) return &f;
  }
  return nullptr;
}

// The correlation id of the n-th (0-based) call named `api`.
uint64_t CorrOf(const ProcessTrace& t, const std::string& api, int n = 0) {
  for (const ApiCall& c : t.records.api_calls) {
    if (t.Str(c.name_id) == api && n-- == 0) return c.correlation_id;
  }
  ADD_FAILURE() << "no call " << api;
  return 0;
}

FindingsOptions MinWait(uint64_t ns) {
  FindingsOptions o;
  o.min_wait_ns = ns;
  return o;
}

class FindingsTest : public ::testing::Test {
 protected:
  ProcessTrace Load(const TraceBuilder& b) { return b.RoundTrip(dir_.Path("t.pb")); }

  // The explanation of the one alloc-churn finding of six 1 MiB pairs (cudaMalloc/cudaFree, or
  // cudaHostAlloc/cudaFreeHost for `host`) whose frees (or, `on_alloc`, allocations) were called
  // from `native` (innermost first) under the Python frames `python` (file, function; innermost
  // first).
  std::string ChurnFreedFrom(bool host, const std::vector<std::string>& native,
                             const std::vector<std::pair<std::string, std::string>>& python = {},
                             bool on_alloc = false) {
    TraceBuilder b;
    TraceRecords& r = b.records();
    for (int i = 0; i < 6; ++i) {
      const double s = 100.0 * i;
      for (const auto& [api, op, at] :
           {std::tuple{host ? "cudaHostAlloc" : "cudaMalloc", MemoryOperation::kAllocation, s},
            std::tuple{host ? "cudaFreeHost" : "cudaFree", MemoryOperation::kRelease, s + 20}}) {
        MemoryOp m{.operation = op,
                   .memory_kind = host ? MemoryKind::kPinned : MemoryKind::kDevice,
                   .address = 0x1000,
                   .bytes = 1 << 20,
                   .time_ns = Us(at)};
        m.correlation_id = b.Api(api, at, at + 20);
        if ((op == MemoryOperation::kRelease) != on_alloc) r.api_calls.back().stack_id = 1;
        r.memory_ops.push_back(m);
      }
    }
    CallStack stack{.id = 1};
    for (const std::string& function : native) {
      const uint32_t id = static_cast<uint32_t>(r.stack_frames.size() + 1);
      r.stack_frames.push_back(
          {.id = id, .address = 0x5000 + id, .function_id = b.Intern(function)});
      stack.frame_ids.push_back(id);
    }
    for (const auto& [file, function] : python) {
      stack.python_frames.push_back({b.Intern(file), 10, b.Intern(function)});
    }
    r.call_stacks.push_back(stack);
    b.SetEnd(1000);
    const auto found = Of(FindFindings(Load(b), {}), "alloc-churn");
    return found.size() == 1 ? found[0].explanation : std::string("no single finding");
  }

  TempDir dir_;
};

TEST_F(FindingsTest, Nrm2CopyBlamesBothKernelsWithOverlaps) {
  const ProcessTrace t = Load(Nrm2Scenario());
  const std::vector<Finding> all = FindFindings(t, {});
  const auto blocked = Of(all, "blocked-on-prior-work");
  ASSERT_EQ(blocked.size(), 1u);
  const Finding& f = blocked[0];
  EXPECT_EQ(f.api, "cudaMemcpyAsync");
  EXPECT_EQ(f.pid, 4242u);
  EXPECT_EQ(f.thread_id, 1u);
  EXPECT_EQ(f.host_start_ns, 90'000u);
  EXPECT_EQ(f.host_duration_ns, 4'940'000u);
  EXPECT_EQ(f.blocked_ns, 5'020'000u - 90'000u);  // until the second kernel ended
  EXPECT_EQ(f.stream_id, 7u);
  const auto& copy = std::get<CopyDetails>(f.details);
  EXPECT_EQ(copy.bytes, 4u);
  EXPECT_EQ(copy.copy_kind, "DtoH");
  EXPECT_EQ(copy.src_kind, "device");
  EXPECT_EQ(copy.dst_kind, "pageable");
  ASSERT_EQ(f.blamed.size(), 2u);
  EXPECT_EQ(f.blamed[0].kind, "kernel");
  EXPECT_EQ(f.blamed[0].name,
            "nrm2_kernel<float, float, float, 1, 0, 128>(cublasNrm2Params<int, float, float>)");
  EXPECT_EQ(f.blamed[0].overlap_ns, 5'010'000u - 90'000u);
  EXPECT_EQ(f.blamed[0].launched_before_ns, 30'000u);
  EXPECT_EQ(f.blamed[0].via, "stream");
  EXPECT_EQ(f.blamed[1].overlap_ns, 9'000u);
  EXPECT_EQ(f.explanation,
            "cudaMemcpyAsync (4 B device→pageable) took 4.94 ms on the host: 4.93 ms waiting for "
            "nrm2_kernel<…>(…) (corr 9, launched 30.0 µs earlier) and 1 more + 1.91 µs copying");
  // The same copy is also a pageable async copy: its own cost is what is left (10 µs).
  const Finding* pageable = ByCorr(all, "pageable-async-memcpy", f.correlation_id);
  ASSERT_NE(pageable, nullptr);
  EXPECT_EQ(pageable->blocked_ns, 10'000u);
  EXPECT_EQ(pageable->blocked_ns + f.blocked_ns, f.host_duration_ns);
  // The upload (pageable H→D, staged at once) is not blocked but still flagged as pageable.
  const Finding* up = ByCorr(all, "pageable-async-memcpy", CorrOf(t, "cudaMemcpyAsync", 0));
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(ByCorr(all, "blocked-on-prior-work", up->correlation_id), nullptr);
  // cudaStreamSynchronize returned at once (nothing pending): below the threshold.
  EXPECT_TRUE(Of(all, "sync-api").empty());
}

TEST_F(FindingsTest, BlockedTimeNeverExceedsHostTime) {
  for (const TraceBuilder& b :
       {Nrm2Scenario(), StreamsScenario(), ThreadsScenario(), IdleScenario()}) {
    const ProcessTrace t = Load(b);
    const std::vector<Finding> all = FindFindings(t, {});
    EXPECT_FALSE(all.empty());
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> per_call;
    for (const Finding& f : all) {
      EXPECT_LE(f.blocked_ns, f.host_duration_ns) << f.explanation;
      for (const Blamed& bl : f.blamed) EXPECT_LE(bl.overlap_ns, f.blocked_ns) << f.explanation;
      if (!f.api.empty()) per_call[{f.thread_id, f.correlation_id}] += f.blocked_ns;
    }
    // All findings of one call together stay within its host time.
    for (const Finding& f : all) {
      const std::pair<uint32_t, uint64_t> key(f.thread_id, f.correlation_id);
      if (!f.api.empty()) {
        EXPECT_LE(per_call[key], f.host_duration_ns);
      }
    }
  }
}

TEST_F(FindingsTest, TwoStreamsOnlyTheCopysStreamIsBlamed) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  const Finding* f = ByCorr(all, "blocked-on-prior-work", CorrOf(t, "cudaMemcpyAsync", 0));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->blocked_ns, 990'000u);  // the stream-13 kernel ends at 1010 µs; the copy began at 20
  ASSERT_EQ(f->blamed.size(), 1u);
  EXPECT_EQ(f->blamed[0].name, "spin(float*, int, long)");
  EXPECT_EQ(f->blamed[0].stream_id, 13u);
}

TEST_F(FindingsTest, LegacyDefaultStreamWaitsForBlockingStreamsOnly) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  const Finding* f = ByCorr(all, "blocked-on-prior-work", CorrOf(t, "cudaMemcpy", 0));
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->blamed.size(), 1u);
  EXPECT_EQ(f->blamed[0].name, "blocking_work(float*)");  // stream 14, not the non-blocking 15
  EXPECT_EQ(f->blamed[0].via, "legacy-default-stream");
  EXPECT_EQ(f->blocked_ns, 5012'000u - 4020'000u);
  // The synchronous copy's own part is a sync-memcpy finding.
  const Finding* sync = ByCorr(all, "sync-memcpy", f->correlation_id);
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->blocked_ns, 5100'000u - 5012'000u);
}

TEST_F(FindingsTest, PerThreadDefaultStreamDoesNotWaitForOtherStreams) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  const uint64_t memset = CorrOf(t, "cudaMemset_ptds");
  EXPECT_EQ(ByCorr(all, "blocked-on-prior-work", memset), nullptr);
  const Finding* own = ByCorr(all, "sync-memset", memset);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->blocked_ns, 80'000u);
  EXPECT_EQ(std::get<CopyDetails>(own->details).dst_kind, "device");
}

TEST_F(FindingsTest, PerThreadDefaultStreamStillSynchronisesWithTheLegacyStream) {
  // CUDA: the per-thread default stream "is not a non-blocking stream and will synchronize with
  // the legacy default stream". A legacy-stream copy waits for per-thread work; a copy on a
  // non-blocking stream does not.
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(20, StreamType::kNull);  // per-thread: not the context's null stream
  b.AddStream(15, StreamType::kNonBlocking);
  b.Launch("_Z2ptPf", 0, 5, 10, 1010, 20, 1, "cudaLaunchKernel_ptsz");
  const uint64_t legacy = b.Api("cudaMemcpy", 20, 1100, 2);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned, 8, 1012, 1013, legacy, 7,
              false);
  b.Launch("_Z2ptPf", 2000, 2005, 2010, 3010, 20, 1, "cudaLaunchKernel_ptsz");
  const uint64_t nb = b.Api("cudaMemcpyAsync", 2020, 2100, 2);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 8, 2030, 2031, nb, 15,
              true);
  b.SetEnd(4000);
  const ProcessTrace t = Load(b);
  const TraceIndex index(t);
  const StreamModel model(index);
  EXPECT_EQ(model.ClassOf(7), StreamClass::kLegacyNull);
  EXPECT_EQ(model.ClassOf(20), StreamClass::kPerThread);
  EXPECT_EQ(model.ClassOf(15), StreamClass::kNonBlocking);
  const auto all = FindFindings(t, {});
  const Finding* f = ByCorr(all, "blocked-on-prior-work", legacy);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->blamed.size(), 1u);
  EXPECT_EQ(f->blamed[0].stream_id, 20u);
  EXPECT_EQ(f->blamed[0].via, "legacy-default-stream");
  EXPECT_EQ(ByCorr(all, "blocked-on-prior-work", nb), nullptr);
}

TEST_F(FindingsTest, StreamClassesWithoutStreamRecords) {
  // No STREAM records: the context's null stream is legacy, a stream fed by _ptsz calls is
  // per-thread, any other is assumed blocking.
  TraceBuilder b;
  b.AddContext(1, 7);
  b.Launch("_Z1aPf", 0, 1, 2, 3, 7);
  b.Launch("_Z1aPf", 4, 5, 6, 7, 21, 1, "cudaLaunchKernel_ptsz");
  b.Launch("_Z1aPf", 8, 9, 10, 11, 22);
  b.SetEnd(20);
  const ProcessTrace t = Load(b);
  const TraceIndex index(t);
  const StreamModel model(index);
  EXPECT_EQ(model.ClassOf(7), StreamClass::kLegacyNull);
  EXPECT_EQ(model.ClassOf(21), StreamClass::kPerThread);
  EXPECT_EQ(model.ClassOf(22), StreamClass::kBlocking);
}

TEST_F(FindingsTest, FourThreadsEachBlockedOnItsOwnStream) {
  const ProcessTrace t = Load(ThreadsScenario());
  const auto blocked = Of(FindFindings(t, {}), "blocked-on-prior-work");
  ASSERT_EQ(blocked.size(), 4u);
  for (const Finding& f : blocked) {
    const uint32_t i = f.thread_id - 100;
    ASSERT_LT(i, 4u);
    EXPECT_EQ(f.stream_id, 30 + i);
    ASSERT_EQ(f.blamed.size(), 1u) << f.explanation;  // only its own stream's kernel
    EXPECT_EQ(f.blamed[0].stream_id, 30 + i);
    // Kernel [base+10, base+1010+200i], copy call from base+6: blocked until the kernel ended.
    EXPECT_EQ(f.blocked_ns, (1004u + 200u * i) * 1000u);
    EXPECT_EQ(f.blamed[0].overlap_ns, (1000u + 200u * i) * 1000u);
    EXPECT_EQ(f.nvtx, (std::vector<std::string>{"step", "copy"}));
  }
  // Grouped: one row, four findings, total = the sum.
  const auto groups = GroupFindings(blocked);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, 4u);
  EXPECT_EQ(groups[0].total_blocked_ns, (1004u + 1204u + 1404u + 1604u) * 1000u);
  EXPECT_EQ(groups[0].worst.thread_id, 103u);
}

TEST_F(FindingsTest, SyncApisBlameWhatTheyWaitedFor) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  // cudaDeviceSynchronize at 1040: only the stream-14 kernel was still running.
  const Finding* device = ByCorr(all, "sync-api", CorrOf(t, "cudaDeviceSynchronize"));
  ASSERT_NE(device, nullptr);
  ASSERT_EQ(device->blamed.size(), 1u);
  EXPECT_EQ(device->blamed[0].name, "long_spin(float*, int, long)");
  EXPECT_EQ(device->blocked_ns, 3012'000u - 1040'000u);
  // cudaStreamSynchronize(14): not the non-blocking kernel on 15 that ran longer.
  const Finding* stream = ByCorr(all, "sync-api", CorrOf(t, "cudaStreamSynchronize"));
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->stream_id, 14u);
  ASSERT_EQ(stream->blamed.size(), 1u);
  EXPECT_EQ(stream->blamed[0].stream_id, 14u);
  EXPECT_EQ(stream->blocked_ns, 11010'000u - 9020'000u);
  // cudaEventSynchronize: the kernel before the record, not the one after it.
  const Finding* event = ByCorr(all, "sync-api", CorrOf(t, "cudaEventSynchronize"));
  ASSERT_NE(event, nullptr);
  ASSERT_EQ(event->blamed.size(), 1u);
  EXPECT_EQ(event->blamed[0].name, "spin(float*, int, long)");
  EXPECT_EQ(event->blocked_ns, 14010'000u - 13020'000u);
  EXPECT_NE(event->explanation.find("event recorded on stream 13"), std::string::npos);
}

TEST_F(FindingsTest, CudaFreeWithoutDeviceWorkIsAnImplicitSync) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  const Finding* f = ByCorr(all, "implicit-sync", CorrOf(t, "cudaFree"));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->blocked_ns, 18010'000u - 17020'000u);
  ASSERT_EQ(f->blamed.size(), 1u);
  EXPECT_EQ(f->blamed[0].via, "device");
  EXPECT_FALSE(f->stream_id.has_value());
  EXPECT_EQ(
      f->explanation,
      "cudaFree took 1.01 ms on the host: 990.0 µs waiting for spin(float*, int, long) (corr 17, "
      "launched 20.0 µs earlier, on stream 13); cudaFree synchronises the device");
}

TEST_F(FindingsTest, GraphLaunchIsBlamedAsOneItem) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  const Finding* f = ByCorr(all, "blocked-on-prior-work", CorrOf(t, "cudaMemcpyAsync", 1));
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->blamed.size(), 1u);
  EXPECT_EQ(f->blamed[0].kind, "graph");
  EXPECT_EQ(f->blamed[0].name, "[graph 5]");
  EXPECT_EQ(f->blamed[0].correlation_id, CorrOf(t, "cudaGraphLaunch"));
  EXPECT_EQ(f->blamed[0].overlap_ns, 3 * 280'000u);  // three nodes, the gaps between them excluded
  EXPECT_EQ(f->blocked_ns, 19900'000u - 19015'000u);
}

TEST_F(FindingsTest, EventWaitLinksStreams) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  const Finding* f = ByCorr(all, "blocked-on-prior-work", CorrOf(t, "cudaMemcpyAsync", 2));
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->blamed.size(), 1u);
  EXPECT_EQ(f->blamed[0].name, "producer_work(float*)");
  EXPECT_EQ(f->blamed[0].stream_id, 14u);
  EXPECT_EQ(f->blamed[0].via, "event");
}

TEST_F(FindingsTest, SyncMemcpyExcludesSmallHostToDevice) {
  const ProcessTrace t = Load(StreamsScenario());
  const auto all = FindFindings(t, {});
  const Finding* big = ByCorr(all, "sync-memcpy", CorrOf(t, "cudaMemcpy", 1));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(std::get<CopyDetails>(big->details).bytes, 64u << 20);
  EXPECT_EQ(big->blocked_ns, 2'000'000u);
  EXPECT_EQ(ByCorr(all, "sync-memcpy", CorrOf(t, "cudaMemcpy", 2)), nullptr);  // 64 KiB H→D
  // With the exclusion lowered, it is reported.
  FindingsOptions options;
  options.sync_memcpy_min_h2d_bytes = 1024;
  EXPECT_NE(ByCorr(FindFindings(t, options), "sync-memcpy", CorrOf(t, "cudaMemcpy", 2)), nullptr);
}

TEST_F(FindingsTest, AsyncPinnedCopyThatReturnsEarlyIsNotBlocked) {
  TraceBuilder b;
  b.Launch("_Z4spinPfil", 0, 5, 10, 2010, 13);
  const uint64_t pinned = b.Api("cudaMemcpyAsync", 20, 30, 1);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned, 1 << 20, 2011, 2100,
              pinned, 13, true);
  // A small pageable H→D copy is staged at once: returns before the kernel ends, not blocked.
  const uint64_t staged = b.Api("cudaMemcpyAsync", 40, 43, 1);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 4, 2101, 2102, staged,
              13, true);
  b.SetEnd(3000);
  const auto all = FindFindings(Load(b), {});
  EXPECT_TRUE(Of(all, "blocked-on-prior-work").empty());
  EXPECT_EQ(ByCorr(all, "pageable-async-memcpy", pinned), nullptr);
  EXPECT_NE(ByCorr(all, "pageable-async-memcpy", staged), nullptr);
}

TEST_F(FindingsTest, ShortWaitsAreBelowTheThreshold) {
  const ProcessTrace t = Load(ThreadsScenario());
  EXPECT_EQ(Of(FindFindings(t, MinWait(2'000'000)), "blocked-on-prior-work").size(), 0u);
  EXPECT_EQ(Of(FindFindings(t, MinWait(1'300'000)), "blocked-on-prior-work").size(), 2u);
}

TEST_F(FindingsTest, IdleGapAndLowUtilizationWithLaunchOverhead) {
  const ProcessTrace t = Load(IdleScenario());
  const auto all = FindFindings(t, {});
  const auto gaps = Of(all, "gpu-idle-gaps");
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].blocked_ns, 610'100'000u - 10'100'500u);
  EXPECT_EQ(gaps[0].device_id, 0u);
  const auto& gap = std::get<IdleGapDetails>(gaps[0].details);
  EXPECT_NE(gap.host_activity.find("most in cudaMalloc, 500.0 µs"), std::string::npos);
  // The gap [10.1005 ms, 610.1 ms): the spin kernel's launch call starts at 610.0 ms (100 µs of
  // launch time), cudaMalloc synchronises for 500 µs, the rest is host work outside CUDA.
  EXPECT_EQ(gap.idle.launch_ns, 100'000u);
  EXPECT_EQ(gap.idle.sync_ns, 500'000u);
  EXPECT_EQ(gap.idle.other_ns, 599'999'500u - 600'000u);
  // The active span [108.5 µs, 699.9 ms] in 30 chunks; the first holds the launch loop.
  const auto low = Of(all, "gpu-low-utilization");
  ASSERT_FALSE(low.empty());
  const Finding& first = low.front();
  EXPECT_EQ(first.host_start_ns, 108'500u);
  const auto& chunk = std::get<LowUtilizationDetails>(first.details);
  EXPECT_EQ(chunk.kernels, 1000u);
  EXPECT_LT(chunk.utilization, 0.5);
  // 999 gaps of 8 µs each between the tiny kernels; each opens while the next cudaLaunchKernel
  // is already running (it starts 0.5 µs before the kernel ends), so all 8 µs are launch time.
  EXPECT_EQ(chunk.launch_bound_idle_ns, 999u * 8'000u);
  EXPECT_EQ(chunk.idle.launch_ns, 999u * 8'000u);
  EXPECT_EQ(chunk.idle.sync_ns, 0u);
  EXPECT_EQ(chunk.idle.launch_ns + chunk.idle.other_ns, first.blocked_ns);
  // The long kernel's chunks are busy: not reported.
  for (const Finding& f : low) EXPECT_LT(f.host_start_ns, 610'000'000u);
  // Chunks 2-26 ran no kernel: one finding, not 25.
  std::vector<Finding> without_kernels;
  for (const Finding& f : low) {
    if (std::get<LowUtilizationDetails>(f.details).kernels == 0) without_kernels.push_back(f);
  }
  ASSERT_EQ(without_kernels.size(), 1u);
  EXPECT_EQ(std::get<LowUtilizationDetails>(without_kernels[0].details).chunks, 25u);
  EXPECT_NE(without_kernels[0].explanation.find("ran no kernel for"), std::string::npos);
  // A higher gap threshold hides the gap.
  FindingsOptions high;
  high.gap_threshold_ns = 700'000'000;
  EXPECT_TRUE(Of(FindFindings(t, high), "gpu-idle-gaps").empty());
}

// PyTorch's kernel names run to thousands of characters (a torch.compile run's gap named one of
// 4,600): a gap's explanation names the kernels around it as the other explanations do.
TEST_F(FindingsTest, IdleGapNamesItsKernelsInProseWidth) {
  TraceBuilder b(7175);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  const std::string long_name =
      "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
      "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";
  b.Launch(long_name, 100, 108, 110, 120, 7);
  b.Launch(long_name, 600'000, 600'008, 600'010, 600'020, 7);
  b.SetEnd(700'000);
  const auto gaps = Of(FindFindings(Load(b), {}), "gpu-idle-gaps");
  ASSERT_EQ(gaps.size(), 1u);
  const std::string short_name = AbbreviateName(long_name, kProseNameChars);
  EXPECT_LE(DisplayWidth(short_name), kProseNameChars);
  EXPECT_NE(gaps[0].explanation.find("(after " + short_name + ", corr "), std::string::npos)
      << gaps[0].explanation;
  EXPECT_NE(gaps[0].explanation.find("; before " + short_name + ", corr "), std::string::npos)
      << gaps[0].explanation;
  EXPECT_EQ(gaps[0].explanation.find("FillFunctor<float>, std::array"), std::string::npos);
}

TEST_F(FindingsTest, IdleBreakdownOfTheWholeActiveSpan) {
  const ProcessTrace t = Load(IdleScenario());
  const auto breakdown = Of(FindFindings(t, {}), "gpu-idle-breakdown");
  ASSERT_EQ(breakdown.size(), 1u);
  const Finding& f = breakdown[0];
  // Active span [108.5 µs, 699.9 ms); busy: 1000 kernels of 2 µs and the spin kernel
  // [610.1, 699.9) ms.
  EXPECT_EQ(f.host_start_ns, 108'500u);
  EXPECT_EQ(f.host_duration_ns, 699'791'500u);
  const uint64_t busy = 1000 * 2'000 + 89'800'000;
  EXPECT_EQ(f.blocked_ns, 699'791'500u - busy);
  // Launch: 999 gaps of 8 µs and the 100 µs before the spin kernel; sync: cudaMalloc's 500 µs.
  const auto& d = std::get<IdleBreakdownDetails>(f.details);
  EXPECT_EQ(d.idle.launch_ns, 999u * 8'000u + 100'000u);
  EXPECT_EQ(d.idle.sync_ns, 500'000u);
  EXPECT_EQ(d.idle.total(), f.blocked_ns);
  EXPECT_EQ(d.kernels, 1001u);
  EXPECT_EQ(d.mean_kernel_ns, busy / 1001);
  // 1000 launch calls of 8 µs and one of 5 µs, but the first, which ends where the steady
  // state begins (its kernel's start).
  EXPECT_EQ(d.launches, 1000u);
  EXPECT_EQ(d.mean_launch_ns, (999u * 8'000u + 5'000u) / 1000u);
  // Mostly host work outside CUDA: no launch-bound verdict.
  EXPECT_EQ(f.explanation.find("Launch-bound"), std::string::npos);
  EXPECT_NE(f.explanation.find("outside CUDA calls (host computation"), std::string::npos);
  // Above --idle-share it is not reported.
  FindingsOptions strict;
  strict.idle_share = 0.9;
  EXPECT_TRUE(Of(FindFindings(t, strict), "gpu-idle-breakdown").empty());
}

TEST_F(FindingsTest, LaunchBoundSentence) {
  const ProcessTrace t = Load(LaunchBoundScenario());
  const auto breakdown = Of(FindFindings(t, {}), "gpu-idle-breakdown");
  ASSERT_EQ(breakdown.size(), 1u);
  const Finding& f = breakdown[0];
  // Active span [8.5, 1140) µs; busy 100 kernels of 2 µs and the 10 µs copy.
  EXPECT_EQ(f.host_duration_ns, 1'131'500u);
  EXPECT_EQ(f.blocked_ns, 1'131'500u - 210'000u);
  const auto& d = std::get<IdleBreakdownDetails>(f.details);
  EXPECT_EQ(d.idle.launch_ns, 99u * 8'000u);
  // [1000.5, 1020) in cudaStreamSynchronize and [1100, 1130) in the blocking cudaMemcpy.
  EXPECT_EQ(d.idle.sync_ns, 19'500u + 30'000u);
  EXPECT_EQ(d.idle.other_ns, 80'000u);
  EXPECT_EQ(d.mean_kernel_ns, 2'000u);
  EXPECT_EQ(d.launches, 99u);  // (the first ends as the steady state begins)
  EXPECT_EQ(d.mean_launch_ns, 8'000u);
  // idle 921.5 of 1131.5 µs = 81.44%.
  EXPECT_NE(f.explanation.find("Launch-bound: GPU 0 was idle 81.44% of the time because kernels "
                               "averaged 2.0 µs while launches cost 8.0 µs"),
            std::string::npos)
      << f.explanation;
  EXPECT_NE(f.explanation.find("CUDA graph"), std::string::npos);
  EXPECT_NE(f.explanation.find("fuse the kernels"), std::string::npos);
  EXPECT_NE(f.explanation.find("most in cudaMemcpy, 30.0 µs"), std::string::npos);
}

// Launching and the host's own time split the idle time, neither half of it, with a sync after
// every kernel (a cuBLAS loop of tiny sgemms, each followed by cudaStreamSynchronize): one
// verdict for both, and the syncs named. Step i at 1000 + 17i µs: the launch call [0, 5), its
// 3 µs kernel from 6 µs, cudaStreamSynchronize [6, 11), then 6 µs outside CUDA calls: each gap
// of 14 µs is 2 µs in the sync, 6 µs outside calls and 6 µs launching.
TEST_F(FindingsTest, LaunchingAndHostTimeTogetherSetThePace) {
  TraceBuilder b(5252);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  for (int i = 0; i < 100; ++i) {
    const double base = 1000 + 17.0 * i;
    b.Launch("_Z4gemmv", base, base + 5, base + 6, base + 9, 7);
    const uint64_t sync = b.Api("cudaStreamSynchronize", base + 6, base + 11);
    b.AddSync(SyncType::kStreamSynchronize, base + 6, base + 11, sync, 7);
  }
  b.SetEnd(3000);
  const auto breakdown = Of(FindFindings(Load(b), {}), "gpu-idle-breakdown");
  ASSERT_EQ(breakdown.size(), 1u);
  const Finding& f = breakdown[0];
  const auto& d = std::get<IdleBreakdownDetails>(f.details);
  EXPECT_EQ(d.idle.sync_ns, 99u * 2'000u);
  EXPECT_EQ(d.idle.other_ns, 99u * 6'000u);
  EXPECT_EQ(d.idle.launch_ns, 99u * 6'000u);
  EXPECT_NE(f.explanation.find("Most idle time (85.71%) had the host launching the next work or "
                               "outside CUDA calls: the host set the pace, with kernels averaging "
                               "3.0 µs; fewer, larger kernels (fusion) or CUDA graphs"),
            std::string::npos)
      << f.explanation;
  EXPECT_NE(f.explanation.find("synchronising calls (14.29%, most in cudaStreamSynchronize) drain "
                               "the GPU's queue, so the launches after each start on an idle GPU: "
                               "drop the ones not needed"),
            std::string::npos)
      << f.explanation;
}

// A program already on CUDA graphs whose graphs hold too little work (samples/graph_replay.cu):
// the launch-bound sentence must not tell it to use CUDA graphs, but say its graphs are too small.
TEST_F(FindingsTest, LaunchBoundOnGraphLaunchesSaysTheGraphsAreTooSmall) {
  TraceBuilder b(7274);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  // cudaGraphLaunch i runs [20i, 20i + 18) µs; its graph's two 1 µs kernels run right after.
  for (int i = 0; i < 50; ++i) {
    const double s = 20.0 * i;
    const uint64_t launch = b.Api("cudaGraphLaunch", s, s + 18);
    b.AddKernel("_Z4stepPf", s + 18.5, s + 19.5, launch, 7).graph_id = 3;
    b.AddKernel("_Z4stepPf", s + 19.5, s + 20.5, launch, 7).graph_id = 3;
  }
  b.SetEnd(1100);
  const ProcessTrace t = Load(b);
  const auto breakdown = Of(FindFindings(t, {}), "gpu-idle-breakdown");
  ASSERT_EQ(breakdown.size(), 1u);
  const std::string& text = breakdown[0].explanation;
  EXPECT_NE(text.find("Launch-bound although the work is in CUDA graphs: 49 of the 49 launch "
                      "calls launched graphs, of 2 kernels on average (1.0 µs each, about "
                      "2.0 µs of GPU work per graph), while a launch call took 18.0 µs: each "
                      "graph runs for less time than launching it takes"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("capture the launch sequence in a CUDA graph"), std::string::npos) << text;
}

// torch.fft's first call on a shape on an H200: cuFFT built a plan and uploaded 6.65 MiB of
// tables on the legacy stream (18 ms, once), and no-overlap-default-stream offered to overlap it
// with the loop's kernels. A copy inside one-time work is paid once: the rule leaves it out.
TEST_F(FindingsTest, NoOverlapLeavesOutCopiesOfOneTimeWork) {
  TraceBuilder b = OverlapScenario();
  TraceRecords& r = b.records();
  r.stack_frames.push_back(
      {.id = 1, .address = 0x4001, .function_id = b.Intern("cufftXtMakePlanMany")});
  r.call_stacks.push_back({.id = 1, .frame_ids = {1}});
  const uint64_t upload = b.Api("cuMemcpyHtoD", 6000, 24000, 1, 0, ApiDomain::kDriver);
  const size_t upload_call = r.api_calls.size() - 1;
  r.api_calls[upload_call].stack_id = 1;
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 6 << 20, 6010, 23990,
              upload, 7, false);
  b.Launch("_Z9transformPj", 24000, 24005, 24010, 24060, 7);  // the loop goes on after it
  b.SetEnd(25000);
  const auto all = Of(FindFindings(Load(b), {}), "no-overlap-default-stream");
  ASSERT_EQ(all.size(), 2u);
  const auto& on_legacy = std::get<OverlapDetails>(all[0].details);
  // The scenario's own (its 8 less the first upload, before any kernel of the stream), without
  // the plan's upload.
  EXPECT_EQ(on_legacy.copies, 7u);
  EXPECT_EQ(on_legacy.copy_ns, 7u * 100'000u);
  EXPECT_EQ(all[0].blocked_ns, 250'000u);  // min(700, 250) µs
  // Without its stack the upload is the program's.
  r.api_calls[upload_call].stack_id = 0;
  const auto counted = Of(FindFindings(Load(b), {}), "no-overlap-default-stream");
  ASSERT_FALSE(counted.empty());
  EXPECT_EQ(std::get<OverlapDetails>(counted[0].details).copies, 8u);
}

// The staged copy is one finding naming both GPUs, at the call's host time and the copy's bytes
// (not the pieces' sum); the direct copy is none.
TEST_F(FindingsTest, StagedPeerCopyHeldTheHostAndNamesBothGpus) {
  constexpr uint64_t kBytes = 256u << 20;
  const ProcessTrace t = Load(StagedPeerCopyScenario());
  const auto found = Of(FindFindings(t, {}), "staged-peer-copy");
  ASSERT_EQ(found.size(), 1u);  // not the direct copy
  EXPECT_EQ(found[0].blocked_ns, 7'850'000u);
  EXPECT_EQ(std::get<CopyDetails>(found[0].details).bytes, kBytes);  // once, not per piece
  EXPECT_NE(found[0].explanation.find("cudaMemcpyPeerAsync (256.00 MiB GPU 0 → GPU 1) went "
                                      "through host memory"),
            std::string::npos)
      << found[0].explanation;
  EXPECT_NE(found[0].explanation.find("held the host for 7.85 ms (its copy records"),
            std::string::npos)
      << found[0].explanation;
  // Its pieces are no host copies, and the summary shows no bandwidth the pieces cannot have.
  const Summary s = Summarize(t, {});
  bool named = false;
  for (const SummaryRow& r : s.device) {
    if (r.name != "[copy device to peer device memory, staged through host]") continue;
    named = true;
    EXPECT_FALSE(r.has_bytes);
    EXPECT_EQ(r.stats.count(), 2u);
  }
  EXPECT_TRUE(named);
  // Two copies of 256 MiB: the staged one once, and the direct one.
  EXPECT_EQ(CopiesHeadline(s.copies).rfind("Memory copies: 2 copies, 512.00 MiB in ", 0), 0u)
      << CopiesHeadline(s.copies);
  // The JSON says the same: no bandwidth for the staged pieces' rows, one for the direct copy.
  const nlohmann::json json = nlohmann::json::parse(SummaryJson({s}, s));
  size_t staged_rows = 0, direct_rows = 0;
  for (const auto& row : json["copies"]) {
    const bool staged = row["src_kind"] == "device" && row["dst_kind"] == "device" &&
                        row["copy_kind"] != "PtoP";
    staged_rows += staged;
    direct_rows += !staged;
    EXPECT_EQ(row["gb_per_s"].is_null(), staged) << row.dump();
  }
  EXPECT_EQ(staged_rows, 2u);  // the DtoH and the HtoD piece
  EXPECT_EQ(direct_rows, 1u);
  EXPECT_TRUE(Of(FindFindings(t, {}), "no-overlap-default-stream").empty());
}

// The GPU idles while host functions run: work queued behind one on its stream waits, though
// the host issued it long before. Without the calls' streams (traces from before libprof
// recorded them) that time reads as the host launching late.
TEST_F(FindingsTest, WorkQueuedBehindHostFunctionsIsTheirIdleTime) {
  const auto breakdown_of = [&](const ProcessTrace& t) {
    const auto found = Of(FindFindings(t, {}), "gpu-idle-breakdown");
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? Finding{} : found[0];
  };
  const Finding with = breakdown_of(Load(HostFunctionScenario(true)));
  const IdleTotals& idle = std::get<IdleBreakdownDetails>(with.details).idle;
  // 19 gaps of 2 ms behind a host function and 19 of 10 µs between steps (the next step's
  // first kernel was queued with nothing between: device-side launch latency), after the first
  // kernel (start-up ends there; the first step's host function gap is counted too).
  EXPECT_EQ(idle.host_function_ns, 20u * 2'000'000u);
  EXPECT_EQ(idle.launch_ns, 19u * 10'000u);
  EXPECT_EQ(idle.other_ns + idle.sync_ns, 0u);
  EXPECT_NE(with.explanation.find("while work waited in its stream for a host function (most "
                                  "enqueued by cudaLaunchHostFunc, 40.0 ms)"),
            std::string::npos)
      << with.explanation;
  EXPECT_NE(with.explanation.find("Most idle time had work waiting in its stream for host "
                                  "functions (most enqueued by cudaLaunchHostFunc)"),
            std::string::npos)
      << with.explanation;

  const Finding without = breakdown_of(Load(HostFunctionScenario(false)));
  const IdleTotals& before = std::get<IdleBreakdownDetails>(without.details).idle;
  EXPECT_EQ(before.host_function_ns, 0u);
  EXPECT_EQ(before.launch_ns, idle.total());
}

// A stream that waits on a memory value the host writes 1 ms after issuing the work behind it
// (cuStreamWaitValue32 on a mapped flag, as .carry/s16/wait_value.cu ran on the H200): the GPU
// idles behind the wait, not behind launches, though launches are all it saw before libprof
// recorded the wait's stream.
TEST_F(FindingsTest, WorkQueuedBehindAMemoryWaitIsItsIdleTime) {
  TraceBuilder b(5155);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(13, StreamType::kNonBlocking);
  double host = 10, gpu = 20;
  for (int step = 0; step < 20; ++step) {
    b.Launch("spin", host, host + 8, gpu, gpu + 9, 13);
    b.Api("cuStreamWaitValue32", host + 9, host + 11, 1, 0, ApiDomain::kDriver);
    b.records().api_calls.back().stream_id = 13;
    // Issued at once, run once the host wrote the flag, 1 ms after the first kernel ended.
    b.Launch("spin", host + 12, host + 20, gpu + 1009, gpu + 1018, 13);
    host += 1100;
    gpu += 1100;
  }
  b.Api("cudaStreamSynchronize", host, host + 5);
  b.SetEnd(host + 10);
  const auto found = Of(FindFindings(Load(std::move(b)), {}), "gpu-idle-breakdown");
  ASSERT_EQ(found.size(), 1u);
  const IdleTotals& idle = std::get<IdleBreakdownDetails>(found[0].details).idle;
  // 20 gaps of 1 ms, each the wait's from the second kernel's launch call's return, 1 µs in
  // (the launch's before); between steps, 10 µs of the next step's launch.
  EXPECT_EQ(idle.memory_wait_ns, 20u * 999'000u);
  EXPECT_EQ(idle.launch_ns, 20u * 1'000u + 19u * 10'000u);
  EXPECT_EQ(idle.host_function_ns, 0u);
  EXPECT_NE(found[0].explanation.find("Most idle time had work waiting in its stream for a "
                                      "memory value (most behind cuStreamWaitValue32)"),
            std::string::npos)
      << found[0].explanation;
  EXPECT_EQ(found[0].explanation.find("Launch-bound"), std::string::npos) << found[0].explanation;
}

// A pipeline over two GPUs (as .carry/s16/cross_device.cu ran on two H200s): each step GPU 1
// runs a 150 µs stage and records an event that GPU 0's stream waits for before its 4 µs stage.
// The host issues everything at once, so GPU 0's idle time is GPU 1's work, not launches; an
// event wait on GPU 0's own device holds nothing.
TEST_F(FindingsTest, WorkWaitingForAnotherGpusEventIsThatGpusIdleTime) {
  const auto scenario = [](uint32_t recording_device) {
    TraceBuilder b(5156);
    b.AddContext(1, 7);
    b.AddContext(2, 8);
    b.records().contexts[1].device_id = 1;
    b.AddStream(13, StreamType::kDefault, 1);
    b.AddStream(14, StreamType::kDefault, recording_device == 1 ? 2 : 1);
    double host = 10, gpu = 100;
    for (int step = 0; step < 20; ++step) {
      const uint64_t launch = b.Api("cudaLaunchKernel", host, host + 5);
      b.AddKernel("stage1", gpu, gpu + 150, launch, 14, recording_device == 1 ? 2 : 1)
          .shape.device_id = recording_device;
      const uint64_t record = b.Api("cudaEventRecord", host + 6, host + 7);
      b.AddEvent(1, 100 + step, record, 14).device_id = recording_device;
      const uint64_t wait = b.Api("cudaStreamWaitEvent", host + 8, host + 9);
      b.AddSync(SyncType::kStreamWaitEvent, host + 8, host + 9, wait, 13, 100 + step);
      b.Launch("stage0", host + 10, host + 15, gpu + 152, gpu + 156, 13);
      host += 16;
      gpu += 160;
    }
    b.Api("cudaStreamSynchronize", host, gpu + 10);
    b.SetEnd(gpu + 20);
    return b;
  };
  const auto gpu0 = [](const std::vector<Finding>& all) -> std::optional<IdleTotals> {
    for (const Finding& f : all) {
      if (f.rule == RuleId::kGpuIdleBreakdown && f.device_id == 0u) {
        return std::get<IdleBreakdownDetails>(f.details).idle;
      }
    }
    return std::nullopt;
  };
  const std::vector<Finding> across = FindFindings(Load(scenario(1)), {});
  const auto idle = gpu0(across);
  ASSERT_TRUE(idle);
  // GPU 0 idles 154 µs of each 160 µs step after its first stage: all of it behind GPU 1.
  EXPECT_EQ(idle->other_device_ns, 19u * 156'000u);
  EXPECT_EQ(idle->launch_ns, 0u);
  for (const Finding& f : across) {
    if (f.rule == RuleId::kGpuIdleBreakdown && f.device_id == 0u) {
      EXPECT_NE(f.explanation.find("Most idle time had work waiting for another GPU"),
                std::string::npos)
          << f.explanation;
    }
  }
  // The same with the recording on GPU 0 itself: GPU 0 ran stage1 too, and nothing crosses
  // (each idle piece classified, whatever the rules report).
  const auto pieces = [&](const ProcessTrace& t) {
    std::map<IdleCause, size_t> causes;
    const TraceIndex index(t);
    for (const DeviceIdle& d : ClassifyIdle(index)) {
      for (const IdlePiece& p : d.pieces) ++causes[p.cause];
    }
    return causes;
  };
  EXPECT_GT(pieces(Load(scenario(1)))[IdleCause::kOtherDevice], 0u);
  EXPECT_EQ(pieces(Load(scenario(0)))[IdleCause::kOtherDevice], 0u);
}

// A graph whose host node holds it 1.5 ms between two 11 µs kernels, replayed 30 times (as the
// H200 recorded it): the idle time is inside the graphs, not the graph launches' cost. The
// graph was captured from the stream (cudaLaunchHostFunc between Begin/EndCapture, after a
// kernel of the stream): that call enqueued nothing on the stream, so the first replay's wait
// is no host function's.
TEST_F(FindingsTest, IdleTimeBetweenAGraphsNodesIsTheGraphs) {
  TraceBuilder b(5153);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(13, StreamType::kDefault);
  b.Launch("before", 0.5, 0.8, 100, 110, 13);
  b.Api("cudaStreamBeginCapture", 1, 2);
  b.Api("cudaLaunchHostFunc", 2.5, 3);
  b.records().api_calls.back().stream_id = 13;
  b.Api("cudaStreamEndCapture", 3.5, 4);
  double host = 10, gpu = 200;
  for (int replay = 0; replay < 30; ++replay) {
    const uint64_t corr = b.Launch("node_a", host, host + 120, gpu, gpu + 11, 13, 1,
                                   "cudaGraphLaunch");
    b.records().kernels.back().graph_id = 2;
    Kernel& second = b.AddKernel("node_b", gpu + 1511, gpu + 1522, corr, 13);
    second.graph_id = 2;
    host += 125;
    gpu += 1530;
  }
  b.Api("cudaStreamSynchronize", host, gpu + 10);
  b.SetEnd(gpu + 20);
  const auto found = Of(FindFindings(Load(std::move(b)), {}), "gpu-idle-breakdown");
  ASSERT_EQ(found.size(), 1u);
  const IdleTotals& idle = std::get<IdleBreakdownDetails>(found[0].details).idle;
  EXPECT_EQ(idle.in_graph_ns, 30u * 1'500'000u);
  EXPECT_EQ(idle.host_function_ns, 0u);
  EXPECT_NE(found[0].explanation.find("Most idle time was inside CUDA graphs, between their "
                                      "nodes"),
            std::string::npos)
      << found[0].explanation;
  EXPECT_EQ(found[0].explanation.find("Launch-bound"), std::string::npos) << found[0].explanation;
}

// A graph whose WHILE node runs its body (one 3 µs kernel) 10 times, replayed 20 times, as the
// H200 recorded it (.carry/s16/cond_graph.cu): the device launches each iteration's body, whose
// kernels carry no correlation id and run on a stream of their own, 6 µs apart. That idle time
// is the graph's (between its nodes), not the host's: no call issued those kernels.
TEST_F(FindingsTest, IdleTimeBetweenAConditionalNodesIterationsIsTheGraphs) {
  TraceBuilder b(5154);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  double host = 10, gpu = 100;
  for (int replay = 0; replay < 20; ++replay) {
    b.Launch("setup", host, host + 7, gpu, gpu + 1, 7, 1, "cudaGraphLaunch");
    b.records().kernels.back().graph_id = 3;
    for (int i = 0; i < 10; ++i) {
      const double start = gpu + 7 + 9 * i;
      Kernel& body = b.AddKernel("body", start, start + 3, 0, 14);
      body.graph_id = 3;
    }
    host += 8;
    gpu += 100;
  }
  b.Api("cudaMemcpy", host, gpu + 10);
  b.SetEnd(gpu + 20);
  const auto found = Of(FindFindings(Load(std::move(b)), {}), "gpu-idle-breakdown");
  ASSERT_EQ(found.size(), 1u);
  const IdleTotals& idle = std::get<IdleBreakdownDetails>(found[0].details).idle;
  // Per replay: 6 µs before the first body and between the 10 bodies; after the first
  // replay (start-up ends at the first kernel), 10 µs from the last body to the next setup,
  // which waited in the stream behind the graph launched before it.
  EXPECT_EQ(idle.in_graph_ns, 20u * 10u * 6'000u);
  EXPECT_EQ(idle.other_ns, 0u);
  EXPECT_NE(found[0].explanation.find("inside CUDA graphs, between their nodes: 200 of the "
                                      "graphs' 220 kernels were launched by the device, as the "
                                      "body of a conditional node"),
            std::string::npos)
      << found[0].explanation;
}

// A host function on another stream, or one the stream's next operation was issued before, is
// not what that operation waited for.
TEST_F(FindingsTest, OnlyAHostFunctionBetweenAStreamsOperationsHoldsTheSecond) {
  TraceBuilder b(5152);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(14, StreamType::kDefault);
  b.AddStream(15, StreamType::kDefault);
  b.Launch("first", 10, 15, 100, 200, 14);
  b.Launch("second", 16, 20, 1200, 1300, 14);  // issued before the host function
  b.Api("cudaLaunchHostFunc", 21, 23);
  b.records().api_calls.back().stream_id = 14;
  b.Api("cudaLaunchHostFunc", 24, 26);
  b.records().api_calls.back().stream_id = 15;  // another stream's
  b.Launch("third", 27, 30, 2300, 2400, 15);  // behind stream 15's host function
  b.Api("cudaStreamSynchronize", 31, 2500);
  b.SetEnd(2600);
  const ProcessTrace t = Load(std::move(b));
  const TraceIndex index(t);
  const std::vector<DeviceIdle> devices = ClassifyIdle(index);
  ASSERT_EQ(devices.size(), 1u);
  const IdleTotals totals = SumIdle(devices[0].pieces, 0, UINT64_MAX);
  EXPECT_EQ(totals.launch_ns, 1'000'000u);          // before "second": no host function between
  EXPECT_EQ(totals.host_function_ns, 1'000'000u);   // before "third", on its own stream
}

// The legacy default stream and the blocking streams wait for each other's earlier work, host
// functions included; a non-blocking stream does not.
TEST_F(FindingsTest, AHostFunctionOnTheLegacyStreamHoldsTheBlockingStreams) {
  const auto idle_of = [&](uint32_t function_stream, uint32_t blocked_stream) {
    TraceBuilder b(5154);
    b.AddContext(1, 7);
    b.AddStream(7, StreamType::kNull);
    b.AddStream(14, StreamType::kDefault);
    b.AddStream(15, StreamType::kNonBlocking);
    b.Launch("before", 10, 13, 15, 115, function_stream);
    b.Api("cudaLaunchHostFunc", 20, 22);  // runs from 115 to about 2115
    b.records().api_calls.back().stream_id = function_stream;
    b.Launch("held", 23, 26, 2118, 2218, blocked_stream);
    b.SetEnd(2300);
    const ProcessTrace t = Load(std::move(b));
    const TraceIndex index(t);
    const std::vector<DeviceIdle> devices = ClassifyIdle(index);
    EXPECT_EQ(devices.size(), 1u);
    return devices.empty() ? IdleTotals{} : SumIdle(devices[0].pieces, 0, UINT64_MAX);
  };
  EXPECT_EQ(idle_of(7, 14).host_function_ns, 2'003'000u);  // legacy function, blocking stream
  EXPECT_EQ(idle_of(14, 7).host_function_ns, 2'003'000u);  // blocking function, legacy stream
  EXPECT_EQ(idle_of(14, 14).host_function_ns, 2'003'000u);  // its own stream
  // A non-blocking stream follows only itself: the gap is launch latency, as before.
  const IdleTotals free = idle_of(7, 15);
  EXPECT_EQ(free.host_function_ns, 0u);
  EXPECT_EQ(free.launch_ns, 2'003'000u);
}

// Downloads queued behind uploads on one stream: four pairs, each download waiting the whole
// 200 µs of its upload; an upload behind a download, a download issued once its upload was done,
// one with a kernel between, and a pageable one do not count.
TEST_F(FindingsTest, DownloadsQueuedBehindUploadsOnOneStream) {
  const ProcessTrace t = Load(TwoWayCopiesScenario());
  const auto all = Of(FindFindings(t, {}), "two-way-copies-one-stream");
  ASSERT_EQ(all.size(), 1u);
  const Finding& f = all[0];
  EXPECT_EQ(f.device_id, 0u);
  EXPECT_EQ(f.stream_id, 17u);
  const auto& d = std::get<TwoWayCopiesDetails>(f.details);
  EXPECT_EQ(d.pairs, 4u);
  EXPECT_EQ(d.copies, 8u);
  EXPECT_EQ(d.copy_ns, 8u * 200'000u);
  EXPECT_EQ(d.htod_bytes, 4u * (8u << 20));
  EXPECT_EQ(d.dtoh_bytes, 4u * (8u << 20));
  EXPECT_EQ(f.blocked_ns, 800'000u);
  EXPECT_EQ(f.host_start_ns, 105'000u);       // the first upload
  EXPECT_EQ(f.host_duration_ns, 3'400'000u);  // to the last pair's download end, 3.505 ms
  EXPECT_NE(f.explanation.find("4 times a device-to-host copy was queued behind a host-to-device"),
            std::string::npos)
      << f.explanation;
  EXPECT_NE(f.explanation.find("up to 800.0 µs could overlap"), std::string::npos) << f.explanation;
  // At most the shorter direction's time: downloads of 50 µs waiting 200 µs each.
  TraceBuilder short_downloads = TwoWayCopiesScenario();
  for (Memcpy& m : short_downloads.records().memcpys) {
    if (m.copy_kind == CopyKind::kDtoH && m.end_ns - m.start_ns == 200'000) {
      m.end_ns = m.start_ns + 50'000;
    }
  }
  const auto shorter = Of(FindFindings(Load(short_downloads), {}), "two-way-copies-one-stream");
  ASSERT_EQ(shorter.size(), 1u);
  EXPECT_EQ(shorter[0].blocked_ns, 4u * 50'000u);
  // At most the pairs' time without a kernel: with compute of 350 µs on stream 18 from each
  // step's start, only 55 µs of each pair's 400 µs (from 5 to 405 µs) run alone.
  TraceBuilder heavy = TwoWayCopiesScenario();
  for (Kernel& k : heavy.records().kernels) {
    if (k.stream_id == 18) k.end_ns = k.start_ns + 350'000;
  }
  const auto paced = Of(FindFindings(Load(heavy), {}), "two-way-copies-one-stream");
  ASSERT_EQ(paced.size(), 1u);
  EXPECT_EQ(paced[0].blocked_ns, 4u * 55'000u);
  // Below --min-wait it is not reported.
  EXPECT_TRUE(Of(FindFindings(t, MinWait(800'001)), "two-way-copies-one-stream").empty());
}

TEST_F(FindingsTest, NoOverlapOnTheLegacyStreamAndThroughPageableMemory) {
  const ProcessTrace t = Load(OverlapScenario());
  const auto all = Of(FindFindings(t, {}), "no-overlap-default-stream");
  ASSERT_EQ(all.size(), 2u);
  const Finding& legacy = all[0];
  const auto& on_legacy = std::get<OverlapDetails>(legacy.details);
  EXPECT_EQ(on_legacy.serialised_by, "legacy-default-stream");
  EXPECT_EQ(legacy.stream_id, 7u);
  // The first chunk's upload comes before any kernel and the last chunk's read-back after the
  // last: neither can overlap a kernel of the stream, so 6 of the 8 copies count.
  EXPECT_EQ(on_legacy.copies, 6u);
  EXPECT_EQ(on_legacy.copy_ns, 6u * 100'000u);
  EXPECT_EQ(on_legacy.kernels, 4u);
  EXPECT_EQ(on_legacy.kernel_ns, 4u * 50'000u);
  // min(600, 200) µs, nothing overlapped already.
  EXPECT_EQ(legacy.blocked_ns, 200'000u);
  EXPECT_EQ(legacy.host_start_ns, 110'000u);  // the first kernel
  EXPECT_EQ(legacy.host_duration_ns, 950'000u);  // to the last kernel's end, 1.06 ms
  const Finding& pageable = all[1];
  const auto& by_pageable = std::get<OverlapDetails>(pageable.details);
  EXPECT_EQ(by_pageable.serialised_by, "pageable-memory");
  // Only the first pageable copy pairs with a kernel: min(290, 200) µs.
  EXPECT_EQ(by_pageable.copies, 1u);
  EXPECT_EQ(by_pageable.copy_ns, 290'000u);
  EXPECT_EQ(by_pageable.kernels, 1u);
  EXPECT_EQ(pageable.blocked_ns, 200'000u);
  EXPECT_NE(pageable.explanation.find("pinned host memory"), std::string::npos);
  EXPECT_NE(legacy.explanation.find("cudaStreamNonBlocking"), std::string::npos);
  EXPECT_EQ(legacy.explanation.find("in PyTorch"), std::string::npos);
  // Below --min-wait neither is reported.
  EXPECT_TRUE(Of(FindFindings(t, MinWait(200'001)), "no-overlap-default-stream").empty());
  // A process with PyTorch's libraries among its stacks' modules and Python frames in its stacks
  // gets PyTorch's words too; a C++ program on LibTorch (no Python frame) does not.
  TraceBuilder torch = OverlapScenario();
  StackModule module;
  module.id = 1;
  module.path_id = torch.Intern("/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so");
  torch.records().stack_modules.push_back(module);
  StackFrame frame;
  frame.id = 1;
  frame.module_id = 1;
  torch.records().stack_frames.push_back(frame);
  CallStack stack;
  stack.id = 1;
  stack.frame_ids = {1};
  torch.records().call_stacks.push_back(stack);
  const auto libtorch = Of(FindFindings(Load(torch), {}), "no-overlap-default-stream");
  ASSERT_EQ(libtorch.size(), 2u);
  EXPECT_EQ(libtorch[0].explanation.find("in PyTorch"), std::string::npos);
  torch.records().call_stacks.back().python_frames.push_back(
      {torch.Intern("/home/me/train.py"), 12, torch.Intern("main")});
  const auto in_torch = Of(FindFindings(Load(std::move(torch)), {}), "no-overlap-default-stream");
  ASSERT_EQ(in_torch.size(), 2u);
  EXPECT_NE(in_torch[0].explanation.find("in PyTorch, copy the next batch on a side stream"),
            std::string::npos)
      << in_torch[0].explanation;
}

TEST_F(FindingsTest, AllocChurnWithImplicitSyncsAndSavings) {
  TraceBuilder b;
  // Six cudaMalloc [100i, 100i+10) / kernel / cudaFree [100i+20, 100i+40) of 1 MiB at one
  // address; each kernel runs [100i+15, 100i+30), so every cudaFree waits 10 µs for it.
  // Then six cudaMallocAsync/cudaFreeAsync pairs: 50 µs for the first, 3 µs for the others.
  auto memory_op = [&](uint64_t corr, MemoryOperation op, uint64_t address, double at) {
    MemoryOp m;
    m.operation = op;
    m.memory_kind = MemoryKind::kDevice;
    m.address = address;
    m.bytes = 1 << 20;
    m.time_ns = Us(at);
    m.correlation_id = corr;
    b.records().memory_ops.push_back(m);
  };
  for (int i = 0; i < 6; ++i) {
    const double s = 100.0 * i;
    memory_op(b.Api("cudaMalloc", s, s + 10), MemoryOperation::kAllocation, 0x1000, s);
    b.Launch("_Z4fillPi", s + 11, s + 14, s + 15, s + 30, 7);
    memory_op(b.Api("cudaFree", s + 20, s + 40), MemoryOperation::kRelease, 0x1000, s + 20);
  }
  for (int i = 0; i < 6; ++i) {
    const double s = 1000.0 + 100.0 * i;
    const double cost = i == 0 ? 48 : 1;
    memory_op(b.Api("cudaMallocAsync", s, s + cost), MemoryOperation::kAllocation, 0x2000, s);
    memory_op(b.Api("cudaFreeAsync", s + 50, s + 52), MemoryOperation::kRelease, 0x2000, s + 50);
  }
  b.SetEnd(2000);
  const ProcessTrace t = Load(b);
  const auto churn = Of(FindFindings(t, {}), "alloc-churn");
  ASSERT_EQ(churn.size(), 1u);  // the stream-ordered pairs are not churn to fix
  const Finding& f = churn[0];
  EXPECT_EQ(f.api, "cudaMalloc");
  const auto& d = std::get<AllocChurnDetails>(f.details);
  EXPECT_EQ(d.free_api, "cudaFree");
  EXPECT_EQ(d.bytes, 1u << 20);
  EXPECT_EQ(d.pairs, 6u);
  EXPECT_EQ(d.pairs_host_ns, 6u * 30'000u);
  // Each cudaFree entered at s+20 while the kernel ran until s+30: 6 waits of 10 µs.
  EXPECT_EQ(d.implicit_syncs, 6u);
  EXPECT_EQ(d.sync_wait_ns, 6u * 10'000u);
  // Caching: every pair after the first, 5 × 30 µs. cudaMallocAsync: their pairs cost 3 µs after
  // the first, so 150 - 5 × 3 = 135 µs.
  EXPECT_EQ(d.caching_saving_ns, 150'000u);
  EXPECT_EQ(f.blocked_ns, 150'000u);
  EXPECT_EQ(d.async_saving_ns, 135'000u);
  EXPECT_EQ(f.host_start_ns, 0u);
  EXPECT_EQ(f.host_duration_ns, 540'000u);
  // Fewer pairs than --churn-min-pairs: nothing.
  FindingsOptions strict;
  strict.churn_min_pairs = 7;
  EXPECT_TRUE(Of(FindFindings(t, strict), "alloc-churn").empty());
  EXPECT_NE(f.explanation.find("A caching allocator (allocate once and reuse"), std::string::npos);

  // The same pairs freed by PyTorch's torch.cuda.empty_cache() (the H200's stack of it): the
  // allocator is there already, and the advice says what defeats it.
  TraceRecords& r = b.records();
  const uint32_t names[] = {
      b.Intern("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::release_block"),
      b.Intern("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::emptyCache")};
  CallStack stack{.id = 1};
  for (uint32_t name : names) {
    const uint32_t id = static_cast<uint32_t>(r.stack_frames.size() + 1);
    r.stack_frames.push_back({.id = id, .address = 0x5000 + id, .function_id = name});
    stack.frame_ids.push_back(id);
  }
  r.call_stacks.push_back(stack);
  for (ApiCall& c : r.api_calls) {
    if (c.name_id == b.Intern("cudaFree")) c.stack_id = 1;
  }
  const auto emptied = Of(FindFindings(Load(b), {}), "alloc-churn");
  ASSERT_EQ(emptied.size(), 1u);
  EXPECT_NE(emptied[0].explanation.find("PyTorch's caching allocator would keep this memory and "
                                        "reuse it, but torch.cuda.empty_cache() gave it back"),
            std::string::npos)
      << emptied[0].explanation;
  EXPECT_EQ(emptied[0].blocked_ns, f.blocked_ns);
}

// The same pairs freed by PyTorch's cuDNN autotuning, which empties the allocator's cache after
// searching a new shape's algorithms (the H200's stack of it, .carry/s16/cudnn_bench.py): not
// the program's torch.cuda.empty_cache().
TEST_F(FindingsTest, AllocChurnFreedByCudnnAutotuningIsNotTheProgramsEmptyCache) {
  const auto with_caller = [&](const char* caller) {
    return ChurnFreedFrom(
        false, {"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::release_block",
                "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::emptyCache",
                caller});
  };
  const std::string cudnn =
      with_caller("at::native::run_single_conv(cudnnBackendDescriptorType_t, at::Tensor const&)");
  EXPECT_NE(cudnn.find("PyTorch's cuDNN autotuning (torch.backends.cudnn.benchmark) empties the "
                       "caching allocator"),
            std::string::npos)
      << cudnn;
  EXPECT_EQ(cudnn.find("torch.cuda.empty_cache()"), std::string::npos) << cudnn;
  const std::string program = with_caller("THCPModule_emptyCache(_object*, _object*)");
  EXPECT_NE(program.find("torch.cuda.empty_cache() gave it back to CUDA"), std::string::npos)
      << program;
  const std::string other = with_caller("at::native::some_op(at::Tensor const&)");
  EXPECT_NE(other.find("PyTorch emptied its caching allocator itself (in "
                       "at::native::some_op(at::Tensor const&))"),
            std::string::npos)
      << other;
}

// torch.cuda.graph() empties both of PyTorch's caches before each capture (its __enter__, in
// torch/cuda/graphs.py, calls torch.cuda.empty_cache() and the host cache's binding; as .carry/
// s17/torch_graph_recapture.py recorded them on the H200): a program capturing a graph per
// step is told that, not that its own empty_cache() call did it; the pinned host cache's
// churn (one cudaFreeHost a block) is named as that cache's.
TEST_F(FindingsTest, AllocChurnFreedByGraphCaptureNamesTorchCudaGraph) {
  const auto advice = [&](bool host, const std::vector<std::pair<std::string, std::string>>& py) {
    const std::vector<std::string> native =
        host ? std::vector<std::string>{"at::CachingHostAllocatorImpl<c10::cuda::CUDAStream>::"
                                        "free_from_pool()",
                                        "at::CachingHostAllocatorImpl<c10::cuda::CUDAStream>::"
                                        "empty_cache()",
                                        "THCPModule_hostEmptyCache(_object*, _object*)"}
             : std::vector<std::string>{
                   "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::"
                   "release_block",
                   "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::emptyCache",
                   "THCPModule_emptyCache(_object*, _object*)"};
    return ChurnFreedFrom(host, native, py);
  };
  constexpr const char* kTorch = "/venv/lib/python3.12/site-packages/torch/";
  const std::string memory_py = std::string(kTorch) + "cuda/memory.py";
  const std::string graphs_py = std::string(kTorch) + "cuda/graphs.py";
  const std::string module_py = std::string(kTorch) + "nn/modules/module.py";
  const std::pair<std::string, std::string> program{"/home/me/train.py", "<module>"};
  // torch.cuda.empty_cache() called by torch.cuda.graph's __enter__, then the program's line.
  const std::string device = advice(
      false, {{memory_py, "empty_cache"}, {graphs_py, "graph.__enter__"}, program});
  EXPECT_NE(device.find("PyTorch's torch.cuda.graph() empties the caching allocator each time "
                        "it captures a graph"),
            std::string::npos)
      << device;
  EXPECT_EQ(device.find("torch.cuda.empty_cache() gave it back"), std::string::npos) << device;
  // The host cache's binding called from graphs.py directly.
  const std::string host = advice(true, {{graphs_py, "graph.__enter__"}, program});
  EXPECT_NE(host.find("empties the pinned host memory cache each time it captures a graph"),
            std::string::npos)
      << host;
  // torch.cuda.empty_cache() on the program's own line is the program's.
  const std::string own = advice(false, {{memory_py, "empty_cache"}, program});
  EXPECT_NE(own.find("torch.cuda.empty_cache() gave it back to CUDA"), std::string::npos) << own;
  // torch.compile's CUDA graph trees recording a new shape's graph through torch.cuda.graph()
  // (as .carry/s17b/torch_ro_shapes.py did with a new batch size every other step).
  const std::string trees = std::string(kTorch) + "_inductor/cudagraph_trees.py";
  const std::string compiled = advice(
      true,
      {{graphs_py, "graph.__enter__"}, {trees, "CUDAGraphNode._record"}, program});
  EXPECT_NE(compiled.find("torch.compile(mode=\"reduce-overhead\") records a CUDA graph for "
                          "each new input shape through torch.cuda.graph(), which empties "
                          "PyTorch's pinned host memory cache each time"),
            std::string::npos)
      << compiled;
  // Other PyTorch Python code is named.
  const std::string other = advice(
      false, {{memory_py, "empty_cache"}, {module_py, "Module.cuda"}, program});
  EXPECT_NE(other.find("PyTorch emptied its caching allocator itself (in Module.cuda)"),
            std::string::npos)
      << other;
}

// Thrust's temporary storage, allocated per algorithm call by its default memory resource (the
// H200's frames of .carry/s16/thrust_sort.cu): thrust's allocator is the advice, not a caching
// allocator in general nor cudaMallocAsync.
TEST_F(FindingsTest, AllocChurnOfThrustTemporaryStorageNamesItsAllocator) {
  const std::string thrust = ChurnFreedFrom(
      false,
      {"thrust::THRUST_300001_SM_900_NS::device_ptr_memory_resource<thrust::THRUST_300001_SM_900_"
       "NS::system::cuda::detail::cuda_memory_resource<&cudaMalloc, &cudaFree, ...> >::"
       "do_allocate(unsigned long, unsigned long)",
       "thrust::THRUST_300001_SM_900_NS::detail::temporary_allocator<unsigned char, thrust::"
       "THRUST_300001_SM_900_NS::cuda_cub::tag>::allocate(unsigned long) [clone .isra.0]",
       "main"},
      {}, /*on_alloc=*/true);
  EXPECT_NE(thrust.find("These are thrust's temporary storage"), std::string::npos) << thrust;
  EXPECT_EQ(thrust.find("cudaMallocAsync"), std::string::npos) << thrust;
  // A program's own allocation in a loop keeps the general advice.
  const std::string own = ChurnFreedFrom(false, {"Step(float*)", "main"}, {}, true);
  EXPECT_NE(own.find("A caching allocator"), std::string::npos) << own;
}

// Device memory allocated and freed per buffer in a JAX process (as XLA_PYTHON_CLIENT_ALLOCATOR=
// platform made it on the H200, .carry/s16/jax_platform_alloc.py): JAX's words, not "a caching
// allocator"; pinned host memory's churn keeps the general advice.
TEST_F(FindingsTest, AllocChurnInJaxNamesItsPlatformAllocator) {
  TraceBuilder b;
  TraceRecords& r = b.records();
  for (int i = 0; i < 6; ++i) {
    const double s = 100.0 * i;
    for (const auto& [api, op, kind, at] :
         {std::tuple{"cuMemAlloc", MemoryOperation::kAllocation, MemoryKind::kDevice, s},
          std::tuple{"cuMemFree", MemoryOperation::kRelease, MemoryKind::kDevice, s + 20},
          std::tuple{"cuMemHostAlloc", MemoryOperation::kAllocation, MemoryKind::kPinned, s + 50},
          std::tuple{"cuMemFreeHost", MemoryOperation::kRelease, MemoryKind::kPinned, s + 70}}) {
      MemoryOp m{.operation = op,
                 .memory_kind = kind,
                 .address = kind == MemoryKind::kDevice ? 0x1000u : 0x9000u,
                 .bytes = 1 << 20,
                 .time_ns = Us(at)};
      m.correlation_id = b.Api(api, at, at + 20, 1, 0, ApiDomain::kDriver);
      r.memory_ops.push_back(m);
    }
  }
  b.SetEnd(1000);
  const auto advice = [&](const ProcessTrace& t) {
    std::map<std::string, std::string> by_api;
    for (const Finding& f : Of(FindFindings(t, {}), "alloc-churn")) by_api[f.api] = f.explanation;
    return by_api;
  };
  const auto plain = advice(Load(b));
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_NE(plain.at("cuMemAlloc").find("A caching allocator"), std::string::npos);
  // The same in a process with Python frames and XLA's plugin among its stack modules.
  r.stack_modules.push_back({.id = 1,
                             .path_id = b.Intern("/venv/lib/python3.12/site-packages/jax_plugins/"
                                                 "xla_cuda13/xla_cuda_plugin.so")});
  r.stack_frames.push_back({.id = 1, .address = 0x10, .module_id = 1});
  CallStack stack;
  stack.id = 1;
  stack.frame_ids = {1};
  stack.python_frames.push_back({b.Intern("/home/me/train.py"), 3, b.Intern("f")});
  r.call_stacks.push_back(stack);
  r.api_calls.back().stack_id = 1;
  const auto jax = advice(Load(b));
  ASSERT_EQ(jax.size(), 2u);
  EXPECT_NE(jax.at("cuMemAlloc")
                .find("In JAX, only XLA_PYTHON_CLIENT_ALLOCATOR=platform "
                      "allocates and frees each buffer like this"),
            std::string::npos)
      << jax.at("cuMemAlloc");
  EXPECT_NE(jax.at("cuMemHostAlloc").find("Pinned host memory is slow to allocate"),
            std::string::npos)
      << jax.at("cuMemHostAlloc");
  EXPECT_EQ(jax.at("cuMemHostAlloc").find("cudaMallocAsync"), std::string::npos)
      << jax.at("cuMemHostAlloc");
  // The pinned pairs allocated inside XLA's autotuning (as its candidates' checks did in
  // .carry/s17b/jax_scan.py): paid once per compilation, no finding.
  r.stack_frames.push_back(
      {.id = 2,
       .address = 0x20,
       .function_id = b.Intern("xla::Autotuner::GetTunedConfig(xla::HloInstruction const*, int)")});
  CallStack tuner;
  tuner.id = 2;
  tuner.frame_ids = {2};
  r.call_stacks.push_back(tuner);
  const uint32_t host_alloc = b.Intern("cuMemHostAlloc");
  for (ApiCall& c : r.api_calls) {
    if (c.name_id == host_alloc) c.stack_id = 2;
  }
  const auto tuned = advice(Load(b));
  EXPECT_EQ(tuned.size(), 1u);
  EXPECT_FALSE(tuned.contains("cuMemHostAlloc"));
}

// cudaMallocAsync/cudaFreeAsync of 1 GiB per step from a pool whose release threshold is 0 (the
// default), with a synchronisation after each free (as the H200 recorded .carry/s16/
// mallocasync.cu): each synchronisation gives the memory back to the OS (1.9 ms with no work to
// wait for) and each allocation maps it again (1.4 ms). With a threshold above the size, the
// pool keeps the memory: no finding.
TEST_F(FindingsTest, AllocChurnOfAPoolThatGivesItsMemoryBackAtEachSynchronisation) {
  const auto scenario = [&](uint64_t threshold) {
    TraceBuilder b;
    b.AddContext(1, 7);
    b.AddStream(13, StreamType::kDefault);
    auto memory_op = [&](uint64_t corr, MemoryOperation op, double at) {
      MemoryOp m{.operation = op,
                 .memory_kind = MemoryKind::kDevice,
                 .address = 0x3000,
                 .bytes = uint64_t{1} << 30,
                 .time_ns = Us(at),
                 .correlation_id = corr};
      m.stream_id = 13;
      m.async = true;
      m.pool_address = 0x3000;
      m.pool_type = 1;
      m.pool_release_threshold = threshold;
      m.pool_bytes = uint64_t{1} << 30;
      m.pool_used_bytes = op == MemoryOperation::kAllocation ? m.pool_bytes : 0;
      b.records().memory_ops.push_back(m);
    };
    for (int i = 0; i < 10; ++i) {
      const double s = 5000.0 * i;
      memory_op(b.Api("cudaMallocAsync", s, s + 1400), MemoryOperation::kAllocation, s + 1000);
      b.Launch("_Z3sumPf", s + 1410, s + 1420, s + 1425, s + 2300, 13);
      memory_op(b.Api("cudaFreeAsync", s + 1430, s + 1438), MemoryOperation::kRelease, s + 1435);
      // Waits 862 µs for the kernel, then 1.9 ms giving the memory back.
      b.Api("cudaStreamSynchronize", s + 1438, s + 4200);
    }
    b.SetEnd(50'000);
    return Of(FindFindings(Load(b), {}), "alloc-churn");
  };
  const auto found = scenario(0);
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.api, "cudaMallocAsync");
  const auto& d = std::get<AllocChurnDetails>(f.details);
  EXPECT_EQ(d.pairs, 10u);
  EXPECT_EQ(d.pool_release_threshold, 0u);
  EXPECT_EQ(d.release_sync_ns, 10u * 1'900'000u);
  // Every pair after the first (9 × 1.408 ms) and every give-back.
  EXPECT_EQ(d.caching_saving_ns, 9u * 1'408'000u + 10u * 1'900'000u);
  EXPECT_EQ(f.blocked_ns, d.caching_saving_ns);
  EXPECT_NE(f.explanation.find("the 10 synchronisations after the frees spent 19.0 ms not "
                               "waiting for the GPU. The memory pool's release threshold is "
                               "0 B, below the 1.00 GiB freed into it"),
            std::string::npos)
      << f.explanation;
  EXPECT_NE(f.explanation.find("cudaMemPoolAttrReleaseThreshold"), std::string::npos);
  EXPECT_TRUE(scenario(uint64_t{1} << 30).empty());
}

TEST_F(FindingsTest, EmptyAndHostOnlyTracesHaveNoFindings) {
  TraceBuilder empty;
  empty.SetEnd(10);
  EXPECT_TRUE(FindFindings(Load(empty), {}).empty());
  EXPECT_TRUE(FindFindings(Load(HostOnlyScenario()), {}).empty());
  FindingsReportContext context;
  EXPECT_NE(FindingsTable(std::vector<Finding>{}, context).find("No findings"), std::string::npos);
  EXPECT_EQ(FindingsJson(std::vector<Finding>{}, context).rfind("{\n  \"findings\": []", 0), 0u);
}

TEST_F(FindingsTest, JsonHasTheIssueShape) {
  const ProcessTrace t = Load(Nrm2Scenario());
  const auto all = FindFindings(t, {});
  FindingsReportContext context;
  context.all = true;
  const std::string json = FindingsJson(Of(all, "blocked-on-prior-work"), context);
  for (const char* key :
       {"\"rule\": \"blocked-on-prior-work\"", "\"api\": \"cudaMemcpyAsync\"", "\"pid\": 4242",
        "\"thread_id\": 1", "\"correlation_id\": ", "\"host_start_ns\": 90000",
        "\"host_duration_ns\": 4940000", "\"blocked_ns\": 4930000", "\"stream_id\": 7",
        "\"bytes\": 4", "\"copy_kind\": \"DtoH\"", "\"src_kind\": \"device\"",
        "\"dst_kind\": \"pageable\"", "\"blamed\": [", "\"kind\": \"kernel\"",
        "\"overlap_ns\": 4920000", "\"nvtx\": []", "\"explanation\": \"cudaMemcpyAsync (4 B"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  }
  EXPECT_EQ(json.find("\"count\""), std::string::npos);
  context.all = false;
  const std::string grouped = FindingsJson(all, context);
  EXPECT_NE(grouped.find("\"count\": 1"), std::string::npos);
  EXPECT_NE(grouped.find("\"total_blocked_ns\": 4930000"), std::string::npos);
}

// The host headline's bound: nrm2's read-back waits 4.93 ms for a kernel that keeps the GPU busy
// all that time. The wait (from 90 µs) comes after start-up (which ends at the first kernel, at
// 80 µs), so the bound is the steady state: 80 µs to the read-back copy's end at 5023.91 µs,
// 4943.91 µs, of which the kernels and the copy fill 4940.91 µs: removing the wait could save
// 3 µs at most. Had a wait come before start-up's end, the bound would be the span from the
// first operation (the upload at 50 µs): 4973.91 µs, 4941.625 µs busy. A trace whose GPU sat
// idle through its waits gets no such line.
TEST_F(FindingsTest, WaitsForABusyGpuAreBoundedByItsIdleTime) {
  const auto all = FindFindings(Load(Nrm2Scenario()), {});
  FindingsReportContext context;
  context.trace_ns = 5'033'000;
  const std::string table = FindingsTable(all, context);
  EXPECT_NE(table.find("  The GPU was busy 99.94% of the steady state (4.94 ms), so the waits for "
                       "its work (4.93 ms) can shorten the run by 3.0 µs at most, its idle time: "
                       "the host waited for a GPU-bound program"),
            std::string::npos)
      << table;
  const auto json = nlohmann::json::parse(FindingsJson(all, context));
  EXPECT_EQ(json["totals"]["host_waits_ns"], 4'930'000u);
  EXPECT_EQ(json["totals"]["bound_span_ns"], 4'943'910u);
  EXPECT_EQ(json["totals"]["bound_gpu_busy_ns"], 4'940'910u);
  EXPECT_EQ(json["totals"]["bound_after_start_up"], true);
  // The same findings with the wait moved before start-up's end: the whole active span.
  std::vector<Finding> early = all;
  for (Finding& f : early) {
    if (RuleName(f.rule) == "blocked-on-prior-work") f.host_start_ns = 70'000;
  }
  const auto before = nlohmann::json::parse(FindingsJson(early, context));
  EXPECT_EQ(before["totals"]["bound_span_ns"], 4'973'910u);
  EXPECT_EQ(before["totals"]["bound_gpu_busy_ns"], 4'941'625u);
  EXPECT_EQ(before["totals"]["bound_after_start_up"], false);
  EXPECT_NE(FindingsTable(early, context).find("of the time from its first operation to its last"),
            std::string::npos);

  // The GPU idle while the host waits elsewhere: a wait shorter than the idle time is no news.
  TraceBuilder idle(77);
  idle.AddContext(1, 7);
  idle.AddStream(7, StreamType::kNull);
  const uint64_t launch = idle.Api("cudaLaunchKernel", 10, 12, 1);
  idle.AddKernel("short", 15, 115, launch, 7);
  const uint64_t sync = idle.Api("cudaStreamSynchronize", 20, 116, 1);
  idle.AddSync(SyncType::kStreamSynchronize, 20, 116, sync, 7);
  idle.Api("cudaMemGetInfo", 120, 5000, 1);  // host work, GPU idle
  const uint64_t late = idle.Api("cudaLaunchKernel", 5001, 5003, 1);
  idle.AddKernel("late", 5005, 5105, late, 7);
  idle.SetEnd(5200);
  const std::string quiet = FindingsTable(FindFindings(Load(idle), {}), context);
  EXPECT_NE(quiet.find("Host: API calls lost 95.0 µs"), std::string::npos) << quiet;
  EXPECT_EQ(quiet.find("at most, its idle time"), std::string::npos) << quiet;
}

// Issue 19: start-up (a context, a first copy, two lazily loaded modules) ends after the loads
// that dominate it, not at the first kernel and not at a module loaded late in the steady state.
TEST_F(FindingsTest, StartUpEndsAfterLazyLoadingButNotAtALateLoad) {
  const ProcessTrace t = Load(StartUpScenario());
  const TraceIndex index(t);
  const StartUp s = FindStartUp(index);
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.start_ns, Us(0));
  EXPECT_EQ(s.first_op_ns, Us(56005));
  EXPECT_TRUE(s.first_op_is_kernel);
  // The second load [56110, 86090) fills 99.6% of the time since the first kernel; the late one
  // [102000, 104000) only 11% of the 17.9 ms since start-up's end.
  EXPECT_EQ(s.end_ns, Us(86090));
  EXPECT_EQ(s.module_load.ns, 49'980'000u + 29'980'000u);
  EXPECT_EQ(s.module_load.calls, 2u);
  EXPECT_EQ(s.module_load.top_api, "cuLibraryLoadData");
  EXPECT_EQ(s.context.ns, 5'000'000u);
  EXPECT_EQ(s.context.calls, 1u);
  EXPECT_EQ(s.allocation.ns, 100'000u);
  EXPECT_EQ(s.allocation.calls, 1u);
}

// A cuBLAS program on an H200: its first cudaMalloc took 198 ms, nearly all of it creating the
// context (libprof's CONTEXT_CREATED callback came 196 ms into it). That time is context
// creation, the rest of the call an allocation; a context created inside context set-up
// (cuDevicePrimaryCtxRetain, nested in the same cudaMalloc) is counted once, as that call.
TraceBuilder ContextInFirstCallScenario(bool nested_retain) {
  TraceBuilder b(78);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.records().contexts.back().created_ns = Us(196100);
  b.records().contexts.back().created_thread_id = 1;
  b.Api("cuInit", 50, 60, 1, 0, ApiDomain::kDriver);
  b.Api("cudaMalloc", 100, 198100, 1);
  if (nested_retain) b.Api("cuDevicePrimaryCtxRetain", 200, 196150, 1, 0, ApiDomain::kDriver);
  b.Api("cudaMalloc", 198200, 198300, 1);
  b.Api("cudaMalloc", 198400, 198500, 2);  // another thread: nothing to do with it
  b.Launch("gemm", 199000, 199005, 199010, 202000, 7);
  b.SetEnd(203000);
  return b;
}

// Four threads allocating at once in start-up (a program with a thread per stream, on the
// H200): the API that start-up names spent the union of its calls' time, never more than the
// kind's whole time (it said "allocations 128.85 ms (4 calls, most in cudaMalloc, 382.05 ms)").
// A module loaded before every launch all through the run (as .carry/s16/module_loop.cu and a
// CuPy RawKernel built per call ran on the H200): code loaded again and again, said by the
// start-up finding. Not so for a library's kernels loaded per new shape (cuLibraryLoadData, as
// cuDNN's), nor for loads that come in one burst (a compiler's).
TEST_F(FindingsTest, ModuleLoadsAllThroughTheRunAreSaidToRecur) {
  const auto scenario = [&](const char* api, bool burst) {
    TraceBuilder b;
    b.AddContext(1, 7);
    double t = 10;
    for (int step = 0; step < 20; ++step, t += 100) {
      if (!burst || (step >= 10 && step < 15)) {
        b.Api(api, t, t + 30, 1, 0, ApiDomain::kDriver);
        if (burst) b.Api(api, t + 31, t + 40, 1, 0, ApiDomain::kDriver);
      }
      b.Launch("scale", t + 50, t + 55, t + 60, t + 90, 7);
    }
    b.SetEnd(t);
    const ProcessTrace trace = Load(b);
    return FindStartUp(TraceIndex(trace));
  };
  EXPECT_EQ(scenario("cuModuleLoadData", false).recurring_module_loads, 19u);
  EXPECT_EQ(scenario("cuLibraryLoadData", false).recurring_module_loads, 0u);
  EXPECT_EQ(scenario("cuModuleLoadData", true).recurring_module_loads, 0u);
  TraceBuilder b;
  b.AddContext(1, 7);
  for (int step = 0; step < 20; ++step) {
    const double t = 10 + 100.0 * step;
    b.Api("cuModuleLoadData", t, t + 30, 1, 0, ApiDomain::kDriver);
    b.Launch("scale", t + 50, t + 55, t + 60, t + 90, 7);
  }
  b.SetEnd(2010);
  const auto found = Of(FindFindings(Load(b), {}), "start-up");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(std::get<StartUpDetails>(found[0].details).recurring_module_loads, 19u);
  EXPECT_NE(found[0].explanation.find("; code was loaded 19 times between the program's kernels, "
                                      "all through the run"),
            std::string::npos)
      << found[0].explanation;
}

TEST_F(FindingsTest, StartUpNamesAnApisTimeOnceForCallsOfSeveralThreadsAtOnce) {
  TraceBuilder b;
  b.AddContext(1, 7);
  for (uint32_t tid = 1; tid <= 4; ++tid) b.Api("cudaMalloc", 100 + tid, 200 + tid, tid);
  b.Launch("first", 300, 305, 310, 400, 7);
  b.SetEnd(500);
  const ProcessTrace t = Load(std::move(b));
  const StartUp s = FindStartUp(TraceIndex(t));
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.allocation.calls, 4u);
  EXPECT_EQ(s.allocation.ns, 103'000u);  // 101 to 204 µs
  EXPECT_EQ(s.allocation.top_api, "cudaMalloc");
  EXPECT_EQ(s.allocation.top_api_ns, s.allocation.ns);
}

TEST_F(FindingsTest, AContextCreatedInsideTheFirstCallIsContextCreation) {
  const ProcessTrace t = Load(ContextInFirstCallScenario(false));
  const StartUp s = FindStartUp(TraceIndex(t));
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.context.ns, 10'000u + 196'000'000u);  // cuInit and [100 µs, 196.1 ms)
  EXPECT_EQ(s.context.calls, 2u);
  EXPECT_EQ(s.context.top_api, "cudaMalloc creating the context");
  EXPECT_EQ(s.context.top_api_ns, 196'000'000u);
  EXPECT_EQ(s.allocation.ns, 2'000'000u + 100'000u + 100'000u);  // the rest of it, two more
  EXPECT_EQ(s.allocation.calls, 3u);
  EXPECT_EQ(s.allocation.top_api, "cudaMalloc");
  const auto start_up = Of(FindFindings(t, {}), "start-up");
  ASSERT_EQ(start_up.size(), 1u);
  EXPECT_NE(start_up[0].explanation.find("context creation 196.01 ms (2 calls, most in cudaMalloc "
                                         "creating the context, 196.0 ms)"),
            std::string::npos)
      << start_up[0].explanation;

  // Created inside cuDevicePrimaryCtxRetain: that call is the context set-up, once.
  const StartUp nested = FindStartUp(TraceIndex(Load(ContextInFirstCallScenario(true))));
  EXPECT_EQ(nested.context.ns, 10'000u + 195'950'000u);
  EXPECT_EQ(nested.context.calls, 2u);
  EXPECT_EQ(nested.context.top_api, "cuDevicePrimaryCtxRetain");
  EXPECT_EQ(nested.allocation.ns, 198'000'000u + 100'000u + 100'000u);

  // PyTorch's: inside a query the default filter keeps for that reason alone.
  const StartUp query = FindStartUp(TraceIndex(Load(FilteredCallCreatesTheContextScenario())));
  EXPECT_EQ(query.context.top_api, "cudaDeviceGetStreamPriorityRange creating the context");
  EXPECT_EQ(query.context.top_api_ns, 120'000'000u);

  // A trace from before libprof recorded creation: the call is an allocation, as it was.
  TraceBuilder old = ContextInFirstCallScenario(false);
  old.records().contexts.back().created_ns = 0;
  const StartUp before = FindStartUp(TraceIndex(Load(old)));
  EXPECT_EQ(before.context.ns, 10'000u);
  EXPECT_EQ(before.allocation.ns, 198'000'000u + 100'000u + 100'000u);
}

// A context created again inside a call long after start-up (the runtime's primary context
// after cudaDeviceReset, as .carry/s17/device_reset.cu ran on the H200: 122 ms in a cudaMalloc)
// is later start-up work, like a late module load: the GPU rules leave its idle time out, and
// the start-up finding names it.
TEST_F(FindingsTest, AContextCreatedAgainLaterIsStartUpWorkNotSynchronisation) {
  TraceBuilder b(79);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.records().contexts.back().created_ns = Us(100);
  b.records().contexts.back().created_thread_id = 1;
  double t = 200;
  for (int step = 0; step < 3000; ++step, t += 100) b.Launch("scale", t, t + 5, t + 10, t + 90, 7);
  // The same context id created again 120 ms into a 130 ms cudaMalloc 300 ms later (a later
  // context record: the device was reset).
  ContextInfo again = b.records().contexts.back();
  again.created_ns = Us(t + 120'000);
  b.records().contexts.push_back(again);
  b.Api("cudaMalloc", t, t + 130'000, 1);
  t += 130'000;
  for (int step = 0; step < 200; ++step, t += 100) b.Launch("scale", t, t + 5, t + 10, t + 90, 7);
  b.SetEnd(t);
  const ProcessTrace trace = Load(b);
  const StartUp s = FindStartUp(TraceIndex(trace));
  ASSERT_TRUE(s.known);
  ASSERT_EQ(s.later_loading.size(), 1u);
  EXPECT_EQ(s.later_loading[0].length(), 120'000'000u);
  EXPECT_TRUE(s.later_context);
  EXPECT_EQ(s.later_load.top_api, "cudaMalloc creating the context");
  const std::vector<Finding> all = FindFindings(trace, {});
  const auto start_up = Of(all, "start-up");
  ASSERT_EQ(start_up.size(), 1u);
  EXPECT_NE(start_up[0].explanation.find("module loading and context creation after it, 120.0 ms "
                                         "(1 call, cudaMalloc creating the context)"),
            std::string::npos)
      << start_up[0].explanation;
  // The GPU's idle time in the steady state is the 10 µs gaps and the allocation's last 10 ms,
  // not its 120 ms of context creation.
  for (const Finding& f : Of(all, "gpu-idle-breakdown")) {
    EXPECT_LT(f.blocked_ns, 20'000'000u) << f.explanation;
  }
}

// A loop that pins a fresh host buffer at each step (cudaHostAlloc, 2 ms, then cudaFreeHost, as
// .carry/s17/pinned_churn.cu did on the H200): the GPU idles behind allocation calls, and the
// breakdown's advice is to reuse the memory, not to drop the calls or use cudaMallocAsync.
TEST_F(FindingsTest, IdleBehindAllocationCallsAdvisesReuse) {
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  double t = 10;
  for (int step = 0; step < 20; ++step, t += 2400) {
    b.Api("cudaHostAlloc", t, t + 2000);
    b.Launch("scale", t + 2010, t + 2015, t + 2020, t + 2100, 7);
    b.Api("cudaFreeHost", t + 2110, t + 2300);
  }
  b.SetEnd(t);
  const auto breakdown = Of(FindFindings(Load(b), {}), "gpu-idle-breakdown");
  ASSERT_EQ(breakdown.size(), 1u);
  const std::string& text = breakdown[0].explanation;
  EXPECT_NE(text.find("(most in cudaHostAlloc), which allocate or free memory: allocate once and "
                      "reuse it"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("drop the ones not needed"), std::string::npos) << text;
}

// Many small pinned copies per step, each issued by its own cudaMemcpyAsync (as .carry/s17b/
// small_copies.cu did on the H200: 512 copies of 4 KiB at 2.77 GB/s): the GPU idles while the
// host issues copies, and the advice is to batch them, not "the host issued work late".
TEST_F(FindingsTest, IdleBehindManySmallCopiesAdvisesBatching) {
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  double t = 10;
  for (int step = 0; step < 20; ++step) {
    for (int c = 0; c < 50; ++c, t += 5) {
      const uint64_t corr = b.Api("cudaMemcpyAsync", t, t + 4);
      b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 4096, t + 4.2, t + 5.2,
                  corr, 7, true);
    }
    b.Launch("reduce", t, t + 5, t + 6, t + 36, 7);
    t += 40;
  }
  b.SetEnd(t);
  const auto breakdown = Of(FindFindings(Load(b), {}), "gpu-idle-breakdown");
  ASSERT_EQ(breakdown.size(), 1u);
  const std::string& text = breakdown[0].explanation;
  EXPECT_NE(text.find("Most idle time had the host issuing copies (most in cudaMemcpyAsync"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("copies of 4.00 KiB on average"), std::string::npos) << text;
  EXPECT_EQ(text.find("the host issued work late"), std::string::npos) << text;
}

// A host-bound loop of 10 µs kernels in a process whose stacks run PyTorch's nn.DataParallel
// (as .carry/s17b/dataparallel.py did on two H200s: 93% idle outside CUDA calls): the breakdown
// adds PyTorch's own advice, DistributedDataParallel. In another PyTorch process (libtorch among
// the modules) it names eager mode's per-operation cost (.carry/s17c/torch_infer_bs1.py); in a
// process without PyTorch, neither.
TEST_F(FindingsTest, HostBoundPyTorchIsToldWhatToUse) {
  const auto verdict = [&](const char* file, bool torch = true) {
    TraceBuilder b;
    b.AddContext(1, 7);
    b.AddStream(7, StreamType::kNull);
    double t = 10;
    for (int step = 0; step < 30; ++step, t += 200) b.Launch("fwd", t, t + 5, t + 6, t + 16, 7);
    b.SetEnd(t);
    TraceRecords& r = b.records();
    CallStack stack;
    stack.id = 1;
    stack.python_frames.push_back({b.Intern(file), 171, b.Intern("DataParallel.forward")});
    if (torch) {
      r.stack_modules.push_back(
          {.id = 1, .path_id = b.Intern("/venv/lib/python3.12/site-packages/torch/lib/"
                                        "libtorch_cuda.so")});
      r.stack_frames.push_back({.id = 1, .address = 0x10, .module_id = 1});
      stack.frame_ids = {1};
    }
    r.call_stacks.push_back(stack);
    r.api_calls.back().stack_id = 1;
    const auto breakdown = Of(FindFindings(Load(b), {}), "gpu-idle-breakdown");
    return breakdown.size() == 1 ? breakdown[0].explanation : std::string("no single finding");
  };
  const std::string dp =
      verdict("/venv/lib/python3.12/site-packages/torch/nn/parallel/data_parallel.py");
  EXPECT_NE(dp.find("profile the host code between launches; in PyTorch, nn.DataParallel "
                    "replicates the model"),
            std::string::npos)
      << dp;
  const std::string eager = verdict("/home/me/train.py");
  EXPECT_NE(eager.find("profile the host code between launches; in PyTorch, eager mode spends "
                       "Python and dispatcher time on every operation"),
            std::string::npos)
      << eager;
  EXPECT_EQ(eager.find("DataParallel"), std::string::npos) << eager;
  // A process that runs torch.compile (Inductor's generated code among its frames, as in
  // .carry/s17e/compile_train.py) is not told to use it.
  const std::string compiled = verdict("/tmp/torchinductor_root/ab/cab12.py");
  EXPECT_NE(compiled.find("this PyTorch process runs torch.compile already"), std::string::npos)
      << compiled;
  EXPECT_EQ(compiled.find("eager mode spends"), std::string::npos) << compiled;
  const std::string plain = verdict("/home/me/train.py", false);
  EXPECT_TRUE(plain.ends_with("profile the host code between launches")) << plain;
  EXPECT_EQ(plain.find("PyTorch"), std::string::npos) << plain;
}

// Launch-bound work launched from two threads at once (as 8 threads did in .carry/s17/
// mt_launch.cu on the H200, 91.86% of their calls overlapping another thread's): the verdict
// says more threads do not launch faster. Two threads taking turns (PyTorch's forward on the
// main thread, backward on autograd's) do not get it.
TEST_F(FindingsTest, LaunchBoundFromSeveralThreadsAtOnceSaysThreadsDoNotHelp) {
  const auto verdict = [&](bool at_once) {
    TraceBuilder b;
    b.AddContext(1, 7);
    b.AddStream(7, StreamType::kNonBlocking);
    b.AddStream(8, StreamType::kNonBlocking);
    double t = 10;
    for (int i = 0; i < 200; ++i, t += 10) {
      const uint32_t tid = at_once ? 1 + i % 2 : 1 + (i / 50) % 2;
      const double start = at_once && tid == 2 ? t - 5 : t;  // half into the other's call
      b.Launch("tiny", start, start + 10, start + 11, start + 12, tid == 1 ? 7 : 8, tid);
    }
    b.SetEnd(t + 20);
    const auto breakdown = Of(FindFindings(Load(b), {}), "gpu-idle-breakdown");
    return breakdown.size() == 1 ? breakdown[0].explanation : std::string("no single finding");
  };
  const std::string at_once = verdict(true);
  EXPECT_NE(at_once.find("of the launch calls ran while another thread launched: more launching "
                         "threads do not launch faster"),
            std::string::npos)
      << at_once;
  const std::string in_turns = verdict(false);
  EXPECT_NE(in_turns.find("Launch-bound"), std::string::npos) << in_turns;
  EXPECT_EQ(in_turns.find("another thread"), std::string::npos) << in_turns;
}

// A program's last synchronisation, after which no kernel ran (as .carry/s17c/gemm_bound.py's
// torch.cuda.synchronize() before reading one value, 313.52 ms of a GPU-bound loop on the
// H200), is said to hold no work back; a synchronisation in the loop is not.
TEST_F(FindingsTest, TheLastWaitForResultsIsSaidToHoldNothingBack) {
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  double t = 10;
  for (int step = 0; step < 3; ++step, t += 1000) {
    b.Launch("gemm", t, t + 5, t + 6, t + 900, 7);
    b.Api("cudaDeviceSynchronize", t + 10, t + 905);
  }
  // Then one value read back: a copy, no kernel.
  const uint64_t corr = b.Api("cudaMemcpy", t, t + 20);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 4, t + 10, t + 12, corr,
              7, false);
  b.SetEnd(t + 100);
  const auto syncs = Of(FindFindings(Load(b), {}), "sync-api");
  ASSERT_EQ(syncs.size(), 3u);
  size_t last = 0;
  for (const Finding& f : syncs) {
    const bool said =
        f.explanation.find("no kernel ran after it, so it held no work back") != std::string::npos;
    EXPECT_EQ(said, f.host_start_ns == syncs.back().host_start_ns) << f.explanation;
    last += said;
  }
  EXPECT_EQ(last, 1u);
}

// A CUDA graph captured, instantiated, launched once and destroyed per step (as .carry/s17/
// graph_reinstantiate.cu ran on the H200): graph-rebuild prices the rebuilding; a graph
// instantiated once and launched every step, or rebuilt but launched three times each, is none.
TEST_F(FindingsTest, GraphRebuildWhenEachGraphIsLaunchedAboutOnce) {
  const auto scenario = [&](int steps, int launches_per_graph, bool rebuild) {
    return Of(FindFindings(Load(GraphRebuildScenario(steps, launches_per_graph, rebuild)), {}),
              "graph-rebuild");
  };
  const std::vector<Finding> found = scenario(12, 1, true);
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  const auto& d = std::get<GraphRebuildDetails>(f.details);
  EXPECT_EQ(d.instantiations, 12u);  // the runtime calls, not their nested driver calls
  EXPECT_EQ(d.graph_launches, 12u);
  EXPECT_EQ(d.instantiate_ns, 12u * 40'000);
  EXPECT_EQ(d.capture_ns, 12u * (1'000 + 1'000 + 1'000 + 2'000));
  EXPECT_EQ(d.destroy_ns, 12u * (6'000 + 2'000));
  const uint64_t rebuild = 12u * (40'000 + 5'000 + 8'000);
  EXPECT_EQ(f.blocked_ns, rebuild - rebuild / 12);
  EXPECT_EQ(f.api, "cudaGraphInstantiate");
  EXPECT_NE(f.explanation.find("CUDA graphs were instantiated 12 times for 12 graph launches"),
            std::string::npos)
      << f.explanation;
  EXPECT_EQ(f.explanation.find("in PyTorch"), std::string::npos) << f.explanation;
  EXPECT_TRUE(scenario(12, 12, false).empty());  // instantiated once
  EXPECT_TRUE(scenario(12, 3, true).empty());    // each graph ran three times
  EXPECT_TRUE(scenario(4, 1, true).empty());     // below --churn-min-pairs
}

// A just-in-time compiler's warm-up: a first kernel at 6 ms, 2 s of host work with the GPU idle
// but for one 5 µs kernel, the module it built loaded at [2.0, 2.02) s, then 100 steps of a
// 400 µs kernel every 1 ms (40% busy). `busy_before_us` of kernel time every 10 ms before the
// load turns the first phase into host-bound work that is not a warm-up.
TraceBuilder WarmUpScenario(double busy_before_us, double busy_after_us = 400) {
  TraceBuilder b(77);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.Api("cuDevicePrimaryCtxRetain", 100, 5100, 1, 0, ApiDomain::kDriver);
  b.Launch("eager", 5990, 5995, 6000, 6010, 7);
  b.Launch("trace", 500000, 500003, 500005, 500010, 7);
  for (double at = 10000; busy_before_us > 0 && at < 1990000; at += 10000) {
    b.Launch("host_bound", at, at + 3, at + 5, at + 5 + busy_before_us, 7);
  }
  for (double at = 600000; at < 2000000; at += 300000) b.Api("cudaGetDevice", at, at + 2);
  b.Api("cuLibraryLoadData", 2000000, 2020000, 1, 0, ApiDomain::kDriver);
  for (int i = 0; i < 100; ++i) {
    const double s = 2021000 + 1000.0 * i;
    b.Launch("compiled", s, s + 4, s + 5, s + 5 + busy_after_us, 7);
  }
  b.SetEnd(2130000);
  return b;
}

TEST_F(FindingsTest, StartUpTakesInTheWarmUpOfAJustInTimeCompiler) {
  const ProcessTrace t = Load(WarmUpScenario(0));
  const StartUp s = FindStartUp(TraceIndex(t));
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.first_op_ns, Us(6000));
  // The load fills 1% of the 2 s since the first kernel: start-up's own rule stops there, the
  // warm-up takes it to the load's end.
  ASSERT_TRUE(s.warm_up);
  EXPECT_EQ(s.warm_up_from_ns, Us(6000));
  EXPECT_EQ(s.end_ns, Us(2020000));
  EXPECT_EQ(s.warm_up_busy_ns, 15'000u);  // the two kernels' 10 and 5 µs
  // 100 × 400 µs of the 100.405 ms from the load's end to the last kernel's end.
  EXPECT_EQ(s.busy_after_ppm, 398'387u);
  EXPECT_TRUE(s.later_loading.empty());
  EXPECT_EQ(s.module_load.calls, 1u);

  const auto all = FindFindings(t, {});
  const auto start_up = Of(all, "start-up");
  ASSERT_EQ(start_up.size(), 1u);
  EXPECT_EQ(start_up[0].blocked_ns, 2'020'000'000u);
  const auto& d = std::get<StartUpDetails>(start_up[0].details);
  EXPECT_EQ(d.warm_up_ns, 2'014'000'000u);
  EXPECT_EQ(d.warm_up_gpu_busy_ns, 15'000u);
  EXPECT_DOUBLE_EQ(d.gpu_busy_after, 0.398387);
  EXPECT_NE(start_up[0].explanation.find("through a warm-up to the end of the last module load "
                                         "before the GPU got busy (at 2.02 s)"),
            std::string::npos)
      << start_up[0].explanation;
  EXPECT_NE(start_up[0].explanation.find("the GPU was busy 0.00% of the time, against 39.84%"),
            std::string::npos)
      << start_up[0].explanation;
  // The GPU rules count the steady state only: 60% idle, no idle gap of the warm-up.
  for (const Finding& f : all) {
    if (Rule(f.rule).family == RuleFamily::kGpuIdle) {
      EXPECT_GE(f.host_start_ns, 2'020'000'000u) << f.explanation;
    }
  }
  EXPECT_TRUE(Of(all, "gpu-idle-gaps").empty());
}

// Waits inside a warm-up are paid once (an autotuner timing candidate kernels: cuDNN's benchmark
// mode), marked and grouped without what they waited for; waits of the steady state are not, and
// neither are copies before the first kernel (StartUpHostFindingsAreMarkedAndListedLast).
TEST_F(FindingsTest, WaitsInAWarmUpArePaidOnce) {
  TraceBuilder b = WarmUpScenario(0);
  for (int k = 0; k < 5; ++k) {  // at 1.0-1.4 s: five candidates, each timed with a sync
    const double at = 1000000 + 100000.0 * k;
    b.Launch("candidate_" + std::to_string(k), at, at + 3, at + 5, at + 505, 7);
    const uint64_t sync = b.Api("cudaDeviceSynchronize", at + 4, at + 506);
    b.AddSync(SyncType::kContextSynchronize, at + 4, at + 506, sync);
  }
  const uint64_t late = b.Api("cudaDeviceSynchronize", 2050010, 2050410);  // steady state
  b.AddSync(SyncType::kContextSynchronize, 2050010, 2050410, late);
  const ProcessTrace t = Load(std::move(b));
  const auto all = FindFindings(t, {});
  const auto syncs = Of(all, "sync-api");
  ASSERT_EQ(syncs.size(), 6u);
  size_t paid_once = 0;
  for (const Finding& f : syncs) {
    const bool in_warm_up = f.host_start_ns < 2'000'000'000u;
    EXPECT_EQ(f.in_start_up, in_warm_up) << f.explanation;
    EXPECT_EQ(f.explanation.find("(during start-up: paid once)") != std::string::npos, in_warm_up);
    paid_once += f.in_start_up;
  }
  EXPECT_EQ(paid_once, 5u);
  // One group for the five, whichever candidate each waited for; the steady state's apart.
  size_t sync_groups = 0;
  for (const FindingGroup& g : GroupFindings(all)) {
    if (g.worst.rule != RuleId::kSyncApi) continue;
    ++sync_groups;
    EXPECT_EQ(g.count, g.worst.in_start_up ? 5u : 1u);
  }
  EXPECT_EQ(sync_groups, 2u);
}

TEST_F(FindingsTest, AHostBoundPhaseBeforeALateLoadIsNoWarmUp) {
  // 500 µs every 10 ms: 5% busy before the load, 40% after: not the tenfold contrast.
  StartUp s = FindStartUp(TraceIndex(Load(WarmUpScenario(500))));
  EXPECT_FALSE(s.warm_up);
  EXPECT_EQ(s.end_ns, Us(6000));
  EXPECT_EQ(s.later_loading.size(), 1u);
  // 12% busy before and fully busy after: over the 10% a warm-up may have.
  s = FindStartUp(TraceIndex(Load(WarmUpScenario(1200, 996))));
  EXPECT_FALSE(s.warm_up);
  // 1% before, fully busy after: a warm-up.
  s = FindStartUp(TraceIndex(Load(WarmUpScenario(100, 996))));
  EXPECT_TRUE(s.warm_up);
  // Idle before and nearly idle after (1 µs a step, 0.1%): no busier steady state to tell it by.
  s = FindStartUp(TraceIndex(Load(WarmUpScenario(0, 1))));
  EXPECT_FALSE(s.warm_up);
}

// A running loop is no warm-up however idle it keeps the GPU: an eager loop of 1 µs kernels
// every 40 µs (2.5% busy, idle in 39 µs gaps) before the late load and the busy phase after it
// stays in the steady state, where its launch-bound idle time is found; a compiler keeps the
// GPU idle in long gaps (the 100 µs kernels every 10 ms above still make a warm-up).
TEST_F(FindingsTest, AnEagerLoopBeforeALateLoadIsNoWarmUp) {
  TraceBuilder b = WarmUpScenario(0);
  for (double at = 10000; at < 1990000; at += 40)
    b.Launch("eager_op", at, at + 1, at + 2, at + 3, 7);
  const ProcessTrace t = Load(std::move(b));
  const StartUp s = FindStartUp(TraceIndex(t));
  EXPECT_FALSE(s.warm_up);
  EXPECT_EQ(s.end_ns, Us(6000));
  const auto breakdown = Of(FindFindings(t, {}), "gpu-idle-breakdown");
  ASSERT_EQ(breakdown.size(), 1u);
  EXPECT_LT(breakdown[0].host_start_ns, 10'000'000u);  // from start-up's end, at 6 ms
}

// Start-up is one finding; the GPU rules count from its end, so the 80 ms of idle GPU time while
// modules load are no gpu-low-utilization chunks, and the chunks without a kernel around the
// late load are one finding.
TEST_F(FindingsTest, StartUpIsReportedOnceAndGpuRulesCountFromItsEnd) {
  const ProcessTrace t = Load(StartUpScenario());
  const auto all = FindFindings(t, {});
  const auto start_up = Of(all, "start-up");
  ASSERT_EQ(start_up.size(), 1u);
  EXPECT_EQ(start_up[0].host_start_ns, 0u);
  EXPECT_EQ(start_up[0].blocked_ns, 86'090'000u);
  const auto& d = std::get<StartUpDetails>(start_up[0].details);
  EXPECT_EQ(d.first_kernel_ns, 56'005'000u);
  EXPECT_EQ(d.module_loads, 2u);
  // Idle from the first copy (5.4 ms) to 86.09 ms, less the copy (10 µs) and a kernel (5 µs),
  // and the 2 ms of the late module load, which counts as start-up too.
  EXPECT_EQ(d.gpu_idle_ns, 80'690'000u - 15'000u + 2'000'000u);
  EXPECT_EQ(d.later_module_loads, 1u);
  EXPECT_EQ(d.later_module_load_ns, 2'000'000u);
  EXPECT_NE(start_up[0].explanation.find("module loading 79.96 ms (2 calls, most in "
                                         "cuLibraryLoadData"),
            std::string::npos)
      << start_up[0].explanation;
  for (const Finding& f : all) {
    if (Rule(f.rule).family == RuleFamily::kGpuIdle) {
      EXPECT_GE(f.host_start_ns, 86'090'000u) << RuleName(f.rule);
    }
  }
  EXPECT_TRUE(Of(all, "gpu-idle-breakdown").empty());  // the steady state is 90% busy
  // The late load's 2 ms of idle GPU time are start-up's: what is left around it (about 0.5 ms
  // of each neighbouring chunk) is counted, the load is not.
  for (const Finding& f : Of(all, "gpu-low-utilization")) {
    EXPECT_LT(f.blocked_ns, 1'000'000u) << f.explanation;
    EXPECT_EQ(f.explanation.find("cuModuleLoadData"), std::string::npos) << f.explanation;
  }
}

// CUDA 13's lazy loading as an H200 recorded it under PyTorch and Triton: no call of its own,
// only CUPTI overhead records inside the first launch of a kernel (99 µs of an 8.07 ms
// cudaLaunchKernel), or in no recorded call at all. A loop of 40 steps of 1 ms (a 900 µs
// kernel each) after start-up; step 20's launch takes 8 ms and loads its kernel lazily, and
// before step 30 the runtime loads a module for 3 ms on a thread with no recorded call there.
TraceBuilder LazyLoadingScenario(bool with_overheads) {
  TraceBuilder b(1920);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.Api("cuDevicePrimaryCtxRetain", 100, 5100, 1, 0, ApiDomain::kDriver);
  double at = 6000;
  for (int i = 0; i < 40; ++i) {
    const double launch = i == 20 ? 8000 : 5;
    if (i == 30) {
      if (with_overheads) {
        b.AddOverhead(TraceBuilder::kRuntimeTriggeredModuleLoading, at, at + 3000, 2);
      }
      at += 3000;
    }
    b.Launch("step", at, at + launch, at + launch + 2, at + launch + 902, 7);
    if (i == 20 && with_overheads) {
      b.AddOverhead(TraceBuilder::kLazyFunctionLoading, at + 1000, at + 1099);
    }
    at += launch + 1000;
  }
  b.SetEnd(at + 1000);
  return b;
}

TEST_F(FindingsTest, LazyLoadingSeenOnlyByCuptiOverheadRecordsIsModuleLoading) {
  const ProcessTrace t = Load(LazyLoadingScenario(true));
  const StartUp s = FindStartUp(TraceIndex(t));
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.end_ns, Us(6007));  // the first kernel: neither load is near start-up
  // Step 20 starts at 26.1 ms (20 steps of 1.005 ms after 6 ms); step 30 at 44.145 ms.
  ASSERT_EQ(s.later_loading.size(), 2u);
  EXPECT_EQ(s.later_loading[0].start_ns, Us(26100));
  EXPECT_EQ(s.later_loading[0].end_ns, Us(34100));  // the whole launch, not the record's 99 µs
  EXPECT_EQ(s.later_loading[1].start_ns, Us(44145));
  EXPECT_EQ(s.later_loading[1].end_ns, Us(47145));
  EXPECT_EQ(s.later_load.ns, 11'000'000u);
  EXPECT_EQ(s.later_load.calls, 2u);
  EXPECT_EQ(s.later_load.top_api, "cudaLaunchKernel loading code lazily");

  // The GPU rules leave both loads' idle time out; without the records, the chunks around them
  // were "no kernel ... while the host was launching the next work" (6.81 ms) and "outside CUDA
  // calls" (2.83 ms).
  const auto low_use_idle = [&](const ProcessTrace& trace) {
    uint64_t idle = 0;
    for (const Finding& f : Of(FindFindings(trace, {}), "gpu-low-utilization")) {
      idle += f.blocked_ns;
    }
    return idle;
  };
  EXPECT_EQ(low_use_idle(t), 0u);
  EXPECT_GT(low_use_idle(Load(LazyLoadingScenario(false))), 9'000'000u);
  const auto start_up = Of(FindFindings(t, {}), "start-up");
  ASSERT_EQ(start_up.size(), 1u);
  EXPECT_NE(start_up[0].explanation.find("module loading after it, 11.0 ms (2 calls, most in "
                                         "cudaLaunchKernel loading code lazily)"),
            std::string::npos)
      << start_up[0].explanation;
}

// Proves a host finding of start-up work inside start-up (the first allocation that waits for
// the device) is marked, says it is paid once, and is listed after the steady state's waits even
// when it lost more time; a copy before the first kernel is the program's work, not start-up.
TEST_F(FindingsTest, StartUpHostFindingsAreMarkedAndListedLast) {
  TraceBuilder b = StartUpScenario();
  // On a second thread, before the first kernel: 64 MiB from pageable memory, synchronous,
  // 20 ms, then a cudaMalloc waiting 25 ms for a copy (implicit-sync).
  const uint64_t upload = b.Api("cudaMemcpyAsync", 5500, 25500, 2);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 64 << 20, 5510, 25490,
              upload, 7, true);
  const uint64_t busy = b.Api("cudaMemcpyAsync", 25600, 25610, 2);
  b.AddMemcpy(CopyKind::kDtoD, MemoryKind::kDevice, MemoryKind::kDevice, 1 << 30, 25620, 50620,
              busy, 7, true);
  b.Api("cudaMalloc", 25620, 50700, 2);
  const ProcessTrace t = Load(std::move(b));
  const auto all = FindFindings(t, {});
  const auto pageable = Of(all, "pageable-async-memcpy");
  ASSERT_EQ(pageable.size(), 1u);
  EXPECT_FALSE(pageable[0].in_start_up) << "a copy is the program's work";
  const auto malloc = Of(all, "implicit-sync");
  ASSERT_EQ(malloc.size(), 1u);
  EXPECT_TRUE(malloc[0].in_start_up);
  EXPECT_NE(malloc[0].explanation.find("(during start-up: paid once)"), std::string::npos);
  for (const Finding& f : Of(all, "sync-api")) EXPECT_FALSE(f.in_start_up) << f.explanation;
  const std::vector<FindingGroup> groups = GroupFindings(all);
  const auto position = [&](std::string_view rule) {
    return std::find_if(groups.begin(), groups.end(), [&](const FindingGroup& g) {
      return RuleName(g.worst.rule) == rule;
    });
  };
  const auto sync = position("sync-api"), alloc = position("implicit-sync");
  ASSERT_NE(sync, groups.end());
  ASSERT_NE(alloc, groups.end());
  EXPECT_GT(alloc->total_blocked_ns, sync->total_blocked_ns);
  EXPECT_LT(sync, alloc);
  FindingsReportContext context;
  context.trace_ns = 110'000'000;
  const std::string table = FindingsTable(all, context);
  EXPECT_NE(table.find("of it during start-up, paid once, listed last"), std::string::npos)
      << table;
  EXPECT_NE(table.find("implicit-sync (start-up)"), std::string::npos) << table;
  EXPECT_NE(FindingsJson(all, context).find("\"in_start_up\": true"), std::string::npos);
}

// The first screen: start-up one line, then host time and GPU idle time each under its own
// headline and table, never ranked together; the wait the user would fix is the first host row.
TEST_F(FindingsTest, TableSeparatesHostTimeFromGpuIdleTime) {
  const ProcessTrace t = Load(StartUpScenario());
  const auto all = FindFindings(t, {});
  FindingsReportContext context;
  context.trace_ns = 110'000'000;
  const std::string table = FindingsTable(all, context);
  const size_t start_up = table.find("Start-up took 86.09 ms");
  const size_t host = table.find("Host: API calls lost 19.52 ms");
  const size_t first_row = table.find("│ H1 │");
  const size_t gpu = table.find("GPU idle: the GPU rules find");
  ASSERT_EQ(start_up, 0u) << table;
  ASSERT_NE(host, std::string::npos) << table;
  ASSERT_NE(gpu, std::string::npos) << table;
  EXPECT_LT(host, first_row);
  EXPECT_LT(first_row, gpu);
  const std::string h1 = table.substr(first_row, table.find('\n', first_row) - first_row);
  EXPECT_NE(h1.find("cudaStreamSynchronize"), std::string::npos) << h1;
  EXPECT_NE(h1.find("at::native::reduce_kernel<…>(…) +1"), std::string::npos) << h1;
  EXPECT_NE(table.find("│ G1 │"), std::string::npos);
  EXPECT_EQ(table.find("gpu-low-utilization", 0), table.find("gpu-low-utilization", gpu));
  // JSON and CSV say which kind of time each finding's blocked_ns is.
  const std::string json = FindingsJson(all, context);
  for (const char* key : {"\"rule\": \"start-up\",\n      \"family\": \"start-up\",\n      "
                          "\"time_kind\": \"start-up\"",
                          "\"rule\": \"sync-api\",\n      \"family\": \"host-wait\",\n      "
                          "\"time_kind\": \"host\"",
                          "\"time_kind\": \"gpu-idle\"", "\"start_up_ns\": 86090000",
                          "\"host_ns\": 19520000", "\"module_load_ns\": 79960000"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  }
  const std::string csv = FindingsCsv(all, context);
  EXPECT_NE(csv.find(",family,time_kind,in_start_up,one_time\n"), std::string::npos);
  EXPECT_NE(csv.find(",start-up,start-up,false,\n"), std::string::npos);
}

// HostCallFindings (the host pass in two steps, for findings found on worker threads and wanted
// whole only once their seqs are known): Find(true) gives FindHostCallFindings' findings in its
// order, Find(false) then Whole of each gives every one of them whole, and Textless of Find(true)'s
// gives Find(false)'s, field for field (the --all JSON and CSV, which print every field), on the
// recorded samples and a random loop.
TEST(HostCallFindingsTest, InTwoStepsTheyAreTheOnePassOnes) {
  std::vector<ProcessTrace> traces;
  std::vector<std::string> warnings;
  for (const auto& entry : std::filesystem::directory_iterator(LIBPROF_SAMPLE_TRACES)) {
    if (entry.path().extension() != ".pb") continue;
    auto loaded = LoadTraceFile(entry.path().string(), &warnings);
    ASSERT_TRUE(loaded.has_value()) << entry.path();
    for (ProcessTrace& t : *loaded) traces.push_back(std::move(t));
  }
  traces.push_back(FindingsLoop(3, 30).Build());
  size_t whole_found = 0, with_stacks = 0;
  for (const ProcessTrace& t : traces) {
    SCOPED_TRACE(t.path);
    FindingsOptions options;
    options.min_wait_ns = 1'000;
    const TraceIndex index(t);
    const StreamModel model(index);
    const RuleInput input{t, index, model, options, std::nullopt};
    std::optional<Finding> start_up;
    for (Finding& f : FindFindings(t, index, model, options)) {
      if (f.rule == RuleId::kStartUp) start_up = std::move(f);
    }
    const Finding* marker = start_up ? &*start_up : nullptr;
    std::vector<Finding> one_pass;
    HostFindingsOut out;
    out.found = [&](Finding&& f) { one_pass.push_back(std::move(f)); };
    out.start_up = marker;
    FindHostCallFindings(input, out);

    HostCallFindings steps(input, marker);
    std::vector<Finding> found_whole, made_whole, found_textless, made_textless;
    for (HostCallFindings::Found& f : steps.Find(true)) {
      made_textless.push_back(HostCallFindings::Textless(f.finding));
      found_whole.push_back(std::move(f.finding));
    }
    for (const HostCallFindings::Found& f : steps.Find(false)) {
      EXPECT_TRUE(f.finding.explanation.empty());  // (without text)
      made_whole.push_back(steps.Whole(f));
      found_textless.push_back(f.finding);
    }
    auto printed = [&](std::vector<Finding> findings) {
      FindingsDigest all(true);
      all.Add(std::move(findings));
      FindingsReportContext context{.thresholds = options, .trace_ns = t.window_ns()};
      context.all = true;
      return FindingsJson(all, context) + FindingsCsv(all, context);
    };
    EXPECT_EQ(printed(found_whole), printed(one_pass));
    EXPECT_EQ(printed(made_whole), printed(one_pass));
    EXPECT_EQ(printed(made_textless), printed(found_textless));
    whole_found += one_pass.size();
    for (const Finding& f : one_pass) with_stacks += !f.stack.empty();
  }
  EXPECT_GT(whole_found, 100u);
  EXPECT_GT(with_stacks, 0u);  // call sites and stacks written on demand too
}

}  // namespace
}  // namespace libprof::analysis::testing
