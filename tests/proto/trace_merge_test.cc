// Proves that a merged trace reads back through the real TraceReader as exactly its inputs (every
// header, string table and record, each under its own process index), that merging merged files
// renumbers their processes, and that bad inputs and outputs are one-sentence errors that leave
// no file behind.
#include "proto/trace_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "proto/trace.pb.h"
#include "proto/trace_reader.h"
#include "proto/trace_writer.h"
#include "tests/proto/trace_test_util.h"

namespace libprof {
namespace {

using testing::ReadFile;
using testing::ScratchDir;
using testing::WriteFile;

// Writes a trace of process `pid` with one chunk per batch of SampleRecords (every field set).
void WriteTrace(const std::string& path, uint32_t pid, int chunks) {
  std::string error;
  auto sink = FileSink::Create(path, /*overwrite=*/true, &error);
  ASSERT_TRUE(sink) << error;
  TraceWriter writer(sink.get(), TraceWriter::Options{});
  TraceHeader header = testing::SampleHeader();
  header.pid = pid;
  header.command_line = {"./app", "--rank", std::to_string(pid)};
  ASSERT_TRUE(writer.WriteHeader(header));
  for (int i = 0; i < chunks; ++i) {
    writer.AddAll(testing::SampleRecords(writer.strings(), pid * 100 + i));
    ASSERT_TRUE(writer.Flush());
  }
  ASSERT_TRUE(writer.Finish(RunEnd{.end_time_ns = 99, .reason = "exit"}));
}

// Everything TraceReader gives back, per process.
struct ReadBack {
  std::vector<TraceHeader> headers;
  std::vector<std::vector<TraceRecords>> chunks;  // by process index, in file order
  std::vector<std::vector<std::string>> strings;
  std::string error;
  bool truncated = false;
};

ReadBack Read(const std::string& path) {
  ReadBack out;
  auto reader = TraceReader::Open(path);
  if (!reader) {
    out.error = reader.error();
    return out;
  }
  out.headers = (*reader)->headers();
  out.chunks.resize(out.headers.size());
  TraceRecords chunk;
  while ((*reader)->Next(&chunk)) {
    const uint32_t index = chunk.process_index;
    chunk.process_index = 0;  // compared with the inputs, where it is 0
    out.chunks.at(index).push_back(chunk);
  }
  for (uint32_t i = 0; i < out.headers.size(); ++i) out.strings.push_back((*reader)->strings(i));
  out.error = (*reader)->error();
  out.truncated = (*reader)->truncated();
  return out;
}

// Expects process `index` of `merged` to be exactly the single-process trace `single`.
void ExpectProcess(const ReadBack& merged, size_t index, const ReadBack& single) {
  ASSERT_LT(index, merged.headers.size());
  ASSERT_EQ(single.headers.size(), 1u);
  EXPECT_EQ(merged.headers[index], single.headers[0]);
  EXPECT_EQ(merged.strings[index], single.strings[0]);
  EXPECT_EQ(merged.chunks[index], single.chunks[0]);
}

// The files of a directory, to check that a failed merge leaves nothing (no temporary file).
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class TraceMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = dir_.Path("a.pb");
    b_ = dir_.Path("b.pb");
    c_ = dir_.Path("c.pb");
    WriteTrace(a_, 100, 3);
    WriteTrace(b_, 200, 1);
    WriteTrace(c_, 300, 2);
  }

  // Merges and expects an error containing `expected` (and naming a file), with no new file.
  void ExpectError(const std::vector<std::string>& inputs, const std::string& output,
                   const std::string& expected, MergeOptions options = {}) {
    const std::vector<std::string> before = Listing(dir_.Path(""));
    auto result = MergeTraceFiles(inputs, output, options);
    ASSERT_FALSE(result) << "merged although " << expected << " was expected";
    EXPECT_NE(result.error().find(expected), std::string::npos) << result.error();
    EXPECT_EQ(result.error().find('\n'), std::string::npos) << result.error();
    EXPECT_EQ(Listing(dir_.Path("")), before);
  }

  ScratchDir dir_;
  std::string a_, b_, c_;
};

