// read_floor: decodes every chunk of the given traces with TraceReader::Next and counts the
// records. That is the least any analysis of a file pays (the "read floor" of bench/README.md);
// it keeps one chunk in memory at a time.
#include <chrono>
#include <cstdio>
#include <string>

#include "proto/trace_reader.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: read_floor TRACE...\n", stderr);
    return 2;
  }
  const auto begin = std::chrono::steady_clock::now();
  uint64_t records = 0, chunks = 0, bytes = 0;
  libprof::TraceRecords chunk;  // reused, as an analysis that streams would
  for (int i = 1; i < argc; ++i) {
    auto reader = libprof::TraceReader::Open(argv[i]);
    if (!reader) {
      std::fprintf(stderr, "read_floor: %s\n", reader.error().c_str());
      return 1;
    }
    while ((*reader)->Next(&chunk)) records += chunk.RecordCount();
    if (!(*reader)->error().empty()) {
      std::fprintf(stderr, "read_floor: %s\n", (*reader)->error().c_str());
      return 1;
    }
    chunks += (*reader)->chunks_read();
    bytes += (*reader)->bytes_read();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::printf("records=%llu chunks=%llu bytes=%llu seconds=%.3f\n",
              static_cast<unsigned long long>(records), static_cast<unsigned long long>(chunks),
              static_cast<unsigned long long>(bytes), seconds);
  return 0;
}
