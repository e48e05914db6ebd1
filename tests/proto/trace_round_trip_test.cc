#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "proto/trace_reader.h"
#include "proto/trace_writer.h"
#include "tests/proto/trace_read_util.h"
#include "tests/proto/trace_test_util.h"

namespace libprof {
namespace {

using testing::ReadAll;
using testing::SampleHeader;
using testing::SampleRecords;
using testing::ScratchDir;

// Writes a header and lets `body` add records, then Finish; returns the file's path.
template <typename Body>
std::string WriteTrace(const ScratchDir& dir, TraceWriter::Options options, Body body,
                       StringInterner* strings = nullptr) {
  const std::string path = dir.Path("trace.pb");
  std::string error;
  auto sink = FileSink::Create(path, /*overwrite=*/true, &error);
  EXPECT_NE(sink, nullptr) << error;
  TraceWriter writer(sink.get(), options, strings);
  EXPECT_TRUE(writer.WriteHeader(SampleHeader()));
  body(writer);
  EXPECT_TRUE(writer.Finish({.end_time_ns = 99, .reason = "exit", .records_written = 1}));
  return path;
}

class RoundTripTest : public ::testing::TestWithParam<size_t> {};

// Proves every record type, with every field set, comes back equal through FileSink, a file and
// TraceReader, whether the records share one chunk or are spread over many small ones (strings,
// threads, shapes and API names then defined in one chunk and used in later ones).
TEST_P(RoundTripTest, EveryRecordType) {
  ScratchDir dir;
  TraceRecords expected;
  std::vector<std::pair<uint32_t, std::string>> strings;
  const std::string path = WriteTrace(dir, {.chunk_bytes = GetParam()}, [&](TraceWriter& w) {
    for (uint32_t salt = 0; salt < 5; ++salt) {
      const TraceRecords records = SampleRecords(w.strings(), salt);
      w.AddAll(records);
      AppendRecords(records, &expected);
      if (salt == 2) w.SetRuntimeVersion(12080);
    }
    w.strings().CollectFrom(0, &strings);
  });
  expected.cuda_runtime_version = 12080;
  expected.run_end = RunEnd{.end_time_ns = 99, .reason = "exit", .records_written = 1};
  // Every kind of proto/record_kinds.h is in the sample, so a new kind is round-tripped too.
  ForEachList(expected, [&]<typename T>(const std::vector<T>& list) {
    EXPECT_FALSE(list.empty()) << "SampleRecords has no " << RecordKind<T>::kList;
  });

  auto result = ReadAll(path);
  ASSERT_NE(result.reader, nullptr);
  EXPECT_EQ(result.reader->error(), "");
  EXPECT_FALSE(result.reader->truncated());
  EXPECT_EQ(result.reader->bytes_read(), result.reader->file_size());
  ASSERT_EQ(result.reader->headers().size(), 1u);
  EXPECT_EQ(result.reader->header(), SampleHeader());
  EXPECT_EQ(result.merged.api_calls, expected.api_calls);
  EXPECT_EQ(result.merged.stack_modules, expected.stack_modules);
  EXPECT_EQ(result.merged.stack_frames, expected.stack_frames);
  EXPECT_EQ(result.merged.call_stacks, expected.call_stacks);
  EXPECT_EQ(result.merged, expected);
  ASSERT_EQ(result.reader->strings().size(), strings.size());
  for (const auto& [id, value] : strings) EXPECT_EQ(result.reader->String(id), value);
  EXPECT_EQ(result.reader->String(100000), "");
  EXPECT_EQ(result.reader->chunks_read(), result.chunks.size());
  for (size_t i = 0; i < result.chunks.size(); ++i) EXPECT_EQ(result.chunks[i].sequence, i);
  if (GetParam() < 1000) {
    EXPECT_GT(result.chunks.size(), 10u);
  }
  // RunEnd only in the last chunk.
  for (size_t i = 0; i + 1 < result.chunks.size(); ++i) EXPECT_FALSE(result.chunks[i].run_end);
}

INSTANTIATE_TEST_SUITE_P(ChunkSizes, RoundTripTest, ::testing::Values(1 << 20, 200, 1));

// Proves a string interned before a chunk is closed is defined in that chunk even when only a
// later chunk uses it, and that one interned after is defined by the chunk that uses it.
TEST(RoundTripTest, StringsDefinedBeforeUse) {
  ScratchDir dir;
  uint32_t early = 0, late = 0;
  const std::string path = WriteTrace(dir, {}, [&](TraceWriter& w) {
    early = w.Intern("defined in chunk 0");
    w.Add(Overhead{.start_ns = 1, .end_ns = 2});
    w.Flush();
    late = w.Intern("defined in chunk 1");
    w.Add(Overhead{.name_id = early, .start_ns = 3, .end_ns = 4});
    w.Add(Overhead{.name_id = late, .start_ns = 5, .end_ns = 6});
  });
  auto reader = std::move(*TraceReader::Open(path));
  TraceRecords chunk;
  ASSERT_TRUE(reader->Next(&chunk));
  EXPECT_EQ(reader->String(early), "defined in chunk 0");
  EXPECT_EQ(reader->String(late), "");  // not defined yet
  ASSERT_TRUE(reader->Next(&chunk));
  ASSERT_EQ(chunk.overheads.size(), 2u);
  EXPECT_EQ(reader->String(chunk.overheads[0].name_id), "defined in chunk 0");
  EXPECT_EQ(reader->String(chunk.overheads[1].name_id), "defined in chunk 1");
  EXPECT_FALSE(reader->Next(&chunk));
  EXPECT_FALSE(reader->truncated());
  EXPECT_EQ(reader->error(), "");
}

// Proves strings interned into a shared table by another thread (as the NVTX handlers do) while
// chunks are being closed are always defined by the time a record using them is read.
TEST(RoundTripTest, StringsInternedByAnotherThread) {
  ScratchDir dir;
  StringInterner shared;
  std::mutex mutex;
  std::vector<uint32_t> ready;  // ids the other thread has interned, in order
  constexpr uint32_t kStrings = 2000;
  const std::string path = WriteTrace(
      dir, {.chunk_bytes = 256},
      [&](TraceWriter& w) {
        std::thread nvtx([&] {
          for (uint32_t i = 0; i < kStrings; ++i) {
            const uint32_t id = shared.Intern("range " + std::to_string(i));
            std::lock_guard<std::mutex> lock(mutex);
            ready.push_back(id);
          }
        });
        uint32_t used = 0;
        while (used < kStrings) {
          std::vector<uint32_t> batch;
          {
            std::lock_guard<std::mutex> lock(mutex);
            batch.assign(ready.begin() + used, ready.end());
          }
          for (uint32_t id : batch) {
            w.Add(NvtxEvent{.kind = NvtxKind::kMark,
                            .start_ns = used,
                            .end_ns = used,
                            .thread_id = 7,
                            .message_id = id});
            ++used;
          }
          w.Flush();
        }
        nvtx.join();
      },
      &shared);
  auto result = ReadAll(path);
  ASSERT_EQ(result.merged.nvtx_events.size(), kStrings);
  for (uint32_t i = 0; i < kStrings; ++i) {
    EXPECT_EQ(result.reader->String(result.merged.nvtx_events[i].message_id),
              "range " + std::to_string(i));
  }
}

// Proves OS thread ids survive the per-file index mapping across chunks, including the
// unset end thread (0) of a mark.
TEST(RoundTripTest, ThreadIds) {
  ScratchDir dir;
  TraceRecords expected;
  const std::string path = WriteTrace(dir, {.chunk_bytes = 32}, [&](TraceWriter& w) {
    for (uint32_t i = 0; i < 30; ++i) {
      const ApiCall call{
          .callback_id = i, .start_ns = i, .end_ns = i + 1, .thread_id = 100 + i % 4};
      w.Add(call);
      expected.api_calls.push_back(call);
      const NvtxEvent mark{.kind = NvtxKind::kMark, .thread_id = 200 + i % 3};
      w.Add(mark);
      expected.nvtx_events.push_back(mark);
    }
  });
  auto result = ReadAll(path);
  expected.run_end = RunEnd{.end_time_ns = 99, .reason = "exit", .records_written = 1};
  EXPECT_EQ(result.merged, expected);
}

// Proves a device timestamp equal to the chunk's base time (delta 0) still reads as recorded,
// and an unrecorded one reads as 0.
TEST(RoundTripTest, CudaEventTimestampAtBase) {
  ScratchDir dir;
  const std::string path = WriteTrace(dir, {}, [&](TraceWriter& w) {
    w.Add(CudaEvent{.event_id = 1, .device_timestamp_ns = 123456});  // sets the base
    w.Add(CudaEvent{.event_id = 2});
    w.Add(Kernel{.shape = {}, .start_ns = 123456, .end_ns = 123457});
  });
  auto result = ReadAll(path);
  ASSERT_EQ(result.merged.cuda_events.size(), 2u);
  EXPECT_EQ(result.merged.cuda_events[0].device_timestamp_ns, 123456u);
  EXPECT_EQ(result.merged.cuda_events[1].device_timestamp_ns, 0u);
  EXPECT_EQ(result.merged.kernels[0].start_ns, 123456u);
}

// Proves an ApiCall's name comes from the ApiName table per (domain, callback id), and that an
// unspecified domain is written as runtime (ApiCall has no wire value for "unspecified").
TEST(RoundTripTest, ApiDomainsAndNames) {
  ScratchDir dir;
  uint32_t runtime_name = 0, driver_name = 0;
  const std::string path = WriteTrace(dir, {.chunk_bytes = 1}, [&](TraceWriter& w) {
    runtime_name = w.Intern("cudaMalloc");
    driver_name = w.Intern("cuMemAlloc");
    w.Add(ApiCall{.domain = ApiDomain::kRuntime, .callback_id = 20, .name_id = runtime_name});
    w.Add(ApiCall{.domain = ApiDomain::kDriver, .callback_id = 20, .name_id = driver_name});
    w.Add(ApiCall{.domain = ApiDomain::kUnspecified, .callback_id = 20, .name_id = runtime_name});
    w.Add(ApiCall{.domain = ApiDomain::kDriver, .callback_id = 20, .name_id = driver_name});
  });
  auto result = ReadAll(path);
  ASSERT_EQ(result.merged.api_calls.size(), 4u);
  EXPECT_EQ(result.chunks.size(), 5u);  // one record per chunk, then Finish's RunEnd
  const auto& calls = result.merged.api_calls;
  EXPECT_EQ(calls[0].domain, ApiDomain::kRuntime);
  EXPECT_EQ(calls[0].name_id, runtime_name);
  EXPECT_EQ(calls[1].domain, ApiDomain::kDriver);
  EXPECT_EQ(calls[1].name_id, driver_name);
  EXPECT_EQ(calls[2].domain, ApiDomain::kRuntime);
  EXPECT_EQ(calls[2].name_id, runtime_name);
  EXPECT_EQ(calls[3].name_id, driver_name);  // ApiName from an earlier chunk
}

// Proves a merged file (one header per process, chunks tagged with process_index) keeps each
// process's string table and thread numbering apart.
TEST(RoundTripTest, MergedProcesses) {
  ScratchDir dir;
  const std::string path = dir.Path("merged.pb");
  std::string error;
  auto sink = FileSink::Create(path, true, &error);
  ASSERT_NE(sink, nullptr) << error;
  TraceWriter first(sink.get(), {.process_index = 0});
  TraceWriter second(sink.get(), {.process_index = 1});
  TraceHeader header0 = SampleHeader(), header1 = SampleHeader();
  header1.pid = 5555;
  ASSERT_TRUE(first.WriteHeader(header0));
  ASSERT_TRUE(second.WriteHeader(header1));
  const uint32_t a = first.Intern("first process");
  const uint32_t b = second.Intern("second process");
  EXPECT_EQ(a, b);  // same id, different tables
  first.Add(Overhead{.name_id = a, .thread_id = 11});
  second.Add(Overhead{.name_id = b, .thread_id = 22});
  first.Flush();
  second.Flush();
  first.Add(Overhead{.name_id = a, .thread_id = 12});
  first.Flush();
  sink.reset();

  auto result = ReadAll(path);
  ASSERT_EQ(result.reader->headers().size(), 2u);
  EXPECT_EQ(result.reader->headers()[0], header0);
  EXPECT_EQ(result.reader->headers()[1], header1);
  ASSERT_EQ(result.chunks.size(), 3u);
  EXPECT_EQ(result.chunks[0].process_index, 0u);
  EXPECT_EQ(result.chunks[1].process_index, 1u);
  EXPECT_EQ(result.chunks[1].sequence, 0u);
  EXPECT_EQ(result.chunks[2].sequence, 1u);
  EXPECT_EQ(result.chunks[1].overheads[0].thread_id, 22u);
  EXPECT_EQ(result.chunks[2].overheads[0].thread_id, 12u);
  EXPECT_EQ(result.reader->String(a, 0), "first process");
  EXPECT_EQ(result.reader->String(b, 1), "second process");
  EXPECT_EQ(result.reader->String(a, 7), "");
}

// Proves strings that are not valid UTF-8 (a Latin-1 argv, a damaged kernel name) no longer cost
// the whole chunk: the writer replaces the bad bytes so that libprotobuf accepts the file.
TEST(RoundTripTest, InvalidUtf8IsRepaired) {
  ScratchDir dir;
  uint32_t name = 0;
  TraceHeader header = SampleHeader();
  header.command_line = {"./caf\xe9"};
  header.settings = {{"LIBPROF_\xff", "\xfe"}};
  const std::string path = dir.Path("trace.pb");
  {
    std::string error;
    auto sink = FileSink::Create(path, true, &error);
    TraceWriter writer(sink.get(), {});
    ASSERT_TRUE(writer.WriteHeader(header));
    name = writer.Intern("kernel\x80");
    writer.Add(Overhead{.name_id = name});
    writer.Add(DropReport{.source = "nv\xc0tx"});
    ASSERT_TRUE(writer.Finish({.reason = "signal \xff"}));
  }
  auto result = ReadAll(path);
  ASSERT_EQ(result.reader->error(), "");
  EXPECT_EQ(result.reader->header().command_line[0], "./caf\xef\xbf\xbd");
  EXPECT_EQ(result.reader->header().settings.at("LIBPROF_\xef\xbf\xbd"), "\xef\xbf\xbd");
  EXPECT_EQ(result.reader->String(name), "kernel\xef\xbf\xbd");
  EXPECT_EQ(result.merged.drops[0].source, "nv\xef\xbf\xbdtx");
  EXPECT_EQ(result.merged.run_end->reason, "signal \xef\xbf\xbd");
}

// Proves a process outside any parallel job reads back with no rank, not with rank 0.
TEST(RoundTripTest, AbsentRankStaysAbsent) {
  ScratchDir dir;
  TraceHeader header = SampleHeader();
  header.rank.reset();
  header.rank_source.clear();
  const std::string path = dir.Path("trace.pb");
  {
    std::string error;
    auto sink = FileSink::Create(path, true, &error);
    TraceWriter writer(sink.get(), {});
    ASSERT_TRUE(writer.WriteHeader(header));
    ASSERT_TRUE(writer.Finish({.reason = "exit"}));
  }
  auto result = ReadAll(path);
  ASSERT_EQ(result.reader->error(), "");
  EXPECT_FALSE(result.reader->header().rank.has_value());
  EXPECT_EQ(result.reader->header(), header);
}

}  // namespace
}  // namespace libprof