TEST_F(TraceMergeTest, MergedFileReadsBackAsItsInputs) {
  const std::string out = dir_.Path("all.pb");
  auto report = MergeTraceFiles({a_, b_, c_}, out, {});
  ASSERT_TRUE(report) << report.error();
  EXPECT_EQ(report->chunks, 4u + 2u + 3u);  // each also has the chunk of its RunEnd
  EXPECT_EQ(report->input_files, 3u);
  EXPECT_TRUE(report->warnings.empty());
  ASSERT_EQ(report->processes.size(), 3u);
  EXPECT_EQ(report->processes[1].source, b_);
  EXPECT_EQ(report->processes[1].header.pid, 200u);
  EXPECT_EQ(report->processes[2].chunks, 3u);
  EXPECT_EQ(report->bytes_written, std::filesystem::file_size(out));

  const ReadBack merged = Read(out);
  EXPECT_EQ(merged.error, "");
  EXPECT_FALSE(merged.truncated);
  ASSERT_EQ(merged.headers.size(), 3u);
  ExpectProcess(merged, 0, Read(a_));
  ExpectProcess(merged, 1, Read(b_));
  ExpectProcess(merged, 2, Read(c_));
}

TEST_F(TraceMergeTest, RecordedTracesMergeLosslessly) {
  // The traces of samples/ recorded on an H200, in name order.
  auto files = ExpandTraceInputs({LIBPROF_SAMPLE_TRACES_DIR});
  ASSERT_TRUE(files) << files.error();
  ASSERT_GE(files->size(), 2u);
  const std::string out = dir_.Path("samples.pb");
  auto report = MergeTraceFiles(*files, out, {});
  ASSERT_TRUE(report) << report.error();
  const ReadBack merged = Read(out);
  EXPECT_EQ(merged.error, "");
  ASSERT_EQ(merged.headers.size(), files->size());
  for (size_t i = 0; i < files->size(); ++i) {
    SCOPED_TRACE((*files)[i]);
    ExpectProcess(merged, i, Read((*files)[i]));
  }
}

TEST_F(TraceMergeTest, SingleInputIsCopiedByteForByte) {
  const std::string out = dir_.Path("copy.pb");
  ASSERT_TRUE(MergeTraceFiles({a_}, out, {}));
  EXPECT_EQ(ReadFile(out), ReadFile(a_));
}

TEST_F(TraceMergeTest, MergingAMergedFileRenumbersItsProcesses) {
  const std::string ab = dir_.Path("ab.pb");
  ASSERT_TRUE(MergeTraceFiles({a_, b_}, ab, {}));
  // Appended to a merged file: the same bytes as merging the three at once.
  ASSERT_TRUE(MergeTraceFiles({ab, c_}, dir_.Path("ab_c.pb"), {}));
  ASSERT_TRUE(MergeTraceFiles({a_, b_, c_}, dir_.Path("abc.pb"), {}));
  EXPECT_EQ(ReadFile(dir_.Path("ab_c.pb")), ReadFile(dir_.Path("abc.pb")));
  // After another file: chunks that already name a process get a second process_index, and the
  // last one counts.
  auto report = MergeTraceFiles({c_, ab}, dir_.Path("c_ab.pb"), {});
  ASSERT_TRUE(report) << report.error();
  EXPECT_EQ(report->processes[2].source, ab);
  const ReadBack merged = Read(dir_.Path("c_ab.pb"));
  EXPECT_EQ(merged.error, "");
  ASSERT_EQ(merged.headers.size(), 3u);
  ExpectProcess(merged, 0, Read(c_));
  ExpectProcess(merged, 1, Read(a_));
  ExpectProcess(merged, 2, Read(b_));
}

TEST_F(TraceMergeTest, SameRecordingTwiceIsAWarning) {
  const std::string ab = dir_.Path("ab.pb");
  ASSERT_TRUE(MergeTraceFiles({a_, b_}, ab, {}));
  auto report = MergeTraceFiles({ab, a_}, dir_.Path("twice.pb"), {});
  ASSERT_TRUE(report) << report.error();
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_NE(report->warnings[0].find("process 100"), std::string::npos) << report->warnings[0];
}

TEST_F(TraceMergeTest, TopLevelFieldsOfANewerSchemaAreKept) {
  // Field 3, varint 7: unknown to this schema; the reader skips it, the merge keeps it.
  const std::string extra("\x18\x07", 2);
  WriteFile(b_, ReadFile(b_) + extra);
  const std::string out = dir_.Path("all.pb");
  ASSERT_TRUE(MergeTraceFiles({a_, b_}, out, {}));
  const std::string merged = ReadFile(out);
  EXPECT_EQ(merged.substr(merged.size() - 2), extra);
  EXPECT_EQ(Read(out).error, "");
}

