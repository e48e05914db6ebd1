// Proves `profview streams`' figures on hand-computable traces: per-stream counts, busy time and
// kind; copy/kernel overlap per direction; two kernels in flight; copy time that ran alone while
// a kernel sat queued on another stream; a serial legacy-stream trace with no overlap at all.
#include "analysis/metrics/streams.h"

#include <gtest/gtest.h>

#include "tests/analysis/trace_builder.h"
#include "analysis/reports/streams_report.h"

namespace libprof::analysis::testing {
namespace {

constexpr uint64_t kUs = 1000;
constexpr size_t kHtoD = static_cast<size_t>(CopyDirection::kHtoD);
constexpr size_t kDtoH = static_cast<size_t>(CopyDirection::kDtoH);

// A copy issued by its own API call [api_start, api_start + 1).
void Copy(TraceBuilder& b, CopyKind kind, double api_start, double start, double end,
          uint32_t stream) {
  const uint64_t corr = b.Api("cudaMemcpyAsync", api_start, api_start + 1);
  const bool h2d = kind == CopyKind::kHtoD;
  b.AddMemcpy(kind, h2d ? MemoryKind::kPinned : MemoryKind::kDevice,
              h2d ? MemoryKind::kDevice : MemoryKind::kPinned, 1024, start, end, corr, stream,
              true);
}

const StreamStats* FindStream(const StreamsReport& r, uint32_t stream) {
  for (const StreamStats& s : r.streams) {
    if (s.stream_id == stream) return &s;
  }
  return nullptr;
}

class StreamsTest : public ::testing::Test {
 protected:
  StreamsReport Analyze(const TraceBuilder& b) {
    return AnalyzeStreams(b.RoundTrip(dir_.Path("t.pb")));
  }
  TempDir dir_;
};

TEST(StreamsIntervalsTest, SubtractAndCoveredAtLeast) {
  // Proves the two interval primitives on hand-made sets.
  EXPECT_EQ(Subtract({{0, 10}, {20, 30}}, {{5, 22}, {25, 26}}),
            (std::vector<Interval>{{0, 5}, {22, 25}, {26, 30}}));
  EXPECT_EQ(Subtract({{0, 10}}, {}), (std::vector<Interval>{{0, 10}}));
  EXPECT_TRUE(Subtract({{0, 10}}, {{0, 10}}).empty());
  EXPECT_EQ(CoveredAtLeast({{0, 10}, {5, 20}, {8, 9}}, 2), 5u);
  EXPECT_EQ(CoveredAtLeast({{0, 10}, {5, 20}, {8, 9}}, 3), 1u);
  EXPECT_EQ(CoveredAtLeast({{0, 10}, {10, 20}}, 2), 0u);  // touching is not concurrent
}

TEST_F(StreamsTest, CopyOverlapsKernelByKnownAmount) {
  // Kernel on blocking stream 13 runs [10,50); an HtoD copy on non-blocking stream 14 runs
  // [30,70): 20 µs of HtoD copy ran with a kernel. A DtoH on stream 13 at [50,60) ran alone.
  TraceBuilder b;
  b.AddStream(13, StreamType::kDefault);
  b.AddStream(14, StreamType::kNonBlocking);
  b.Launch("k", 0, 5, 10, 50, 13);
  Copy(b, CopyKind::kHtoD, 6, 30, 70, 14);
  Copy(b, CopyKind::kDtoH, 7, 50, 60, 13);
  b.SetEnd(100);
  const StreamsReport r = Analyze(b);
  EXPECT_EQ(r.trace_ns, 100 * kUs);
  ASSERT_EQ(r.streams.size(), 2u);
  const StreamStats* s13 = FindStream(r, 13);
  const StreamStats* s14 = FindStream(r, 14);
  ASSERT_TRUE(s13 && s14);
  EXPECT_EQ(s13->klass, StreamClass::kBlocking);
  EXPECT_TRUE(s13->from_record);
  EXPECT_EQ(s14->klass, StreamClass::kNonBlocking);
  EXPECT_EQ(s13->kernels.count, 1u);
  EXPECT_EQ(s13->kernels.total_ns, 40 * kUs);
  EXPECT_EQ(s13->copies[kDtoH].count, 1u);
  EXPECT_EQ(s13->copies[kHtoD].count, 0u);
  EXPECT_EQ(s13->busy_ns, 50 * kUs);  // [10,60)
  EXPECT_EQ(s14->copies[kHtoD].count, 1u);
  EXPECT_EQ(s14->busy_ns, 40 * kUs);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceOverlap& d = r.devices[0];
  EXPECT_EQ(d.kernel_ns, 40 * kUs);
  EXPECT_EQ(d.multi_kernel_ns, 0u);
  EXPECT_EQ(d.by_direction[kHtoD].copy_ns, 40 * kUs);
  EXPECT_EQ(d.by_direction[kHtoD].with_kernel_ns, 20 * kUs);
  EXPECT_EQ(d.by_direction[kDtoH].copy_ns, 10 * kUs);
  EXPECT_EQ(d.by_direction[kDtoH].with_kernel_ns, 0u);
  EXPECT_EQ(d.all.copy_ns, 40 * kUs);  // [30,70): the DtoH lies inside the HtoD
  EXPECT_EQ(d.all.with_kernel_ns, 20 * kUs);
  EXPECT_EQ(d.all.could_overlap_ns, 0u);  // the kernel was queued only in [0,10)
  // The table states the figures.
  const std::string table = StreamsTable({r}, 120);
  EXPECT_NE(table.find("20.0 µs (50.00%)"), std::string::npos) << table;
}

TEST_F(StreamsTest, TwoKernelsInFlight) {
  // Kernels [10,50) on stream 1 and [30,80) on stream 2 overlap 20 µs; [80,90) on stream 2
  // only touches the second one.
  TraceBuilder b;
  b.Launch("a", 0, 1, 10, 50, 1);
  b.Launch("b", 2, 3, 30, 80, 2);
  b.Launch("c", 4, 5, 80, 90, 2);
  b.SetEnd(100);
  const StreamsReport r = Analyze(b);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].kernel_ns, 80 * kUs);
  EXPECT_EQ(r.devices[0].multi_kernel_ns, 20 * kUs);
  EXPECT_EQ(r.devices[0].all.copy_ns, 0u);
  EXPECT_EQ(FindStream(r, 2)->kernels.count, 2u);
  EXPECT_EQ(FindStream(r, 2)->busy_ns, 60 * kUs);
}

