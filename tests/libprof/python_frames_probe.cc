// A shared library that Python loads with ctypes (python_frames_test.py): it reads the calling
// thread's Python frames with libprof's reader, as libprof does inside a CUDA API callback, and
// hands them back as text. Built for tests only.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "libprof/backtrace/python_frame_cache.h"
#include "libprof/backtrace/python_frame_table.h"
#include "libprof/backtrace/python_frames.h"

namespace {

const libprof::PythonFrameReader* Reader() {
  static const auto* reader = libprof::PythonFrameReader::Find().release();
  return reader;
}

// The calling thread's frames as "file|line|function" lines, innermost first.
std::string FramesText(const libprof::PythonFrameReader& reader, size_t* count) {
  std::string text;
  *count = reader.ReadText(64, [&text](const libprof::PythonFrameView& f) {
    text += std::string(f.file) + "|" + std::to_string(f.line) + "|" + std::string(f.function) +
            "\n";
  });
  return text;
}

int Read(char* out, int size) {
  const libprof::PythonFrameReader* reader = Reader();
  if (reader == nullptr) return -1;
  size_t n = 0;
  std::snprintf(out, static_cast<size_t>(size), "%s", FramesText(*reader, &n).c_str());
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

namespace {

// What libprof does with the frames at each API call (call_site_recorder.cc): read and intern
// them, through this thread's cache (`cached`) or reading every frame's text as on its first
// sight. For bench/python_frames_bench.py; returns the frames read.
int InternFrames(bool cached) {
  static auto* table = new libprof::PythonFrameTable(65536);
  thread_local libprof::PythonFrameCache cache;
  const libprof::PythonFrameReader* reader = Reader();
  if (reader == nullptr) return -1;
  uint32_t ids[256];
  bool cut = false;
  return static_cast<int>(
      libprof::InternPythonFrames(*reader, cached ? &cache : nullptr, *table, ids, 256, &cut));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int ProbeInternFrames() {
  return InternFrames(true);
}
extern "C" __attribute__((visibility("default"))) int ProbeInternFramesUncached() {
  return InternFrames(false);
}

// Reads `times` times and returns how many reads gave the same frames as the first (written to
// `out`): called without the GIL while other threads run Python, the frames must not move.
extern "C" __attribute__((visibility("default"))) int ProbeReadRepeatedly(int times, char* out,
                                                                         int size) {
  if (Reader() == nullptr) return -1;
  std::string first;
  int same = 0;
  for (int i = 0; i < times; ++i) {
    size_t n = 0;
    const std::string text = FramesText(*Reader(), &n);
    if (i == 0) first = text;
    same += text == first ? 1 : 0;
  }
  std::snprintf(out, static_cast<size_t>(size), "%s", first.c_str());
  return same;
}

// Whether the reader still checks its loads (python_frames.h), and whether it stopped.
extern "C" __attribute__((visibility("default"))) int ProbeChecking() {
  return Reader() != nullptr && Reader()->checking() ? 1 : 0;
}
extern "C" __attribute__((visibility("default"))) int ProbeStopped() {
  return Reader() == nullptr || Reader()->stopped() ? 1 : 0;
}
