#include "proto/stream_order_repair.h"

#include <gtest/gtest.h>

#include <string>

#include "proto/trace_reader.h"
#include "proto/trace_writer.h"
#include "tests/proto/trace_read_util.h"
#include "tests/proto/trace_test_util.h"

namespace libprof {
namespace {

constexpr uint32_t kStream = 7;
constexpr uint64_t kMs = 1'000'000;

Memcpy Copy(uint64_t start, uint64_t end, uint64_t correlation, uint32_t stream = kStream,
            uint32_t device = 0) {
  return Memcpy{.copy_kind = CopyKind::kDtoD,
                .bytes = 512 * 1024,
                .async = true,
                .start_ns = start,
                .end_ns = end,
                .correlation_id = correlation,
                .device_id = device,
                .stream_id = stream};
}

Kernel KernelAt(uint64_t start, uint64_t end, uint64_t correlation, uint32_t stream = kStream) {
  Kernel k;
  k.start_ns = start;
  k.end_ns = end;
  k.correlation_id = correlation;
  k.stream_id = stream;
  return k;
}

size_t Repair(TraceRecords* records) { return RepairStreamOrder(records, ListSizes{}); }

// The case of docs/capture-notes.md: the first copy after cudaGraphInstantiate comes back ending
// 51 ms after its start, while the graph's first kernel on its stream started 61 us after it.
TEST(StreamOrderRepairTest, CopyEndingAfterItsStreamsNextKernelEndsAtThatKernelsStart) {
  TraceRecords r;
  r.memcpys.push_back(Copy(1000, 1000 + 51 * kMs, 3183));
  r.kernels.push_back(KernelAt(62'000, 74'000, 3195));
  r.kernels.push_back(KernelAt(75'000, 86'000, 3195));
  EXPECT_EQ(Repair(&r), 1u);
  EXPECT_EQ(r.memcpys[0].end_ns, 62'000u);
  EXPECT_EQ(r.memcpys[0].cupti_end_ns, 1000 + 51 * kMs);
  EXPECT_EQ(r.kernels[0].end_ns, 74'000u);  // kernels keep their times (PDL may overlap them)
}

TEST(StreamOrderRepairTest, TheEarliestLaterOperationOfAnyKindBoundsTheEnd) {
  TraceRecords r;
  r.memsets.push_back(Memset{.start_ns = 1000, .end_ns = 9 * kMs, .correlation_id = 1,
                             .stream_id = kStream});
  r.kernels.push_back(KernelAt(80'000, 90'000, 4));
  r.graph_traces.push_back(GraphTrace{.graph_id = 2, .start_ns = 50'000, .end_ns = 70'000,
                                      .correlation_id = 3, .stream_id = kStream});
  r.memcpys.push_back(Copy(40'000, 41'000, 2));
  EXPECT_EQ(Repair(&r), 1u);
  EXPECT_EQ(r.memsets[0].end_ns, 40'000u);
  EXPECT_EQ(r.memsets[0].cupti_end_ns, 9 * kMs);
  EXPECT_EQ(r.memcpys[0].end_ns, 41'000u);
  EXPECT_EQ(r.memcpys[0].cupti_end_ns, 0u);
}

TEST(StreamOrderRepairTest, LeavesWhatStreamsAllow) {
  TraceRecords r;
  r.memcpys.push_back(Copy(1000, 5 * kMs, 1));
  r.kernels.push_back(KernelAt(2000, 3000, 2, kStream + 1));  // another stream
  r.memcpys.push_back(Copy(3000, 4 * kMs, 3, kStream, 1));    // the same stream id, device 1
  r.memcpys.push_back(Copy(5 * kMs - 500, 5 * kMs + 100, 4));  // clocks 500 ns apart
  r.memcpys.push_back(Copy(10 * kMs, 20 * kMs, 5));           // a graph's copy node...
  r.kernels.push_back(KernelAt(11 * kMs, 12 * kMs, 5));       // ...and a kernel node beside it
  Memcpy host_to_host = Copy(25 * kMs, 27 * kMs, 7);         // not ordered on its stream:
  host_to_host.copy_kind = CopyKind::kHtoH;                  // neither repaired...
  r.memcpys.push_back(host_to_host);
  r.kernels.push_back(KernelAt(26 * kMs, 26 * kMs + 10, 8));
  host_to_host.start_ns = 35 * kMs;                          // ...nor bounding another
  host_to_host.end_ns = 36 * kMs;
  host_to_host.correlation_id = 9;
  r.memcpys.push_back(host_to_host);
  r.memcpys.push_back(Copy(30 * kMs, 40 * kMs, 6));           // the stream's last operation
  const TraceRecords before = r;
  EXPECT_EQ(Repair(&r), 0u);
  EXPECT_EQ(r, before);
}

// AppendChunk decodes a whole trace into one TraceRecords: a chunk repairs only its own records,
// against its own operations.
TEST(StreamOrderRepairTest, OnlyTheRecordsFromFirstOn) {
  TraceRecords r;
  r.memcpys.push_back(Copy(1000, 5 * kMs, 1));  // an earlier chunk's
  const ListSizes first = SizesOf(r);
  r.memcpys.push_back(Copy(6 * kMs, 9 * kMs, 2));
  r.kernels.push_back(KernelAt(2 * kMs, 3 * kMs, 3));  // inside the earlier chunk's copy
  r.kernels.push_back(KernelAt(7 * kMs, 8 * kMs, 4));
  EXPECT_EQ(RepairStreamOrder(&r, first), 1u);
  EXPECT_EQ(r.memcpys[0].end_ns, 5 * kMs);
  EXPECT_EQ(r.memcpys[1].end_ns, 7 * kMs);
}

// Every reader decodes through the same step: Next, AppendNext and a file of one chunk or many
// give the repaired copy.
TEST(StreamOrderRepairTest, TheReaderGivesRepairedRecords) {
  testing::MemorySink sink;
  TraceWriter writer(&sink, {.chunk_bytes = size_t{1} << 20});
  writer.WriteHeader(testing::SampleHeader());
  TraceRecords records;
  records.memcpys.push_back(Copy(1000, 1000 + 51 * kMs, 3183));
  records.kernels.push_back(KernelAt(62'000, 74'000, 3195));
  writer.AddAll(records);
  writer.Finish({.reason = "exit"});
  testing::ScratchDir dir;
  const std::string path = dir.Path("graph_copy.pb");
  testing::WriteFile(path, sink.bytes());

  const auto read = testing::ReadAll(path);
  ASSERT_EQ(read.merged.memcpys.size(), 1u);
  EXPECT_EQ(read.merged.memcpys[0].end_ns, 62'000u);
  EXPECT_EQ(read.merged.memcpys[0].cupti_end_ns, 1000 + 51 * kMs);

  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error();
  TraceRecords whole;
  TraceRecords* into[] = {&whole};
  uint32_t process = 0;
  while ((*reader)->AppendNext(into, &process)) {
  }
  ASSERT_EQ(whole.memcpys.size(), 1u);
  EXPECT_EQ(whole.memcpys[0].end_ns, 62'000u);
}

}  // namespace
}  // namespace libprof
