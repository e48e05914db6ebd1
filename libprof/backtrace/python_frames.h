// Reads the Python frames of the calling thread (file, line, function; innermost first) when it
// runs CPython and already holds the GIL, so that a CUDA call made from Python is named by the
// script's line and not only by the interpreter's C frames.
//
// How, and what it may not do (it runs inside someone else's interpreter, inside a CUDA call):
// - CPython is found in the process, never loaded or linked: its C API is resolved with dlsym
//   from the global scope (the `python3` executable, or a libpython it links), else from a
//   libpython3.* the loader lists (an embedding program that dlopen'd it RTLD_LOCAL). A process
//   without CPython gets no reader and pays one null check per call.
// - Only CPython 3.9 to 3.13 with a GIL: those have the public frame API used here
//   (PyThreadState_GetFrame, PyFrame_GetBack, PyFrame_GetCode, all new in 3.9, and
//   PyFrame_GetLineNumber). Free-threaded builds and other versions get no reader (one warning).
// - A thread is read only if it holds the GIL already (PyGILState_Check, and the thread's own
//   state is the current one, which also rules out sub-interpreters); the GIL is never taken.
// - Only C functions of the API run: no import, no Python code, no object freed (every reference
//   taken is a new one on an object that something else keeps alive, released before Read
//   returns). With an exception already set, nothing is read; an error raised by the reading
//   itself (out of memory materialising a frame object) is cleared and ends the walk.
// - No layout of CPython is written into this code. The code object's co_filename and
//   co_qualname (co_name before 3.11) are attributes, read with PyObject_GetAttrString; that
//   costs about 1 µs a frame, so the first reads also find where the code object holds them
//   (the words within its __basicsize__ that hold the two objects the attributes return) and
//   check them on later frames until one word each is left, on kVerifyFrames frames at least
//   (co_name and co_qualname are often the same object: a method's frame tells them apart).
//   From then on the two pointers are loaded directly (borrowed from the code object, which the
//   reader holds). A frame that matches no candidate keeps the attribute reads for good.
//
// Layer: libprof/backtrace/ (CUDA-free). Read runs on the application's thread inside the API
// callback; Find runs once, at start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace libprof {

// The C API functions the reader calls, resolved by name. Opaque pointers stand for PyObject*,
// PyFrameObject*, PyCodeObject* and PyThreadState*.
struct PythonApi {
  using Object = void*;
  int (*Py_IsInitialized)() = nullptr;
  int (*PyGILState_Check)() = nullptr;
  void* (*PyGILState_GetThisThreadState)() = nullptr;
  void* (*ThreadStateUncheckedGet)() = nullptr;  // _PyThreadState_UncheckedGet / 3.13's public name
  Object (*PyErr_Occurred)() = nullptr;
  void (*PyErr_Clear)() = nullptr;
  Object (*PyThreadState_GetFrame)(void*) = nullptr;  // new reference
  Object (*PyFrame_GetBack)(Object) = nullptr;        // new reference
  Object (*PyFrame_GetCode)(Object) = nullptr;        // new reference
  int (*PyFrame_GetLineNumber)(Object) = nullptr;
  Object (*PyObject_GetAttrString)(Object, const char*) = nullptr;  // new reference
  Object (*PyObject_Type)(Object) = nullptr;                         // new reference
  ptrdiff_t (*PyLong_AsSsize_t)(Object) = nullptr;
  const char* (*PyUnicode_AsUTF8AndSize)(Object, ptrdiff_t*) = nullptr;
  void (*Py_DecRef)(Object) = nullptr;
  int minor = 0;  // 3.<minor>
  const char* function_attribute = "co_qualname";  // "co_name" before 3.11

  // Resolves every function through `lookup` (dlsym on some handle); false when one is missing.
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

// One Python frame as Read hands it over: views valid only during the callback.
struct PythonFrameView {
  std::string_view file;
  std::string_view function;
  uint32_t line = 0;
};

class PythonFrameReader {
 public:
  // The CPython of this process, or nullptr when there is none (nothing logged) or it is not a
  // supported one (one warning on stderr).
  static std::unique_ptr<PythonFrameReader> Find();
  // A reader on an API resolved elsewhere (tests).
  explicit PythonFrameReader(const PythonApi& api) : api_(api) {}

  // Calls `visit(const PythonFrameView&)` for each frame of the calling thread, innermost first,
  // at most `max_frames`; returns how many were visited (0: not running Python with the GIL).
  // Never throws (the visitor must not either); safe on any thread.
  template <typename Visit>
  size_t Read(size_t max_frames, Visit&& visit) const;

  int minor() const { return api_.minor; }
  // Whether the names are now loaded from the code object directly (tests, benchmarks).
  bool direct_names() const { return trusted_; }

  // Frames on which the offsets found are checked against the attributes before being trusted.
  static constexpr int kVerifyFrames = 16;

