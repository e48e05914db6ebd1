#include "proto/trace_reader.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "proto/trace.pb.h"
#include "proto/trace_writer.h"
#include "tests/proto/trace_read_util.h"
#include "tests/proto/trace_test_util.h"

namespace libprof {
namespace {

using testing::MemorySink;
using testing::OpenError;
using testing::ReadAll;
using testing::ReadFile;
using testing::SampleHeader;
using testing::SampleRecords;
using testing::SampleTrace;
using testing::ScratchDir;
using testing::WriteFile;

std::string Varint(uint64_t value) {
  std::string out;
  do {
    out.push_back(static_cast<char>((value & 0x7F) | (value > 0x7F ? 0x80 : 0)));
    value >>= 7;
  } while (value != 0);
  return out;
}

// One length-delimited top-level field of TraceFile.
std::string Field(uint32_t number, const std::string& payload) {
  return Varint(number << 3 | 2) + Varint(payload.size()) + payload;
}

std::string HeaderField(const std::string& format, uint32_t schema_version) {
  trace::Header header;
  header.set_format(format);
  header.set_schema_version(schema_version);
  return Field(1, header.SerializeAsString());
}

std::string ChunkField(const trace::Chunk& chunk) { return Field(2, chunk.SerializeAsString()); }

// Start offsets of the top-level fields of a well-formed file.
std::vector<size_t> FieldOffsets(const std::string& bytes) {
  std::vector<size_t> offsets;
  size_t pos = 0;
  while (pos < bytes.size()) {
    offsets.push_back(pos);
    ++pos;  // one-byte tags in our files
    uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      length |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) break;
    }
    pos += length;
  }
  return offsets;
}

// Proves Open's errors are one sentence naming the file for a missing file, a directory, an
// empty file, a file of another kind, an unsupported schema version and a cut header.
TEST(TraceReaderTest, OpenErrors) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  EXPECT_EQ(OpenError(path), path + ": cannot open (No such file or directory)");
  EXPECT_EQ(OpenError(dir.Path("")), dir.Path("") + ": is a directory, not a trace file");

  WriteFile(path, "");
  EXPECT_EQ(OpenError(path), path + ": empty file, not a libprof trace");
  WriteFile(path, "#!/bin/sh\necho hello\n");
  EXPECT_EQ(OpenError(path), path + ": not a libprof trace (no header)");
  WriteFile(path, HeaderField("perfetto", 1));
  EXPECT_EQ(OpenError(path), path + ": not a libprof trace (no header)");
  WriteFile(path, Field(2, "") + HeaderField(kTraceFormat, kSchemaVersion));  // chunk first
  EXPECT_EQ(OpenError(path), path + ": not a libprof trace (no header)");
  const std::string good = HeaderField(kTraceFormat, kSchemaVersion);
  WriteFile(path, good + Field(1, "\x07"));  // a merged file's second header, damaged
  EXPECT_EQ(OpenError(path),
            path + ": header at byte " + std::to_string(good.size()) + " is corrupt");
  WriteFile(path, HeaderField(kTraceFormat, 7));
  EXPECT_EQ(OpenError(path), path + ": schema version 7 is not supported (this profview reads 1)");

  const std::string trace = SampleTrace();
  const size_t header_end = FieldOffsets(trace)[1];
  for (size_t cut = 1; cut < header_end; ++cut) {
    WriteFile(path, trace.substr(0, cut));
    ASSERT_EQ(OpenError(path), path + ": file ends inside the header") << "cut at " << cut;
  }
  WriteFile(path, trace.substr(0, header_end));  // a header and nothing else: a valid trace
  auto result = ReadAll(path);
  EXPECT_TRUE(result.chunks.empty());
  EXPECT_FALSE(result.reader->truncated());
  EXPECT_EQ(result.reader->error(), "");
}

// Proves that cutting a file at every byte offset inside its last chunk reads back exactly the
// complete chunks and reports truncated(), while a cut at a chunk boundary is a clean end.
TEST(TraceReaderTest, TruncationAtEveryOffsetOfTheLastChunk) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  const std::string trace = SampleTrace();
  const std::vector<size_t> offsets = FieldOffsets(trace);
  ASSERT_GE(offsets.size(), 5u);  // header and at least 4 chunks
  const size_t last_start = offsets.back();

  WriteFile(path, trace);
  auto full = ReadAll(path);
  ASSERT_EQ(full.chunks.size(), offsets.size() - 1);
  TraceRecords complete;  // all chunks but the last
  for (size_t i = 0; i + 1 < full.chunks.size(); ++i)
    AppendRecords(full.chunks[i], &complete);

  for (size_t cut = last_start; cut < trace.size(); ++cut) {
    WriteFile(path, trace.substr(0, cut));
    auto result = ReadAll(path);
    ASSERT_NE(result.reader, nullptr);
    ASSERT_EQ(result.chunks.size(), full.chunks.size() - 1) << "cut at " << cut;
    ASSERT_EQ(result.merged, complete) << "cut at " << cut;
    EXPECT_EQ(result.reader->truncated(), cut > last_start) << "cut at " << cut;
    EXPECT_EQ(result.reader->error(), "") << "cut at " << cut;
    EXPECT_EQ(result.reader->bytes_read(), last_start);
    TraceRecords again;
    EXPECT_FALSE(result.reader->Next(&again));  // stays at the end
  }
}

