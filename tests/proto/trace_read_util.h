// Reading helpers for the reader tests (which link libprof_trace_reader).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "proto/trace_reader.h"
#include "proto/trace_writer.h"
#include "tests/proto/trace_test_util.h"

namespace libprof::testing {

struct ReadResult {
  std::unique_ptr<TraceReader> reader;
  std::vector<TraceRecords> chunks;
  TraceRecords merged;  // every chunk's lists appended
};

// Opens `path` (the test fails if that fails) and reads chunks until Next returns false.
inline ReadResult ReadAll(const std::string& path) {
  ReadResult result;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.has_value()) << reader.error();
  if (!reader) return result;
  result.reader = std::move(*reader);
  TraceRecords chunk;
  while (result.reader->Next(&chunk)) {
    AppendRecords(chunk, &result.merged);
    result.chunks.push_back(std::move(chunk));
  }
  return result;
}

// A valid trace written by TraceWriter in chunks of about `chunk_bytes`: the sample records
// `rounds` times over (each round salted), strings defined in the chunks that first use them.
inline std::string SampleTrace(size_t chunk_bytes = 300, uint32_t rounds = 3) {
  MemorySink sink;
  TraceWriter writer(&sink, {.chunk_bytes = chunk_bytes});
  writer.WriteHeader(SampleHeader());
  for (uint32_t salt = 0; salt < rounds; ++salt) {
    writer.AddAll(SampleRecords(writer.strings(), salt));
  }
  writer.Finish({.reason = "exit"});
  return sink.bytes();
}

// The error Open gives for `path`, or "" when it opens.
inline std::string OpenError(const std::string& path) {
  auto reader = TraceReader::Open(path);
  return reader ? "" : reader.error();
}

}  // namespace libprof::testing
