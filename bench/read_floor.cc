// read_floor: decodes every chunk of the given traces with TraceReader::Next and counts the
// records. That is the least any analysis of a file pays (the "read floor" of bench/README.md);
// it keeps one chunk in memory at a time.
//
// With --decoders N: the same through ChunkPrefetcher on N decoding threads (as many chunks
// ahead), to show what decoding costs a read that decodes in parallel (and its memory).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "proto/chunk_prefetcher.h"
#include "proto/trace_reader.h"

int main(int argc, char** argv) {
  size_t decoders = 0;  // 0: TraceReader::Next on this thread
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--decoders") == 0 && i + 1 < argc) {
      decoders = std::strtoul(argv[++i], nullptr, 10);
      if (decoders == 0) {
        std::fputs("read_floor: --decoders needs a number above 0\n", stderr);
        return 2;
      }
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty()) {
    std::fputs("usage: read_floor [--decoders N] TRACE...\n", stderr);
    return 2;
  }
  const auto begin = std::chrono::steady_clock::now();
  uint64_t records = 0, chunks = 0, bytes = 0;
  libprof::TraceRecords chunk;  // reused, as an analysis that streams would
  for (const std::string& path : paths) {
    auto reader = libprof::TraceReader::Open(path);
    if (!reader) {
      std::fprintf(stderr, "read_floor: %s\n", reader.error().c_str());
      return 1;
    }
    if (decoders == 0) {
      while ((*reader)->Next(&chunk)) records += chunk.RecordCount();
    } else {
      libprof::ChunkPrefetcher prefetched(**reader, decoders, decoders);
      while (prefetched.Next(&chunk)) records += chunk.RecordCount();
    }
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