TEST_F(StreamsTest, CopyAloneWhileKernelQueuedOnAnotherStream) {
  // HtoD copy on stream 1 runs [10,40). A kernel on stream 2, launched at 5, waits until 20 and
  // runs [20,25): the copy ran alone in [10,20) while it was queued (10 µs) and with it 5 µs.
  // A kernel on stream 1 launched at 2 and running [40,60) was queued behind the copy on the
  // copy's own stream, so its queued time [2,40) does not count (else 25 µs).
  TraceBuilder b;
  Copy(b, CopyKind::kHtoD, 0, 10, 40, 1);
  b.Launch("own", 2, 3, 40, 60, 1);
  b.Launch("other", 5, 6, 20, 25, 2);
  b.SetEnd(100);
  const StreamsReport r = Analyze(b);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceOverlap& d = r.devices[0];
  EXPECT_EQ(d.by_direction[kHtoD].copy_ns, 30 * kUs);
  EXPECT_EQ(d.by_direction[kHtoD].with_kernel_ns, 5 * kUs);
  EXPECT_EQ(d.by_direction[kHtoD].could_overlap_ns, 10 * kUs);
  EXPECT_EQ(d.all.could_overlap_ns, 10 * kUs);
  EXPECT_EQ(d.multi_kernel_ns, 0u);
}

