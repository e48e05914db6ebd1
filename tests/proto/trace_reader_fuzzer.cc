// libFuzzer entry for TraceReader: any bytes, read as a trace file, must end in a clean end, a
// truncation or an error, never a crash, a hang or a huge allocation. Built only by compilers
// with libFuzzer support (see tests/proto/CMakeLists.txt).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "proto/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: one scratch file per fuzzing process.
  static const std::string path = "/tmp/libprof-fuzz-" + std::to_string(getpid()) + ".pb";
  if (FILE* file = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, file);
    std::fclose(file);
  } else {
    return 0;
  }
  auto reader = libprof::TraceReader::Open(path);
  if (!reader) return 0;
  libprof::TraceRecords records;
  while ((*reader)->Next(&records)) {
  }
  return 0;
}
