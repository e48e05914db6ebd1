// Names code that lies in no loaded module (JIT-compiled code) from the perf map its runtime
// writes, /tmp/perf-<pid>.map: one "START SIZE name" line per function, START and SIZE in hex.
// Julia (ENABLE_JITPROFILING / --perf-map), CPython 3.12+ (-X perf), Node (--perf-basic-prof)
// and JVM agents (perf-map-agent) write it; perf(1) reads the same file.
//
// Layer: libprof/backtrace/ (CUDA-free). Used by the Symbolizer on libprof's writer thread, never
// on the application's threads: it reads a file and allocates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace libprof {

struct PerfMapSymbol {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;
  bool operator==(const PerfMapSymbol&) const = default;
};

// The symbols of a perf map's text, by start address. Lines that do not parse are skipped; of
// two symbols at one start address the later line wins (a JIT reusing freed code memory writes
// the new one after the old).
std::vector<PerfMapSymbol> ParsePerfMap(std::string_view text);

class PerfMap {
 public:
  // The map of this process, /tmp/perf-<getpid()>.map.
  PerfMap();
  explicit PerfMap(std::string path) : path_(std::move(path)) {}

  // The symbol whose [start, start + size) holds `address`; nullptr when none. On a miss, reads
  // what the runtime appended to the file since the last read (JITs append as they compile).
  const PerfMapSymbol* Find(uint64_t address);

  const std::string& path() const { return path_; }

 private:
  void ReadAppended();
  const PerfMapSymbol* Lookup(uint64_t address) const;

  std::string path_;
  uint64_t read_bytes_ = 0;  // of the file, up to the end of its last complete line
  std::vector<PerfMapSymbol> symbols_;  // by start
};

}  // namespace libprof
