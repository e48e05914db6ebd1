#include "analysis/model/call_sites.h"

#include <cctype>
#include <cstdio>

namespace libprof::analysis {
namespace {

// File-name prefixes of CUDA's own libraries: toolkit, math libraries, communication, driver.
constexpr std::string_view kCudaLibraryPrefixes[] = {
    "libcuda.so",  "libcudart",   "libcublas", "libcudnn",   "libcufft",     "libcurand",
    "libcusparse", "libcusolver", "libnccl",   "libnvrtc",   "libnvJitLink", "libnvidia-",
    "libcupti",    "libcutensor", "libnvjpeg", "libnpp",     "libcufile",    "libnvblas",
    "libcudla",    "libnvptxcompiler", "libprof.so",
};

// The CUDA runtime and driver themselves: a call through them is no library's doing.
bool IsRuntimeOrDriver(std::string_view file_name) {
  return file_name.rfind("libcudart", 0) == 0 || file_name.rfind("libcuda.so", 0) == 0;
}

std::string FileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// The call site among the Python frames: the innermost that is not framework code, else the
// innermost; nullptr when there are none.
// A frame of libc's that starts a thread (start_thread, clone3; unnamed where libc has no
// symbols for them).
bool IsThreadStart(const FrameView& frame) {
  const std::string_view module = frame.module;
  if (!module.starts_with("libc.so") && !module.starts_with("libpthread")) return false;
  return frame.function.empty() || frame.function == "start_thread" ||
         frame.function.starts_with("clone");
}

const FrameView* PythonCaller(const std::vector<FrameView>& frames) {
  const FrameView* innermost = nullptr;
  for (const FrameView& frame : frames) {
    if (!frame.python) break;  // Python frames come first
    if (!frame.framework) return &frame;
    if (innermost == nullptr) innermost = &frame;
  }
  return innermost;
}

CallSite Resolve(const std::vector<FrameView>& frames) {
  CallSite site;
  site.known = true;
  const FrameView* through = nullptr;
  const FrameView* python = PythonCaller(frames);
  if (python != nullptr) {
    site.caller = python->Label();
    site.caller_module = python->file;
    site.caller_line = python->line > 0;
    site.caller_frame = static_cast<size_t>(python - frames.data());
  }
  for (const FrameView& frame : frames) {
    if (frame.python) continue;
    if (!frame.cuda) {
      // A library's own thread (NCCL's, cuFFT's callbacks): past its frames only the thread's
      // start in libc, which says nothing; the library's innermost-but-last frame is the site.
      if (python == nullptr && through != nullptr && IsThreadStart(frame) &&
          !IsRuntimeOrDriver(through->module)) {
        site.caller = through->Label();
        site.caller_module = through->module;
        site.caller_frame = static_cast<size_t>(through - frames.data());
        return site;
      }
      if (python == nullptr) {
        site.caller = frame.Label();
        site.caller_module = frame.module;
        site.caller_frame = static_cast<size_t>(&frame - frames.data());
      }
      break;
    }
    through = &frame;
  }
  if (through != nullptr && IsCudaLibrary(through->module) && !IsRuntimeOrDriver(through->module)) {
    site.through = through->Label();
    site.through_module = through->module;
  }
  return site;
}

const CallSite& Unknown() {
  static const CallSite* unknown = new CallSite;
  return *unknown;
}

const std::vector<FrameView>& NoFrames() {
  static const auto* none = new std::vector<FrameView>;
  return *none;
}

}  // namespace

std::vector<std::string> CallSiteRule::DefaultFrameworkPaths() {
  // Installed packages (pip, conda, Debian) and Python's own library (/usr/lib/python3.12/,
  // a venv's lib/python3.12/), and modules frozen into the interpreter ("<frozen runpy>").
  return {"/site-packages/", "/dist-packages/", "/lib/python3", "<frozen "};
}

std::string CallSiteRule::PackagePath(std::string_view python_file) const {
  // The framework part that ends last: ".../lib/python3.12/site-packages/" is a package folder
  // inside Python's library folder.
  size_t rest = std::string_view::npos;
  const std::string* matched = nullptr;
  for (const std::string& part : framework_paths) {
    const size_t at = part.empty() ? std::string_view::npos : python_file.rfind(part);
    if (at != std::string_view::npos && (rest == std::string_view::npos || at + part.size() > rest)) {
      rest = at + part.size();
      matched = &part;
    }
  }
  if (matched == nullptr) return "";
  std::string_view path = python_file.substr(rest);
  if (matched->back() != '/') {  // "/lib/python3" ends inside "python3.12/"; "<frozen " names one
    const size_t slash = path.find('/');
    if (slash == std::string_view::npos) return std::string(python_file);
    path.remove_prefix(slash + 1);
  }
  return path.empty() ? std::string(python_file) : std::string(path);
}

bool IsCudaLibrary(std::string_view file_name) {
  for (std::string_view prefix : kCudaLibraryPrefixes) {
    if (file_name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool IsCudaRuntimeFunction(std::string_view f) {
  // nvcc's launch stubs (__device_stub__Z10SpinKernelm) are generated code around the runtime.
  if (f.rfind("cudart::", 0) == 0 || f.rfind("__cudart", 0) == 0 ||
      f.rfind("__device_stub__", 0) == 0) {
    return true;
  }
  return f.size() > 4 && f.rfind("cuda", 0) == 0 && std::isupper(static_cast<unsigned char>(f[4]));
}

std::string ShortFunctionName(std::string_view f) {
  std::string name(f);
  // GCC's clones: "Foo(int) [clone .isra.0]".
  if (size_t clone = name.find(" [clone "); clone != std::string::npos) name.resize(clone);
  for (std::string_view qualifier : {" const", " volatile", " &&", " &"}) {
    if (name.size() > qualifier.size() && name.ends_with(qualifier)) {
      name.resize(name.size() - qualifier.size());
    }
  }
  // Parameters: from the '(' that matches the final ')'.
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        if (i > 0) name.resize(i);
        break;
      }
    }
  }
  constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  for (size_t at; (at = name.find(kAnonymous)) != std::string::npos;) {
    name.erase(at, kAnonymous.size());
  }
  return name;
}

std::string FrameView::Label() const {
  if (python) {
    return (package_path.empty() ? FileName(file) : package_path) +
           (line > 0 ? ":" + std::to_string(line) : "") + " in " +
           (function.empty() ? "?" : function);
  }
  const std::string where = module.empty() ? "?" : module;
  if (function.empty()) return Hex(module_path.empty() ? address : module_offset) + " (" + where + ")";
  return ShortFunctionName(function) + " (" + where + ")";
}

std::string CallSite::Text() const {
  if (!known) return "";
  std::string text = through;
  if (!caller.empty()) text += (text.empty() ? "" : " ← ") + caller;
  return text.empty() ? "CUDA's own code" : text;
}

std::string CallSite::Chain(const std::string& api) const {
  return known ? api + " ← " + Text() : "";
}

namespace {

// The frames of a trace's call stacks, each stack's built when asked for (a frame's view once).
class StackFrames {
 public:
  StackFrames(const ProcessTrace& trace, const CallSiteRule& rule) : trace_(trace), rule_(rule) {
    const TraceRecords& r = trace.records;
    for (const StackModule& m : r.stack_modules) modules_[m.id] = &m;
    for (const StackFrame& f : r.stack_frames) frames_[f.id] = &f;
  }

