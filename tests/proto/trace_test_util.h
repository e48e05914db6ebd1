// Helpers shared by the proto/ tests: an in-memory sink, a scratch directory, records with every
// field set, and a realistic kernel launch loop.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof::testing {

// Collects everything written; can be told to fail once it holds `fail_after` bytes.
class MemorySink : public ByteSink {
 public:
  explicit MemorySink(size_t fail_after = SIZE_MAX) : fail_after_(fail_after) {}
  bool Write(const void* data, size_t size) override;
  const std::string& bytes() const { return bytes_; }

 private:
  size_t fail_after_;
  std::string bytes_;
};

// A fresh directory under the test temp dir, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  std::string Path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void WriteFile(const std::string& path, const std::string& bytes);
std::string ReadFile(const std::string& path);

TraceHeader SampleHeader();

// One or more records of every kind, every field set to a non-default value, strings interned
// into `strings`. `salt` varies the values so that several batches differ.
TraceRecords SampleRecords(StringInterner& strings, uint32_t salt);

// `iterations` of the loop the compactness target is about: cudaLaunchKernel every ~3 us on one
// thread, each with a nested cuLaunchKernel, and a 2 us kernel of one shape on one stream.
TraceRecords LaunchLoop(StringInterner& strings, int iterations);

}  // namespace libprof::testing
