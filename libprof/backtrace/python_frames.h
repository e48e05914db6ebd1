// Reads the calling thread's Python frames (file, line, function; innermost first), so that a
// CUDA call made from Python is named by the script's line and not only by C frames.
//
// Why plain memory reads and not the C API: frameworks release the GIL before their CUDA calls
// (PyTorch's `.item()` and generated op bindings run inside gil_scoped_release), so a reader
// that needs the GIL sees no Python in exactly the calls users ask about. Yet a thread that
// released the GIL inside a C call still owns its frames: only it pushes, pops or advances
// them, and it is inside this callback. Its frame chain, the code objects the frames hold (a
// strong reference each) and their names and line tables stay alive and unchanged until the
// callback returns, whoever holds the GIL meanwhile. So they are read as memory, the way
// py-spy reads another process, but in-process and only on the thread's own frames:
// - The thread's state comes from PyGILState_GetThisThreadState() (a thread-local lookup, no
//   GIL needed); a thread Python never saw has none and reads nothing.
// - The offsets come from python_layouts.h, one row per CPython 3.9-3.13, generated from each
//   version's headers; other versions, free-threaded builds and builds whose code type has
//   another size get no reader (one warning).
// - Lines come from PyCode_Addr2Line, a pure function of the code object's immutable line table
//   (no allocation, no reference count, no error state), so no line-table format is copied here.
// - Every object is checked to be what the layout says (code objects are PyCode_Type, names
//   are str) before it is used, and the first kCheckedFrames frames are loaded through
//   process_vm_readv on the own process, which fails cleanly on an address that is not mapped:
//   a layout that does not match the running interpreter stops the reader with one warning
//   instead of crashing the program. After that, loads are plain.
// - Nothing is written, taken or released: no reference, no lock, no GIL, no Python error
//   state; errno is preserved. A process without CPython gets no reader and pays one null check.
//
// Layer: libprof/backtrace/ (CUDA-free). Read runs on the application's threads inside the API
// callback, concurrently; Find runs once, at start.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "libprof/backtrace/python_layouts.h"

namespace libprof {

// What the reader takes from the interpreter: three functions and three type objects, resolved
// by name, and the layout of its version.
struct PythonRuntime {
  int (*Py_IsInitialized)() = nullptr;
  void* (*PyGILState_GetThisThreadState)() = nullptr;
  int (*PyCode_Addr2Line)(void* code, int byte_offset) = nullptr;
  const void* code_type = nullptr;   // &PyCode_Type
  const void* str_type = nullptr;    // &PyUnicode_Type
  const void* frame_type = nullptr;  // &PyFrame_Type (3.9-3.10 frames are objects)
  const PythonLayout* layout = nullptr;

  // Resolves every name through `lookup` (dlsym on some handle); false when one is missing.
  template <typename Lookup>
  bool Resolve(Lookup lookup);
};

// The Python version of a Py_GetVersion() string ("3.11.2 (main, ...)"): whether the reader
// supports it, and why not otherwise. Exposed for tests.
struct PythonVersionCheck {
  int major = 0;
  int minor = 0;
  bool supported = false;
  std::string reason;  // "" when supported
};
PythonVersionCheck CheckPythonVersion(std::string_view version);

// One Python frame's text: views valid only during the visit.
struct PythonFrameView {
  std::string_view file;
  std::string_view function;
  uint32_t line = 0;
};

// What tells one frame's text from another's without reading it (python_frame_cache.h): the code
// object with the objects it names and its first line (a code object freed and another allocated
// at its address is told apart unless all of those match too), and the byte offset of the
// instruction the frame executes.
struct PythonFrameKey {
  const void* code = nullptr;
  const void* file = nullptr;
  const void* name = nullptr;
  int first_line = 0;
  int byte_offset = 0;
  bool operator==(const PythonFrameKey&) const = default;
};

class PythonFrameReader;

// Where a frame's text is decoded: on the reading thread's stack, for one walk.
struct PythonFrameText {
  static constexpr size_t kMaxFileBytes = 1024;  // longer names are cut
  static constexpr size_t kMaxFunctionBytes = 256;
  char file[kMaxFileBytes];
  char function[kMaxFunctionBytes];
};

// One frame during a visit: its key at once, its text on request (reading the names and looking
// up the line is most of a frame's cost).
class PythonFrameRef {
 public:
  PythonFrameRef(const PythonFrameReader& reader, const PythonFrameKey& key, PythonFrameText* text)
      : reader_(reader), key_(key), text_(text) {}
  const PythonFrameKey& key() const { return key_; }
  // Fills `view`; false when the names cannot be read (the reader stopped; the walk ends).
  bool Text(PythonFrameView* view) const;