// Proves AppendNext builds the same whole trace as Next with AppendRecords (every list, the run
// end, the strings), in small and large chunks, and stops at a cut chunk as Next does.
TEST(TraceReaderTest, AppendNextGivesWhatNextAndAppendRecordsGive) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  for (size_t chunk_bytes : {size_t{100}, size_t{300}, size_t{1} << 20}) {
    const std::string trace = SampleTrace(chunk_bytes);
    for (size_t size : {trace.size(), trace.size() - 3}) {  // whole, then cut inside a chunk
      WriteFile(path, trace.substr(0, size));
      const auto expected = ReadAll(path);
      auto reader = TraceReader::Open(path);
      ASSERT_TRUE(reader.has_value()) << reader.error();
      TraceRecords whole;
      TraceRecords* into[] = {&whole};
      uint32_t process = 7;
      uint64_t chunks = 0;
      while ((*reader)->AppendNext(into, &process)) {
        EXPECT_EQ(process, 0u);
        ++chunks;
      }
      EXPECT_EQ(chunks, expected.chunks.size()) << chunk_bytes << " " << size;
      EXPECT_EQ(whole, expected.merged) << chunk_bytes << " " << size;
      EXPECT_TRUE(whole.run_end.has_value() || size < trace.size());
      EXPECT_EQ((*reader)->truncated(), size < trace.size());
      EXPECT_EQ((*reader)->error(), "");
      EXPECT_EQ((*reader)->strings(), expected.reader->strings());
    }
  }
}

// Proves bytes that do not parse inside a chunk stop reading with an error naming the file and
// the chunk's byte offset, after the earlier chunks were delivered.
TEST(TraceReaderTest, CorruptChunk) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  std::string trace = SampleTrace();
  const std::vector<size_t> offsets = FieldOffsets(trace);
  const size_t second_chunk = offsets[2];
  size_t length_bytes = 1;  // the length prefix's size, after the one-byte tag
  while (static_cast<uint8_t>(trace[second_chunk + length_bytes]) & 0x80) ++length_bytes;
  trace[second_chunk + 1 + length_bytes] = '\x07';  // field 0, wire type 7: never valid
  WriteFile(path, trace);
  auto result = ReadAll(path);
  EXPECT_EQ(result.chunks.size(), 1u);
  EXPECT_FALSE(result.reader->truncated());
  EXPECT_EQ(result.reader->error(),
            path + ": chunk at byte " + std::to_string(second_chunk) + " is corrupt");
}