TEST_F(TraceMergeTest, DirectoriesExpandToTheirTraceFilesByName) {
  std::filesystem::create_directory(dir_.Path("d"));
  std::filesystem::create_directory(dir_.Path("d/sub.pb"));
  WriteFile(dir_.Path("d/z.pb"), "");
  WriteFile(dir_.Path("d/m.pb"), "");
  WriteFile(dir_.Path("d/.hidden.pb"), "");
  WriteFile(dir_.Path("d/notes.txt"), "");
  auto files = ExpandTraceInputs({a_, dir_.Path("d")});
  ASSERT_TRUE(files) << files.error();
  EXPECT_EQ(*files, (std::vector<std::string>{a_, dir_.Path("d/m.pb"), dir_.Path("d/z.pb")}));

  std::filesystem::create_directory(dir_.Path("empty"));
  auto none = ExpandTraceInputs({dir_.Path("empty")});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), dir_.Path("empty") + ": no .pb trace files in this directory");
}

TEST_F(TraceMergeTest, BadInputsAreErrorsNamingTheFile) {
  const std::string out = dir_.Path("out.pb");
  ExpectError({a_, dir_.Path("missing.pb")}, out,
              dir_.Path("missing.pb") + ": cannot open (No such file or directory)");
  WriteFile(dir_.Path("text.pb"), "hello, not a trace\n");
  ExpectError({dir_.Path("text.pb")}, out, dir_.Path("text.pb") + ": not a libprof trace");
  WriteFile(dir_.Path("empty.pb"), "");
  ExpectError({dir_.Path("empty.pb")}, out, dir_.Path("empty.pb") + ": empty file");
  ExpectError({dir_.Path("")}, out, "is a directory");

  // A header of schema version 99.
  trace::Header header;
  header.set_format(kTraceFormat);
  header.set_schema_version(99);
  trace::TraceFile future;
  *future.mutable_header() = header;
  WriteFile(dir_.Path("future.pb"), future.SerializeAsString());
  ExpectError({a_, dir_.Path("future.pb")}, out,
              dir_.Path("future.pb") + ": schema version 99 is not supported");

  // Two traces end to end: a header after chunks.
  WriteFile(dir_.Path("cat.pb"), ReadFile(a_) + ReadFile(b_));
  ExpectError({dir_.Path("cat.pb")}, out, dir_.Path("cat.pb") + ": header at byte");

  ExpectError({a_, b_, a_}, out, a_ + ": given twice (also as " + a_ + ")");
}

// Where the first chunk's field starts (*field) and where its payload starts (returned): after
// the header field and the chunk's tag and length (each length a varint).
size_t FirstChunkPayload(const std::string& bytes, size_t* field = nullptr) {
  size_t pos = 0;
  auto skip_field = [&](bool payload) {
    ++pos;  // tag (fields 1 and 2: one byte)
    uint64_t size = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = static_cast<uint8_t>(bytes.at(pos++));
      size |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) break;
    }
    if (payload) pos += size;
  };
  skip_field(true);  // the header
  if (field != nullptr) *field = pos;
  skip_field(false);  // the chunk's tag and length
  return pos;
}

TEST_F(TraceMergeTest, CorruptChunksAreErrors) {
  const std::string out = dir_.Path("out.pb");
  // 0xff bytes where the first chunk's first field starts: no valid tag there.
  std::string bytes = ReadFile(a_);
  size_t field = 0;
  const size_t payload = FirstChunkPayload(bytes, &field);
  for (size_t i = payload; i < payload + 12; ++i) bytes[i] = '\xff';
  WriteFile(dir_.Path("corrupt.pb"), bytes);
  ExpectError({b_, dir_.Path("corrupt.pb")}, out,
              dir_.Path("corrupt.pb") + ": chunk at byte " + std::to_string(field) + " is corrupt");

  // A chunk naming process 3 in a file with one header.
  trace::Chunk chunk;
  chunk.set_process_index(3);
  trace::TraceFile extra;
  *extra.add_chunk() = chunk;
  WriteFile(dir_.Path("stray.pb"), ReadFile(b_) + extra.SerializeAsString());
  ExpectError({dir_.Path("stray.pb")}, out, "belongs to process 3 but the file has 1 header(s)");
}

