#include "libprof/backtrace/python_frames.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

// Appends code point `c` as UTF-8 if it fits in [*at, end).
bool AppendUtf8(uint32_t c, char** at, char* end) {
  char bytes[4];
  size_t n = 0;
  if (c < 0x80) {
    bytes[n++] = static_cast<char>(c);
  } else if (c < 0x800) {
    bytes[n++] = static_cast<char>(0xC0 | (c >> 6));
    bytes[n++] = static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    bytes[n++] = static_cast<char>(0xE0 | (c >> 12));
    bytes[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    bytes[n++] = static_cast<char>(0x80 | (c & 0x3F));
  } else {
    bytes[n++] = static_cast<char>(0xF0 | ((c >> 18) & 0x07));
    bytes[n++] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    bytes[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    bytes[n++] = static_cast<char>(0x80 | (c & 0x3F));
  }
  if (end - *at < static_cast<ptrdiff_t>(n)) return false;
  std::memcpy(*at, bytes, n);
  *at += n;
  return true;
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
  // their objects have another header, and no layout row describes them.
  if (version.find("free-threading") != std::string_view::npos) {
    check.reason = "free-threaded build";
    return check;
  }
  if (check.major != 3 || FindPythonLayout(check.minor) == nullptr) {
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
  PythonRuntime runtime;
  runtime.layout = FindPythonLayout(check.minor);
  if (!runtime.Resolve([handle](const char* name) { return dlsym(handle, name); })) {
    Log().warn("Python frames not recorded: CPython 3.{} lacks a function or type the reader uses",
               check.minor);
    return nullptr;
  }
  // The code type's declared size is static data of the interpreter: a build with another
  // object header or code layout (Py_TRACE_REFS, a patched interpreter) shows it here.
  ptrdiff_t code_size = 0;
  std::memcpy(&code_size,
              static_cast<const char*>(runtime.code_type) + runtime.layout->type_basicsize,
              sizeof code_size);
  if (code_size != runtime.layout->code_basicsize) {
    Log().warn("Python frames not recorded: CPython 3.{}'s code objects are {} bytes, not the {} "
               "of its release build",
               check.minor, code_size, runtime.layout->code_basicsize);
    return nullptr;
  }
  Log().debug("Python frames recorded from CPython 3.{}", check.minor);
  return std::make_unique<PythonFrameReader>(runtime);
}

bool PythonFrameReader::Load(const void* address, void* out, size_t size) const {
  if (reinterpret_cast<uintptr_t>(address) < 4096) return false;  // null, or nearly
  if (checked_left_.load(std::memory_order_relaxed) <= 0) {
    std::memcpy(out, address, size);
    return true;
  }
  const int saved_errno = errno;  // the program's, whatever the CUDA call did to it
  iovec local{out, size};
  iovec remote{const_cast<void*>(address), size};
  const ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  const int error = errno;
  errno = saved_errno;
  if (n == static_cast<ssize_t>(size)) return true;
  if (n < 0 && (error == ENOSYS || error == EPERM)) {
    // No checked loads here (a seccomp filter, an old kernel): the type checks remain.
    checked_left_.store(0, std::memory_order_relaxed);
    std::memcpy(out, address, size);
    return true;
  }
  return false;
}

bool PythonFrameReader::IsOfType(const void* object, const void* type) const {
  const void* actual = nullptr;  // ob_type follows ob_refcnt in every release build
  return LoadAt(object, sizeof(void*), &actual) && actual == type;
}

PythonFrameReader::Step PythonFrameReader::Stop(const char* what) const {
  if (!stopped_.exchange(true, std::memory_order_relaxed)) {
    Log().warn("Python frames no longer recorded: {} (CPython 3.{} layout does not match)", what,
               runtime_.layout->minor);
  }
  return Step::kStop;
}

const void* PythonFrameReader::InnermostFrame() const {
  // Before Py_Initialize and once finalisation has begun, no frame is read.
  if (runtime_.Py_IsInitialized() == 0) return nullptr;
  const void* state = runtime_.PyGILState_GetThisThreadState();
  if (state == nullptr) return nullptr;  // a thread Python never saw
  const PythonLayout& layout = *runtime_.layout;
  const void* frame = nullptr;
  if (!LoadAt(state, layout.thread_frame, &frame)) return nullptr;
  if (layout.cframe_current >= 0 && frame != nullptr) {
    const void* cframe = frame;
    if (!LoadAt(cframe, layout.cframe_current, &frame)) return nullptr;
  }
  return frame;
}

PythonFrameReader::Step PythonFrameReader::ReadKey(const void* frame, PythonFrameKey* key,
                                                   const void** previous) const {
  const PythonLayout& layout = *runtime_.layout;
  const bool frame_objects = layout.frame_lasti >= 0;  // 3.9-3.10
  if (frame_objects && !IsOfType(frame, runtime_.frame_type)) return Stop("a frame is not one");
  const void* code = nullptr;
  if (!LoadAt(frame, layout.frame_previous, previous) || !LoadAt(frame, layout.frame_code, &code)) {
    return Stop("a frame cannot be read");
  }
  int byte_offset = 0;
  if (frame_objects) {
    int lasti = 0;
    if (!LoadAt(frame, layout.frame_lasti, &lasti)) return Stop("a frame cannot be read");
    if (!IsOfType(code, runtime_.code_type)) return Stop("a frame's code is not a code object");
    byte_offset = lasti > 0 ? lasti * layout.lasti_unit : 0;
  } else {
    char owner = 0;
    if (!LoadAt(frame, layout.frame_owner, &owner)) return Stop("a frame cannot be read");
    if (owner == layout.owner_cstack) return Step::kSkip;  // the C entry shim of 3.12+
    // 3.13's f_executable is not always code (a frame of a C function may hold another object).
    if (!IsOfType(code, runtime_.code_type)) {
      return layout.minor >= 13 ? Step::kSkip : Stop("a frame's code is not a code object");
    }
    const char* instr = nullptr;
    ptrdiff_t code_units = 0;  // Py_SIZE(code): the bytecode's length in code units
    int first_traceable = 0;
    if (!LoadAt(frame, layout.frame_instr, &instr) ||
        !LoadAt(code, 2 * static_cast<int>(sizeof(void*)), &code_units) ||
        !LoadAt(code, layout.code_firsttraceable, &first_traceable)) {
      return Stop("a frame cannot be read");
    }
    const ptrdiff_t offset = instr - (static_cast<const char*>(code) + layout.code_adaptive);
    // A frame that has not reached its first traceable instruction is not shown by CPython
    // either (_PyFrame_IsIncomplete); an offset outside the bytecode is not a line.
    if (owner != layout.owner_generator && offset < 2 * first_traceable) return Step::kSkip;
    if (offset < 0 || offset >= 2 * code_units) return Step::kSkip;
    byte_offset = static_cast<int>(offset);
  }
  key->code = code;
  key->byte_offset = byte_offset;
  if (!LoadAt(code, layout.code_filename, &key->file) ||
      !LoadAt(code, layout.code_name, &key->name) ||
      !LoadAt(code, layout.code_firstlineno, &key->first_line)) {
    return Stop("a code object cannot be read");
  }
  if (checked_left_.load(std::memory_order_relaxed) > 0) {
    checked_left_.fetch_sub(1, std::memory_order_relaxed);
  }
  return Step::kVisit;
}

bool PythonFrameReader::ReadText(const PythonFrameKey& key, PythonFrameText* text,
                                 PythonFrameView* view) const {
  if (!ReadString(key.file, text->file, sizeof text->file, &view->file) ||
      !ReadString(key.name, text->function, sizeof text->function, &view->function)) {
    Stop("a code object's names are not strings");
    return false;
  }
  const int line = runtime_.PyCode_Addr2Line(const_cast<void*>(key.code), key.byte_offset);
  view->line = line > 0 ? static_cast<uint32_t>(line) : 0;
  return true;
}

bool PythonFrameRef::Text(PythonFrameView* view) const {
  return reader_.ReadText(key_, text_, view);
}

bool PythonFrameReader::ReadString(const void* str, char* buffer, size_t capacity,
                                   std::string_view* out) const {
  const PythonLayout& layout = *runtime_.layout;
  if (!IsOfType(str, runtime_.str_type)) return false;
  ptrdiff_t length = 0;
  uint32_t state = 0;
  if (!LoadAt(str, layout.str_length, &length) || !LoadAt(str, layout.str_state, &state) ||
      length < 0) {
    return false;
  }
  // Names of code objects are compact (characters right after the header); a legacy string
  // would need its separate buffer: shown as "?" rather than followed.
  if ((state & layout.state_compact) == 0 ||
      (layout.state_ready != 0 && (state & layout.state_ready) == 0)) {
    *out = "?";
    return true;
  }
  if ((state & layout.state_ascii) != 0) {
    const size_t n = std::min(static_cast<size_t>(length), capacity);
    if (!Load(static_cast<const char*>(str) + layout.ascii_header, buffer, n)) return false;
    *out = std::string_view(buffer, n);
    return true;
  }
  // Latin-1, UCS-2 or UCS-4: loaded a slice at a time and encoded as UTF-8.
  const uint32_t kind = (state >> layout.state_kind_shift) & layout.state_kind_mask;
  if (kind != 1 && kind != 2 && kind != 4) return false;
  const char* data = static_cast<const char*>(str) + layout.compact_header;
  char* at = buffer;
  char* const end = buffer + capacity;
  uint8_t slice[256];
  const size_t per_slice = sizeof slice / kind;
  for (size_t done = 0; done < static_cast<size_t>(length);) {
    const size_t n = std::min(per_slice, static_cast<size_t>(length) - done);
    if (!Load(data + done * kind, slice, n * kind)) return false;
    for (size_t i = 0; i < n; ++i) {
      uint32_t c = 0;
      if (kind == 1) c = slice[i];
      if (kind == 2) {
        uint16_t unit = 0;
        std::memcpy(&unit, slice + 2 * i, 2);
        c = unit;
      }
      if (kind == 4) std::memcpy(&c, slice + 4 * i, 4);
      if (!AppendUtf8(c, &at, end)) {
        *out = std::string_view(buffer, static_cast<size_t>(at - buffer));
        return true;  // cut at the capacity, on a character boundary
      }
    }
    done += n;
  }
  *out = std::string_view(buffer, static_cast<size_t>(at - buffer));
  return true;
}

}  // namespace libprof