 private:
  const PythonFrameReader& reader_;
  PythonFrameKey key_;
  PythonFrameText* text_;
};

class PythonFrameReader {
 public:
  // The CPython of this process, or nullptr when there is none (nothing logged) or it is not a
  // supported one (one warning on stderr).
  static std::unique_ptr<PythonFrameReader> Find();
  // A reader on a runtime resolved elsewhere (tests); runtime.layout must be set.
  explicit PythonFrameReader(const PythonRuntime& runtime) : runtime_(runtime) {}

  // Calls `visit(const PythonFrameRef&)` for each frame of the calling thread, innermost first, at
  // most `max_frames`; returns how many were visited (0: the thread runs no Python). Never
  // throws (the visitor must not either); safe on any thread, with or without the GIL.
  template <typename Visit>
  size_t Read(size_t max_frames, Visit&& visit) const;
  // The same with every frame's text: `visit(const PythonFrameView&)`.
  template <typename Visit>
  size_t ReadText(size_t max_frames, Visit&& visit) const;

  int minor() const { return runtime_.layout->minor; }
  // Whether a layout mismatch stopped the reader for good.
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  // Whether loads are still checked (the first kCheckedFrames frames).
  bool checking() const { return checked_left_.load(std::memory_order_relaxed) > 0; }

  static constexpr int kCheckedFrames = 64;

 private:
  friend class PythonFrameRef;
  enum class Step { kVisit, kSkip, kStop };

  // The innermost frame of the calling thread, or nullptr.
  const void* InnermostFrame() const;
  // Reads `frame`'s key (kVisit), says it is not Python code to show (kSkip: a C entry shim or a
  // frame not started yet), or that the walk ends (kStop: a check failed). Sets *previous to
  // the caller's frame.
  Step ReadKey(const void* frame, PythonFrameKey* key, const void** previous) const;
  // The text of the frame `key` names (PythonFrameRef::Text).
  bool ReadText(const PythonFrameKey& key, PythonFrameText* text, PythonFrameView* view) const;
  // A str's characters as UTF-8 in `buffer` (cut at `capacity`); false when `str` is not a str.
  bool ReadString(const void* str, char* buffer, size_t capacity, std::string_view* out) const;
  // Copies `size` bytes at `address`; false when they cannot be read (checked loads).
  bool Load(const void* address, void* out, size_t size) const;
  template <typename T>
  bool LoadAt(const void* base, int offset, T* out) const {
    return Load(static_cast<const char*>(base) + offset, out, sizeof(T));
  }
  bool IsOfType(const void* object, const void* type) const;
  // The walk found memory that does not match the layout: no more reads, one warning.
  Step Stop(const char* what) const;

  PythonRuntime runtime_;
  mutable std::atomic<int> checked_left_{kCheckedFrames};
  mutable std::atomic<bool> stopped_{false};
};

// ----- implementation of the templates -----

template <typename Lookup>
bool PythonRuntime::Resolve(Lookup lookup) {
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lookup(name));
    return fn != nullptr;
  };
  bool ok = get(Py_IsInitialized, "Py_IsInitialized") &
            get(PyGILState_GetThisThreadState, "PyGILState_GetThisThreadState") &
            get(PyCode_Addr2Line, "PyCode_Addr2Line");
  code_type = lookup("PyCode_Type");
  str_type = lookup("PyUnicode_Type");
  frame_type = lookup("PyFrame_Type");
  return ok && code_type != nullptr && str_type != nullptr && frame_type != nullptr;
}

template <typename Visit>
size_t PythonFrameReader::Read(size_t max_frames, Visit&& visit) const {
  if (stopped()) return 0;
  const void* frame = InnermostFrame();
  PythonFrameText text;
  size_t count = 0;
  // Bounded even if a chain were to loop: skipped frames are few (one shim per C entry).
  for (size_t steps = 0; frame != nullptr && count < max_frames && steps < 4 * max_frames + 64;
       ++steps) {
    PythonFrameKey key;
    const void* previous = nullptr;
    const Step step = ReadKey(frame, &key, &previous);
    if (step == Step::kStop) break;
    if (step == Step::kVisit) {
      visit(PythonFrameRef(*this, key, &text));
      if (stopped()) break;  // its text could not be read
      ++count;
    }
    frame = previous;
  }
  return count;
}

template <typename Visit>
size_t PythonFrameReader::ReadText(size_t max_frames, Visit&& visit) const {
  return Read(max_frames, [&visit](const PythonFrameRef& frame) {
    PythonFrameView view;
    if (frame.Text(&view)) visit(view);
  });
}

}  // namespace libprof
