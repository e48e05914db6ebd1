#include "libprof/backtrace/python_frames.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <vector>

#include "libprof/log.h"

namespace libprof {
namespace {

// A loaded libpython3.*: the first the loader lists, with the handle dlopen(RTLD_NOLOAD) gives
// for it (one more reference on a library already loaded; never a new load).
int FindLibpython(dl_phdr_info* info, size_t, void* arg) {
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  const char* file = std::strrchr(name, '/');
  file = file != nullptr ? file + 1 : name;
  if (std::strncmp(file, "libpython3", 10) != 0) return 0;
  *static_cast<void**>(arg) = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
  return *static_cast<void**>(arg) != nullptr ? 1 : 0;
}

}  // namespace

PythonVersionCheck CheckPythonVersion(std::string_view version) {
  PythonVersionCheck check;
  size_t i = 0;
  auto number = [&](int* out) {
    const size_t start = i;
    while (i < version.size() && version[i] >= '0' && version[i] <= '9' && i - start < 4) {
      *out = *out * 10 + (version[i++] - '0');
    }
    return i > start;
  };
  if (!number(&check.major) || i >= version.size() || version[i++] != '.' ||
      !number(&check.minor)) {
    check.reason = "unrecognised version string";
    return check;
  }
  // Free-threaded builds say so in their version ("3.13.0 experimental free-threading build"):
  // they have no GIL to hold, and reading frames there is untested.
  if (version.find("free-threading") != std::string_view::npos) {
    check.reason = "free-threaded build";
    return check;
  }
  if (check.major != 3 || check.minor < 9 || check.minor > 13) {
    check.reason = "only CPython 3.9 to 3.13 are supported";
    return check;
  }
  check.supported = true;
  return check;
}

std::unique_ptr<PythonFrameReader> PythonFrameReader::Find() {
  // The global scope first: the python3 executable exports its C API (or links libpython).
  void* handle = RTLD_DEFAULT;
  auto* version_fn = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
  if (version_fn == nullptr) {
    void* libpython = nullptr;
    dl_iterate_phdr(&FindLibpython, &libpython);
    if (libpython == nullptr) return nullptr;  // no CPython: nothing to read, nothing to say
    handle = libpython;  // kept open: the reader's functions live there
    version_fn = reinterpret_cast<const char* (*)()>(dlsym(handle, "Py_GetVersion"));
    if (version_fn == nullptr) return nullptr;
  }
  const char* version = version_fn();
  const PythonVersionCheck check = CheckPythonVersion(version != nullptr ? version : "");
  if (!check.supported) {
    Log().warn("Python frames not recorded: CPython {}.{} ({})", check.major, check.minor,
               check.reason);
    return nullptr;
  }
  PythonApi api;
  if (!api.Resolve([handle](const char* name) { return dlsym(handle, name); })) {
    Log().warn("Python frames not recorded: CPython {}.{} lacks a function of its frame API",
               check.major, check.minor);
    return nullptr;
  }
  api.minor = check.minor;
  api.function_attribute = check.minor >= 11 ? "co_qualname" : "co_name";
  Log().debug("Python frames recorded from CPython {}.{}", check.major, check.minor);
  return std::make_unique<PythonFrameReader>(api);
}

void* PythonFrameReader::ReadableThreadState() const {
  // Before Py_Initialize and once finalisation has begun, no frame is read.
  if (api_.Py_IsInitialized() == 0) return nullptr;
  // PyGILState_Check answers 1 without checking when sub-interpreters turned its check off, so
  // also require that this thread's own state is the one holding the GIL (3.9-3.11: the
  // process's current state; 3.12+: this thread's attached state).
  if (api_.PyGILState_Check() != 1) return nullptr;
  void* state = api_.ThreadStateUncheckedGet();
  if (state == nullptr || state != api_.PyGILState_GetThisThreadState()) return nullptr;
  // An exception being raised or handled in C: leave the thread's error state alone.
  if (api_.PyErr_Occurred() != nullptr) return nullptr;
  return state;
}

std::vector<size_t> PythonFrameReader::FindOffsets(void* code, void* field) const {
  std::vector<size_t> out;
  // The code object's size from its type's __basicsize__ (public attributes only: the object
  // header's own layout differs in debug builds).
  void* type = api_.PyObject_Type(code);
  if (type == nullptr) return out;
  void* basicsize = api_.PyObject_GetAttrString(type, "__basicsize__");
  api_.Py_DecRef(type);
  if (basicsize == nullptr) return out;
  const ptrdiff_t size = api_.PyLong_AsSsize_t(basicsize);
  api_.Py_DecRef(basicsize);
  if (size <= 0 || size > 4096) return out;  // -1 with an error set (cleared by FinishRead)
  // Past the object header (reference count and type, 16 bytes in a release build).
  const auto* words = static_cast<void* const*>(code);
  for (size_t i = 2; i < static_cast<size_t>(size) / sizeof(void*); ++i) {
    if (words[i] == field && out.size() < kMaxCandidates) out.push_back(i * sizeof(void*));
  }
  return out;
}

void PythonFrameReader::Narrow(void* code, void* field, std::vector<size_t>* candidates) {
  std::erase_if(*candidates, [&](size_t offset) {
    return *reinterpret_cast<void**>(static_cast<char*>(code) + offset) != field;
  });
}

bool PythonFrameReader::Names(void* code, void** file, void** name, bool* owned) const {
  if (trusted_) {
    *file = *reinterpret_cast<void**>(static_cast<char*>(code) + file_offsets_[0]);
    *name = *reinterpret_cast<void**>(static_cast<char*>(code) + name_offsets_[0]);
    *owned = false;
    return true;
  }
  *file = api_.PyObject_GetAttrString(code, "co_filename");
  *name = api_.PyObject_GetAttrString(code, api_.function_attribute);
  *owned = true;
  if (*file == nullptr || *name == nullptr || failed_) return false;
  // Allocation-free after the first frame: candidates only shrink.
  if (!found_) {
    found_ = true;
    try {
      file_offsets_ = FindOffsets(code, *file);
      name_offsets_ = FindOffsets(code, *name);
    } catch (...) {
      failed_ = true;
    }
  } else {
    Narrow(code, *file, &file_offsets_);
    Narrow(code, *name, &name_offsets_);
  }
  ++checked_;
  if (file_offsets_.empty() || name_offsets_.empty()) {
    failed_ = true;
  } else if (checked_ >= kVerifyFrames && file_offsets_.size() == 1 &&
             name_offsets_.size() == 1 && file_offsets_[0] != name_offsets_[0]) {
    trusted_ = true;
  }
  return true;
}

void PythonFrameReader::FinishRead() const {
  // No exception was set when the read began (ReadableThreadState), so one set now is ours.
  if (api_.PyErr_Occurred() != nullptr) api_.PyErr_Clear();
}

}  // namespace libprof
