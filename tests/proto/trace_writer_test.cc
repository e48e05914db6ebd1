#include "proto/trace_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/proto/trace_test_util.h"

namespace libprof {
namespace {

using testing::LaunchLoop;
using testing::MemorySink;
using testing::SampleHeader;
using testing::SampleRecords;

// Proves the file starts with TraceFile field 1 and that chunks follow as field 2, each with a
// correct length prefix: the framing every reader relies on.
TEST(TraceWriterTest, FramesHeaderAndChunks) {
  MemorySink sink;
  TraceWriter writer(&sink, {.chunk_bytes = 64});
  ASSERT_TRUE(writer.WriteHeader(SampleHeader()));
  writer.AddAll(SampleRecords(writer.strings(), 0));
  ASSERT_TRUE(writer.Finish({.end_time_ns = 5, .reason = "exit"}));
  const std::string& bytes = sink.bytes();
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_EQ(bytes[0], '\x0a');  // field 1, length-delimited
  size_t pos = 0, fields = 0;
  while (pos < bytes.size()) {
    const uint8_t tag = static_cast<uint8_t>(bytes[pos++]);
    EXPECT_EQ(tag, fields == 0 ? 0x0a : 0x12);
    uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      length |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) break;
    }
    pos += length;
    ++fields;
  }
  EXPECT_EQ(pos, bytes.size());
  EXPECT_EQ(fields, 1 + writer.chunks_written());
  EXPECT_GT(writer.chunks_written(), 3u);  // small chunk_bytes: several chunks
  EXPECT_EQ(writer.bytes_written(), bytes.size());
}

// Proves records_written counts timed records as TraceRecords::RecordCount does, and that
// Flush on an empty chunk writes nothing.
TEST(TraceWriterTest, CountsRecords) {
  MemorySink sink;
  TraceWriter writer(&sink, {});
  ASSERT_TRUE(writer.WriteHeader(SampleHeader()));
  const size_t header_bytes = sink.bytes().size();
  EXPECT_TRUE(writer.Flush());
  EXPECT_EQ(sink.bytes().size(), header_bytes);
  EXPECT_EQ(writer.chunks_written(), 0u);
  const TraceRecords records = SampleRecords(writer.strings(), 1);
  writer.AddAll(records);
  EXPECT_EQ(writer.records_written(), records.RecordCount());
  EXPECT_TRUE(writer.Finish({}));
  EXPECT_EQ(writer.chunks_written(), 1u);
}

// Proves a sink failure never throws, stops all further writing, and is reported by failed()
// and by the return values.
TEST(TraceWriterTest, StopsAfterSinkFailure) {
  MemorySink sink(/*fail_after=*/600);
  TraceWriter writer(&sink, {.chunk_bytes = 100});
  ASSERT_TRUE(writer.WriteHeader(SampleHeader()));
  for (uint32_t i = 0; i < 20; ++i) writer.AddAll(SampleRecords(writer.strings(), i));
  EXPECT_TRUE(writer.failed());
  const size_t written = sink.bytes().size();
  const uint64_t records = writer.records_written();
  writer.AddAll(SampleRecords(writer.strings(), 99));
  EXPECT_FALSE(writer.Flush());
  EXPECT_FALSE(writer.Finish({}));
  EXPECT_FALSE(writer.WriteHeader(SampleHeader()));
  EXPECT_EQ(sink.bytes().size(), written);
  EXPECT_EQ(writer.records_written(), records);
  // Only complete fields count: the sink may hold the prefix of the field that failed.
  EXPECT_LE(writer.bytes_written(), written);
  EXPECT_GT(writer.bytes_written(), written - 10);
}

// Bytes each record of a stream of `records` costs in a file, chunk framing and definitions
// included (the header is not).
double BytesPerRecord(const TraceRecords& records) {
  MemorySink sink;
  TraceWriter writer(&sink, {});
  writer.WriteHeader(SampleHeader());
  const size_t header_bytes = sink.bytes().size();
  writer.AddAll(records);
  writer.Flush();
  EXPECT_FALSE(writer.failed());
  return static_cast<double>(sink.bytes().size() - header_bytes) / records.RecordCount();
}

// Proves the compactness target: a realistic launch loop (cudaLaunchKernel every ~3 us with a
// nested cuLaunchKernel, 2 us kernels of one shape on one stream) costs well under 32 bytes per
// kernel and per API record. Prints the figures.
TEST(TraceWriterTest, LaunchLoopIsCompact) {
  StringInterner strings;
  const TraceRecords loop = LaunchLoop(strings, 100'000);
  TraceRecords api_only, kernels_only;
  api_only.api_calls = loop.api_calls;
  kernels_only.kernels = loop.kernels;
  const double mix = BytesPerRecord(loop);
  const double api = BytesPerRecord(api_only);
  const double kernel = BytesPerRecord(kernels_only);
  std::printf("launch loop: %.2f bytes per record overall, %.2f per API record, %.2f per kernel\n",
              mix, api, kernel);
  ::testing::Test::RecordProperty("bytes_per_record", std::to_string(mix));
  ::testing::Test::RecordProperty("bytes_per_api_record", std::to_string(api));
  ::testing::Test::RecordProperty("bytes_per_kernel", std::to_string(kernel));
  EXPECT_LT(mix, 32.0);
  EXPECT_LT(api, 32.0);
  EXPECT_LT(kernel, 32.0);
  // "Well under": half the budget leaves room for the fields real traces add.
  EXPECT_LT(mix, 16.0);
}

}  // namespace
}  // namespace libprof
