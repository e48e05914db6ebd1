// A shared library that Python loads with ctypes (python_frames_test.py): it reads the calling
// thread's Python frames with libprof's reader, as libprof does inside a CUDA API callback, and
// hands them back as text. Built for tests only.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "libprof/backtrace/python_frame_table.h"
#include "libprof/backtrace/python_frames.h"

namespace {

const libprof::PythonFrameReader* Reader() {
  static const auto* reader = libprof::PythonFrameReader::Find().release();
  return reader;
}

int Read(char* out, int size) {
  const libprof::PythonFrameReader* reader = Reader();
  if (reader == nullptr) return -1;
  std::string text;
  const size_t n = reader->Read(64, [&text](const libprof::PythonFrameView& f) {
    text += std::string(f.file) + "|" + std::to_string(f.line) + "|" + std::string(f.function) +
            "\n";
  });
  std::snprintf(out, static_cast<size_t>(size), "%s", text.c_str());
  return static_cast<int>(n);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int ProbePythonFrames(char* out, int size) {
  return Read(out, size);
}

// From a thread Python never saw: must read nothing.
extern "C" __attribute__((visibility("default"))) int ProbeFromNativeThread(char* out, int size) {
  int n = -2;
  std::thread([&] { n = Read(out, size); }).join();
  return n;
}

// The CPython minor version the reader found; -1 when it found none.
extern "C" __attribute__((visibility("default"))) int ProbePythonMinor() {
  const libprof::PythonFrameReader* reader = Reader();
  return reader != nullptr ? reader->minor() : -1;
}

// What libprof does with the frames at each API call (call_site_recorder.cc): read and intern
// them. For bench/python_frames_bench.py; returns the frames read.
extern "C" __attribute__((visibility("default"))) int ProbeInternFrames() {
  static auto* table = new libprof::PythonFrameTable(65536);
  const libprof::PythonFrameReader* reader = Reader();
  if (reader == nullptr) return -1;
  return static_cast<int>(reader->Read(256, [](const libprof::PythonFrameView& f) {
    table->Intern(f.file, f.function, f.line);
  }));
}

// Whether the reader now loads names from the code object directly (python_frames.h).
extern "C" __attribute__((visibility("default"))) int ProbeDirectNames() {
  const libprof::PythonFrameReader* reader = Reader();
  return reader != nullptr && reader->direct_names() ? 1 : 0;
}
