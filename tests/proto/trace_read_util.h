// Reading helpers for the reader tests (which link libprof_trace_reader).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "proto/trace_reader.h"
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

// The error Open gives for `path`, or "" when it opens.
inline std::string OpenError(const std::string& path) {
  auto reader = TraceReader::Open(path);
  return reader ? "" : reader.error();
}

}  // namespace libprof::testing