 private:
  // The names of `code`: loaded directly once the offsets are verified (borrowed, *owned =
  // false), else as attributes (new references, *owned = true), checking or finding the offsets.
  bool Names(void* code, void** file, void** name, bool* owned) const;
  // The byte offsets of the pointer-aligned words of `code` that hold `field` (at most
  // kMaxCandidates).
  std::vector<size_t> FindOffsets(void* code, void* field) const;
  // Keeps the candidates whose word in `code` holds `field`.
  static void Narrow(void* code, void* field, std::vector<size_t>* candidates);
  static constexpr size_t kMaxCandidates = 8;

  // Whether this thread holds the GIL of the main interpreter, and no exception is set.
  void* ReadableThreadState() const;
  // The frame's file, function and line through `visit`; false when an attribute is missing.
  template <typename Visit>
  bool VisitFrame(void* frame, Visit& visit) const;
  void FinishRead() const;

  PythonApi api_;
  // Touched only by the thread holding the GIL: one at a time (mutable: Read is const).
  mutable std::vector<size_t> file_offsets_;  // candidates; one once trusted
  mutable std::vector<size_t> name_offsets_;
  mutable int checked_ = 0;     // frames the candidates were checked on
  mutable bool found_ = false;  // candidates were looked for
  mutable bool failed_ = false;  // none, or a frame matched none: attributes for good
  mutable bool trusted_ = false;
};

// ----- implementation of the templates -----

template <typename Lookup>
bool PythonApi::Resolve(Lookup lookup) {
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lookup(name));
    return fn != nullptr;
  };
  bool ok = get(Py_IsInitialized, "Py_IsInitialized") & get(PyGILState_Check, "PyGILState_Check") &
            get(PyGILState_GetThisThreadState, "PyGILState_GetThisThreadState") &
            get(PyErr_Occurred, "PyErr_Occurred") & get(PyErr_Clear, "PyErr_Clear") &
            get(PyThreadState_GetFrame, "PyThreadState_GetFrame") &
            get(PyFrame_GetBack, "PyFrame_GetBack") & get(PyFrame_GetCode, "PyFrame_GetCode") &
            get(PyFrame_GetLineNumber, "PyFrame_GetLineNumber") &
            get(PyObject_GetAttrString, "PyObject_GetAttrString") &
            get(PyObject_Type, "PyObject_Type") & get(PyLong_AsSsize_t, "PyLong_AsSsize_t") &
            get(PyUnicode_AsUTF8AndSize, "PyUnicode_AsUTF8AndSize") & get(Py_DecRef, "Py_DecRef");
  // 3.13 made it public as PyThreadState_GetUnchecked; 3.9-3.12 export the private name.
  if (!get(ThreadStateUncheckedGet, "PyThreadState_GetUnchecked")) {
    ok &= get(ThreadStateUncheckedGet, "_PyThreadState_UncheckedGet");
  }
  return ok;
}

template <typename Visit>
bool PythonFrameReader::VisitFrame(void* frame, Visit& visit) const {
  void* code = api_.PyFrame_GetCode(frame);
  if (code == nullptr) return false;
  const int line = api_.PyFrame_GetLineNumber(frame);
  void* file = nullptr;
  void* name = nullptr;
  bool owned = false;
  Names(code, &file, &name, &owned);
  bool ok = false;
  if (file != nullptr && name != nullptr) {
    ptrdiff_t file_size = 0, name_size = 0;
    const char* file_text = api_.PyUnicode_AsUTF8AndSize(file, &file_size);
    const char* name_text =
        file_text != nullptr ? api_.PyUnicode_AsUTF8AndSize(name, &name_size) : nullptr;
    if (name_text != nullptr) {
      PythonFrameView view{std::string_view(file_text, static_cast<size_t>(file_size)),
                           std::string_view(name_text, static_cast<size_t>(name_size)),
                           line > 0 ? static_cast<uint32_t>(line) : 0};
      visit(view);
      ok = true;
    }
  }
  if (owned && name != nullptr) api_.Py_DecRef(name);
  if (owned && file != nullptr) api_.Py_DecRef(file);
  api_.Py_DecRef(code);
  return ok;
}

template <typename Visit>
size_t PythonFrameReader::Read(size_t max_frames, Visit&& visit) const {
  void* state = ReadableThreadState();
  if (state == nullptr) return 0;
  size_t count = 0;
  void* frame = api_.PyThreadState_GetFrame(state);
  while (frame != nullptr && count < max_frames) {
    if (!VisitFrame(frame, visit)) break;
    ++count;
    void* back = api_.PyFrame_GetBack(frame);
    api_.Py_DecRef(frame);
    frame = back;
  }
  if (frame != nullptr) api_.Py_DecRef(frame);
  FinishRead();
  return count;
}

}  // namespace libprof
