// Proves ChunkPrefetcher hands out what TraceReader::Next does, with one decoding thread or
// several: every chunk equal, the strings defined so far equal after each chunk (strings, thread
// ids, API names and kernel shapes arrive in the chunks that use them), and the read's end
// (truncated, error, chunks and bytes read) equal, for whole, cut and corrupt files in small and
// large chunks; and that it stops cleanly when dropped halfway.
#include "proto/chunk_prefetcher.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/proto/trace_read_util.h"

namespace libprof {
namespace {

using testing::SampleTrace;
using testing::ScratchDir;
using testing::WriteFile;

struct Read {
  std::vector<TraceRecords> chunks;
  std::vector<std::vector<std::string>> strings;  // after each chunk
  bool truncated = false;
  std::string error;
  uint64_t chunks_read = 0;
  uint64_t bytes_read = 0;
};

Read Plain(const std::string& path) {
  Read read;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.has_value());
  TraceRecords chunk;
  while ((*reader)->Next(&chunk)) {
    read.chunks.push_back(chunk);
    read.strings.push_back((*reader)->strings());
  }
  read.truncated = (*reader)->truncated();
  read.error = (*reader)->error();
  read.chunks_read = (*reader)->chunks_read();
  read.bytes_read = (*reader)->bytes_read();
  return read;
}

Read Prefetched(const std::string& path, size_t ahead, size_t decoders) {
  Read read;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.has_value());
  ChunkPrefetcher chunks(**reader, ahead, decoders);
  TraceRecords chunk;
  while (chunks.Next(&chunk)) {
    read.chunks.push_back(chunk);
    read.strings.push_back(chunks.strings());
  }
  EXPECT_FALSE(chunks.Next(&chunk));  // stays at the end
  read.truncated = (*reader)->truncated();
  read.error = chunks.error();
  read.chunks_read = (*reader)->chunks_read();
  read.bytes_read = (*reader)->bytes_read();
  return read;
}

TEST(ChunkPrefetcherTest, HandsOutWhatNextDoes) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  int strings_grew = 0;
  for (size_t chunk_bytes : {size_t{100}, size_t{400}, size_t{1} << 20}) {
    const std::string trace = SampleTrace(chunk_bytes, 6);
    std::vector<std::string> files = {trace, trace.substr(0, trace.size() - 5)};
    for (size_t at : {trace.size() / 3, trace.size() / 2, trace.size() * 2 / 3}) {
      for (uint8_t flip : {0x5a, 0x01, 0x80}) {  // a damaged length, tag, id or value
        files.push_back(trace);
        files.back()[at] = static_cast<char>(files.back()[at] ^ flip);
      }
    }
    for (const std::string& bytes : files) {
      WriteFile(path, bytes);
      const Read expected = Plain(path);
      for (auto [ahead, decoders] : {std::pair<size_t, size_t>{1, 1}, {2, 1}, {8, 1}, {2, 2},
                                     {3, 3}, {8, 4}}) {
        const Read got = Prefetched(path, ahead, decoders);
        SCOPED_TRACE(::testing::Message() << chunk_bytes << " bytes a chunk, ahead " << ahead
                                        << ", decoders " << decoders);
        ASSERT_EQ(got.chunks.size(), expected.chunks.size()) << got.error << " / " << expected.error;
        for (size_t i = 0; i < got.chunks.size(); ++i) {
          EXPECT_EQ(got.chunks[i], expected.chunks[i]) << "chunk " << i;
          EXPECT_EQ(got.strings[i], expected.strings[i]) << "chunk " << i;
        }
        EXPECT_EQ(got.truncated, expected.truncated);
        EXPECT_EQ(got.error, expected.error);
        EXPECT_EQ(got.chunks_read, expected.chunks_read);
        EXPECT_EQ(got.bytes_read, expected.bytes_read);
      }
      for (size_t i = 1; i < expected.strings.size(); ++i) {
        strings_grew += expected.strings[i].size() > expected.strings[i - 1].size();
      }
    }
  }
  EXPECT_GT(strings_grew, 3);  // strings are defined in later chunks too, not only the first
}

TEST(ChunkPrefetcherTest, StopsWhenDroppedHalfway) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  WriteFile(path, SampleTrace(100, 6));
  for (size_t decoders : {1, 3}) {
    // A reader of its own each time: one dropped halfway has read past the chunks it decoded
    // ahead (and some of their definitions may never have been added).
    auto reader = TraceReader::Open(path);
    ASSERT_TRUE(reader.has_value());
    {
      ChunkPrefetcher chunks(**reader, 2, decoders);
      TraceRecords chunk;
      ASSERT_TRUE(chunks.Next(&chunk));
    }  // joins the decoding threads, which wait with chunks decoded ahead
    EXPECT_GE((*reader)->chunks_read(), 1u);
  }
}

}  // namespace
}  // namespace libprof