// Proves references to undefined shapes, threads, processes and out-of-sequence definitions are
// errors, not crashes or huge allocations.
TEST(TraceReaderTest, InvalidReferences) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  const std::string header = HeaderField(kTraceFormat, kSchemaVersion);
  const std::string at = " at byte " + std::to_string(header.size()) + " ";
  auto expect_error = [&](const trace::Chunk& chunk, const std::string& problem) {
    WriteFile(path, header + ChunkField(chunk));
    auto result = ReadAll(path);
    EXPECT_TRUE(result.chunks.empty());
    EXPECT_EQ(result.reader->error(), path + ": chunk" + at + problem);
  };
  trace::Chunk chunk;
  chunk.add_kernels()->set_shape_id(3);
  expect_error(chunk, "refers to undefined kernel shape 3");
  chunk.Clear();
  chunk.add_kernel_shapes()->set_id(1);  // id 0 is left undefined: a hole
  chunk.add_kernel_shapes()->set_id(1);
  chunk.add_kernels()->set_shape_id(0);
  expect_error(chunk, "refers to undefined kernel shape 0");
  chunk.Clear();
  chunk.add_api_calls()->set_thread_index(5);
  expect_error(chunk, "refers to undefined thread index 5");
  chunk.Clear();
  chunk.add_nvtx_events()->set_end_thread_index(1);
  chunk.add_threads(77);
  expect_error(chunk, "refers to undefined thread index 1");
  chunk.Clear();
  auto* string = chunk.add_strings();
  string->set_id(4'000'000'000u);
  string->set_value("x");
  expect_error(chunk, "defines string id 4000000000 out of sequence");
  chunk.Clear();
  chunk.add_kernel_shapes()->set_id(4'000'000'000u);
  expect_error(chunk, "defines kernel shape 4000000000 out of sequence");
  chunk.Clear();
  chunk.set_process_index(2);
  expect_error(chunk, "belongs to process 2 but the file has 1 header(s)");
}

// Proves a damaged length prefix over 1 GiB is an error (not an allocation), a header after
// chunks is refused, and an invalid wire type at the top level is an error.
TEST(TraceReaderTest, FramingErrors) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  const std::string header = HeaderField(kTraceFormat, kSchemaVersion);
  const std::string at = std::to_string(header.size());

  WriteFile(path, header + Varint(2 << 3 | 2) + Varint(uint64_t{3} << 30) + "abc");
  EXPECT_EQ(ReadAll(path).reader->error(),
            path + ": field at byte " + at + " is 3221225472 bytes long (over the 1 GiB limit)");

  WriteFile(path, header + ChunkField(trace::Chunk()) + header);
  auto result = ReadAll(path);
  EXPECT_EQ(result.chunks.size(), 1u);
  EXPECT_EQ(result.reader->error(),
            path + ": header at byte " + std::to_string(header.size() + 2) +
                " follows trace data (concatenated trace files are not supported)");

  WriteFile(path, header + Varint(9 << 3 | 3) + "\x0c");  // a group
  EXPECT_EQ(ReadAll(path).reader->error(), path + ": invalid field tag at byte " + at);
  WriteFile(path, header + std::string(11, '\xff'));  // not a varint
  EXPECT_EQ(ReadAll(path).reader->error(), path + ": invalid field tag at byte " + at);
}

// Proves top-level fields of a newer schema (any wire type) are skipped, not errors, and that a
// file cut inside one is a truncation.
TEST(TraceReaderTest, SkipsUnknownTopLevelFields) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  trace::Chunk chunk;
  chunk.add_overheads()->set_overhead_kind(4);
  chunk.add_threads(99);
  const std::string unknown = Varint(15 << 3 | 0) + Varint(123456) +       // varint
                              Varint(16 << 3 | 1) + std::string(8, 'x') +  // fixed64
                              Varint(17 << 3 | 5) + std::string(4, 'y') +  // fixed32
                              Field(18, "future data");
  const std::string trace =
      HeaderField(kTraceFormat, kSchemaVersion) + unknown + ChunkField(chunk) + unknown;
  WriteFile(path, trace);
  auto result = ReadAll(path);
  ASSERT_EQ(result.chunks.size(), 1u) << result.reader->error();
  EXPECT_EQ(result.chunks[0].overheads[0].overhead_kind, 4u);
  EXPECT_EQ(result.reader->error(), "");
  EXPECT_FALSE(result.reader->truncated());
  EXPECT_EQ(result.reader->bytes_read(), trace.size());

  WriteFile(path, trace.substr(0, trace.size() - 3));
  result = ReadAll(path);
  EXPECT_EQ(result.chunks.size(), 1u);
  EXPECT_TRUE(result.reader->truncated());
}

// Proves random damage (flipped bytes, cuts, inserted bytes) to a real trace never crashes the
// reader and always ends in one of its three outcomes. A deterministic stand-in for the fuzzer
// that g++ cannot build; run it under LIBPROF_SANITIZE=ON for memory errors.
TEST(TraceReaderTest, SurvivesRandomDamage) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  const std::string original = SampleTrace(120);
  std::mt19937 random(7);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string damaged = original;
    const int edits = 1 + random() % 4;
    for (int e = 0; e < edits; ++e) {
      const size_t pos = random() % damaged.size();
      switch (random() % 4) {
        case 0:
          damaged[pos] = static_cast<char>(random());
          break;
        case 1:
          damaged[pos] ^= static_cast<char>(1 << (random() % 8));
          break;
        case 2:
          damaged.insert(pos, 1, static_cast<char>(random()));
          break;
        case 3:
          damaged.resize(std::max<size_t>(pos, 1));
          break;
      }
    }
    WriteFile(path, damaged);
    auto reader = TraceReader::Open(path);
    if (!reader) {
      EXPECT_EQ(reader.error().rfind(path + ": ", 0), 0u) << reader.error();
      continue;
    }
    TraceRecords records;
    int chunks = 0;
    while ((*reader)->Next(&records)) ASSERT_LT(++chunks, 10000);
    EXPECT_FALSE(!(*reader)->error().empty() && (*reader)->truncated());  // one outcome
    EXPECT_FALSE((*reader)->Next(&records));                              // and it sticks
    EXPECT_LE((*reader)->bytes_read(), damaged.size());
  }
}

}  // namespace
}  // namespace libprof