TEST_F(StreamsTest, SerialLegacyStreamHasNoOverlap) {
  // Everything on the legacy NULL stream 7, issued up front: HtoD [10,20), kernel [20,30),
  // DtoH [30,40). No figure of overlap, and the stream is the legacy default stream. Stream 20
  // (flag NULL, not the context's null stream) is a per-thread default stream.
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(20, StreamType::kNull);
  Copy(b, CopyKind::kHtoD, 0, 10, 20, 7);
  b.Launch("k", 2, 3, 20, 30, 7);
  Copy(b, CopyKind::kDtoH, 4, 30, 40, 7);
  b.Launch("p", 50, 51, 60, 70, 20);
  b.SetEnd(100);
  const StreamsReport r = Analyze(b);
  ASSERT_EQ(r.streams.size(), 2u);
  EXPECT_EQ(FindStream(r, 7)->klass, StreamClass::kLegacyNull);
  EXPECT_EQ(FindStream(r, 20)->klass, StreamClass::kPerThread);
  EXPECT_EQ(FindStream(r, 7)->busy_ns, 30 * kUs);
  const DeviceOverlap& d = r.devices[0];
  EXPECT_EQ(d.all.copy_ns, 20 * kUs);
  EXPECT_EQ(d.all.with_kernel_ns, 0u);
  EXPECT_EQ(d.all.could_overlap_ns, 0u);
  EXPECT_EQ(d.multi_kernel_ns, 0u);
  // CSV and JSON carry the same figures.
  EXPECT_NE(StreamsCsv({r}).find("overlap,4242,0,,,copy_all,,20000\n"), std::string::npos);
  EXPECT_NE(StreamsJson({r}).find("\"type\": \"legacy-default\""), std::string::npos);
}

TEST_F(StreamsTest, ClipsToTheAnalysedWindow) {
  // A window [0,30) keeps 20 µs of a kernel [10,50) and of its stream's busy time.
  TraceBuilder b;
  b.Launch("k", 0, 1, 10, 50, 1);
  b.SetEnd(100);
  ProcessTrace t = b.RoundTrip(dir_.Path("w.pb"));
  t.windows = {{Us(0), Us(30)}};
  const StreamsReport r = AnalyzeStreams(t);
  EXPECT_EQ(r.trace_ns, 30 * kUs);
  EXPECT_EQ(r.streams[0].busy_ns, 20 * kUs);
  EXPECT_EQ(r.devices[0].kernel_ns, 20 * kUs);
}

}  // namespace
}  // namespace libprof::analysis::testing

namespace libprof::analysis::testing {
namespace {

// Proves that peer copies keep both devices: per link (source -> destination) and per device,
// the copies, bytes and time, as a two-GPU trace would give them.
TEST(StreamsLinksTest, PeerCopiesCountOnBothDevicesAndTheirLink) {
  TraceBuilder b;
  const uint64_t c1 = b.Api("cudaMemcpyPeerAsync", 0, 5);
  Memcpy& peer = b.AddMemcpy(CopyKind::kPtoP, MemoryKind::kDevice, MemoryKind::kDevice, 8 << 20,
                             10, 110, c1, 7, true);
  peer.device_id = 0, peer.src_device_id = 0, peer.dst_device_id = 1;
  const uint64_t c2 = b.Api("cudaMemcpyAsync", 0, 5);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 1 << 20, 200, 250, c2, 7,
              true).device_id = 1;
  b.SetEnd(1000);
  const StreamsReport r = AnalyzeStreams(b.Build());
  ASSERT_EQ(r.links.size(), 2u);
  EXPECT_EQ(r.links[0].from, "GPU 0");
  EXPECT_EQ(r.links[0].to, "GPU 1");
  EXPECT_EQ(r.links[0].bytes, 8u << 20);
  EXPECT_EQ(r.links[0].total_ns, 100'000u);
  EXPECT_EQ(r.links[1].from, "host");
  EXPECT_EQ(r.links[1].to, "GPU 1");
  ASSERT_EQ(r.device_copies.size(), 2u);
  EXPECT_EQ(r.device_copies[0].bytes_out, 8u << 20);
  EXPECT_EQ(r.device_copies[0].bytes_in, 0u);
  EXPECT_EQ(r.device_copies[1].bytes_in, (8u << 20) + (1u << 20));
  EXPECT_EQ(r.device_copies[1].count, 2u);
  EXPECT_EQ(r.device_copies[1].total_ns, 150'000u);
  const std::string text = StreamsTable({r}, 120);
  EXPECT_NE(text.find("GPU 0 -> GPU 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace libprof::analysis::testing