  // Innermost first: the Python frames, then the native ones.
  std::vector<FrameView> Of(const CallStack& s) {
    std::vector<FrameView> list;
    for (const PythonFrame& p : s.python_frames) {
      FrameView view;
      view.python = true;
      view.file = trace_.Str(p.file_id);
      view.line = p.line;
      view.function = trace_.Str(p.function_id);
      view.package_path = rule_.PackagePath(view.file);
      view.framework = !view.package_path.empty();
      list.push_back(std::move(view));
    }
    for (uint32_t id : s.frame_ids) list.push_back(Native(id));
    return list;
  }

 private:
  const FrameView& Native(uint32_t id) {
    auto [it, added] = views_.try_emplace(id);
    FrameView& view = it->second;
    if (!added) return view;
    auto f = frames_.find(id);
    if (f == frames_.end()) {
      view.module = "?";
      return view;
    }
    view.function = trace_.Str(f->second->function_id);
    view.address = f->second->address;
    view.module_offset = f->second->module_offset;
    if (auto m = modules_.find(f->second->module_id); m != modules_.end()) {
      view.module_path = trace_.Str(m->second->path_id);
      view.module = m->second->executable ? "app" : FileName(view.module_path);
      view.build_id = m->second->build_id;
    }
    view.cuda = IsCudaLibrary(FileName(view.module_path)) || IsCudaRuntimeFunction(view.function);
    return view;
  }

  const ProcessTrace& trace_;
  const CallSiteRule& rule_;
  std::unordered_map<uint32_t, const StackModule*> modules_;
  std::unordered_map<uint32_t, const StackFrame*> frames_;
  std::unordered_map<uint32_t, FrameView> views_;
};

}  // namespace

CallSites::CallSites(const ProcessTrace& trace, const CallSiteRule& rule) {
  const TraceRecords& r = trace.records;
  if (r.call_stacks.empty()) return;
  StackFrames frames(trace, rule);
  for (const CallStack& s : r.call_stacks) {
    std::vector<FrameView>& list = stacks_[s.id] = frames.Of(s);
    CallSite& site = sites_[s.id] = Resolve(list);
    site.one_time = OneTimeWorkOf(list);
  }
}

std::vector<FrameView> FramesOfStack(const ProcessTrace& trace, uint32_t stack_id) {
  if (stack_id == 0) return {};
  for (const CallStack& s : trace.records.call_stacks) {
    if (s.id != stack_id) continue;
    const CallSiteRule rule;
    return StackFrames(trace, rule).Of(s);
  }
  return {};
}

std::unordered_map<uint32_t, OneTimeWork> OneTimeWorkOfStacks(
    const ProcessTrace& trace, const std::unordered_set<uint32_t>& stack_ids) {
  std::unordered_map<uint32_t, OneTimeWork> out;
  if (stack_ids.empty()) return out;
  const CallSiteRule rule;  // (one-time work is told by paths, not by what counts as framework)
  StackFrames frames(trace, rule);
  for (const CallStack& s : trace.records.call_stacks) {
    if (stack_ids.contains(s.id)) out[s.id] = OneTimeWorkOf(frames.Of(s));
  }
  return out;
}

const CallSite& CallSites::Of(uint32_t stack_id) const {
  auto it = sites_.find(stack_id);
  return it == sites_.end() ? Unknown() : it->second;
}

const std::vector<FrameView>& CallSites::Frames(uint32_t stack_id) const {
  auto it = stacks_.find(stack_id);
  return it == stacks_.end() ? NoFrames() : it->second;
}

}  // namespace libprof::analysis
