// Proves ChunkPrefetcher hands out what TraceReader::Next does: every chunk equal, the strings
// defined so far equal after each chunk (strings arrive in the chunks that use them), and the
// read's end (truncated, error, chunks read) equal, for whole, cut and corrupt files in small
// and large chunks; and that it stops cleanly when dropped halfway.
#include "proto/chunk_prefetcher.h"

#include <gtest/gtest.h>

#include <string>
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
  return read;
}

Read Prefetched(const std::string& path, size_t ahead) {
  Read read;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.has_value());
  ChunkPrefetcher chunks(**reader, ahead);
  TraceRecords chunk;
  while (chunks.Next(&chunk)) {
    read.chunks.push_back(chunk);
    read.strings.push_back(chunks.strings());
  }
  EXPECT_FALSE(chunks.Next(&chunk));  // stays at the end
  read.truncated = (*reader)->truncated();
  read.error = chunks.error();
  read.chunks_read = (*reader)->chunks_read();
  return read;
}

TEST(ChunkPrefetcherTest, HandsOutWhatNextDoes) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.pb");
  int strings_grew = 0;
  for (size_t chunk_bytes : {size_t{100}, size_t{400}, size_t{1} << 20}) {
    const std::string trace = SampleTrace(chunk_bytes, 6);
    std::string corrupt = trace;
    corrupt[corrupt.size() / 2] ^= 0x5a;
    for (const std::string& bytes : {trace, trace.substr(0, trace.size() - 5), corrupt}) {
      WriteFile(path, bytes);
      const Read expected = Plain(path);
      for (size_t ahead : {1, 2, 8}) {
        const Read got = Prefetched(path, ahead);
        ASSERT_EQ(got.chunks.size(), expected.chunks.size()) << chunk_bytes;
        for (size_t i = 0; i < got.chunks.size(); ++i) {
          EXPECT_EQ(got.chunks[i], expected.chunks[i]) << chunk_bytes << " chunk " << i;
          EXPECT_EQ(got.strings[i], expected.strings[i]) << chunk_bytes << " chunk " << i;
        }
        EXPECT_EQ(got.truncated, expected.truncated);
        EXPECT_EQ(got.error, expected.error);
        EXPECT_EQ(got.chunks_read, expected.chunks_read);
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
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.has_value());
  {
    ChunkPrefetcher chunks(**reader, 2);
    TraceRecords chunk;
    ASSERT_TRUE(chunks.Next(&chunk));
  }  // joins the decoding thread, which waits with chunks decoded ahead
  EXPECT_GE((*reader)->chunks_read(), 1u);
}

}  // namespace
}  // namespace libprof