// Where, in the first chunk, a field of at least 32 bytes has its payload (a record or a
// string): the chunk's framing around it stays intact whatever is written inside.
size_t InsideALongField(const std::string& bytes) {
  size_t pos = FirstChunkPayload(bytes);
  auto varint = [&] {
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = static_cast<uint8_t>(bytes.at(pos++));
      value |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
  };
  while (true) {
    const uint64_t tag = varint();
    if ((tag & 7) == 0) {
      varint();
      continue;
    }
    EXPECT_EQ(tag & 7, 2u) << "unexpected wire type in the first chunk";
    const uint64_t size = varint();
    if (size >= 32) return pos;
    pos += size;
  }
}

TEST_F(TraceMergeTest, DamageInsideARecordIsLeftToTheReader) {
  // The merge checks the framing of chunks, not the records inside (it never decodes them): a
  // record damaged inside its own bytes is copied, and the reader of the merged file reports it
  // as it would in the input, naming the merged file.
  std::string bytes = ReadFile(a_);
  const size_t inside = InsideALongField(bytes);
  for (size_t i = inside + 4; i < inside + 20; ++i) bytes[i] = '\xff';
  WriteFile(dir_.Path("damaged.pb"), bytes);
  ASSERT_NE(Read(dir_.Path("damaged.pb")).error, "");
  const std::string out = dir_.Path("out.pb");
  auto report = MergeTraceFiles({b_, dir_.Path("damaged.pb")}, out, {});
  ASSERT_TRUE(report) << report.error();
  EXPECT_NE(Read(out).error.find(out + ": chunk at byte"), std::string::npos) << Read(out).error;
}

TEST_F(TraceMergeTest, TruncatedInputIsAnErrorUnlessAllowed) {
  const std::string cut = dir_.Path("cut.pb");
  const std::string bytes = ReadFile(a_);
  WriteFile(cut, bytes.substr(0, bytes.size() - 10));  // inside the last of 4 chunks (RunEnd)
  const std::string out = dir_.Path("out.pb");
  ExpectError({b_, cut}, out, cut + ": the file ends inside the chunk at byte");
  ExpectError({cut}, out, "--allow-truncated merges its 3 complete chunk(s)");

  auto report = MergeTraceFiles({b_, cut}, out, MergeOptions{.allow_truncated = true});
  ASSERT_TRUE(report) << report.error();
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_NE(report->warnings[0].find(cut + ": the file ends inside"), std::string::npos);
  EXPECT_EQ(report->processes[1].chunks, 3u);
  const ReadBack merged = Read(out);
  EXPECT_EQ(merged.error, "");
  EXPECT_FALSE(merged.truncated);  // the merged file itself is whole
  ASSERT_EQ(merged.chunks.size(), 2u);
  const ReadBack original = Read(a_);
  EXPECT_EQ(merged.chunks[1], (std::vector<TraceRecords>(original.chunks[0].begin(),
                                                         original.chunks[0].begin() + 3)));
  // A cut inside the header is never merged.
  WriteFile(cut, bytes.substr(0, 20));
  ExpectError({cut}, dir_.Path("out2.pb"), cut + ": file ends inside the header",
              MergeOptions{.allow_truncated = true});
}

TEST_F(TraceMergeTest, OutputNeverReplacesAnInputAndOnlyAnOtherFileWhenAsked) {
  ExpectError({a_, b_}, b_, b_ + ": is also an input", MergeOptions{.overwrite = true});
  ExpectError({a_, b_}, dir_.Path("./a.pb"), "is also an input", MergeOptions{.overwrite = true});

  const std::string out = dir_.Path("out.pb");
  WriteFile(out, "old");
  ExpectError({a_}, out, out + ": already exists (--force replaces it)");
  EXPECT_EQ(ReadFile(out), "old");
  ASSERT_TRUE(MergeTraceFiles({a_}, out, MergeOptions{.overwrite = true}));
  EXPECT_EQ(ReadFile(out), ReadFile(a_));
}

TEST_F(TraceMergeTest, UnwritableOutputIsAnError) {
  ExpectError({a_}, dir_.Path("no/such/dir/out.pb"),
              "cannot be created (No such file or directory");
  ExpectError({a_}, a_ + "/out.pb", "cannot be created (Not a directory");
  std::filesystem::create_directory(dir_.Path("d"));
  ExpectError({a_}, dir_.Path("d"), dir_.Path("d") + ": is a directory",
              MergeOptions{.overwrite = true});
  ExpectError({}, dir_.Path("out.pb"), "no trace file to merge");
}

}  // namespace
}  // namespace libprof
