// Where API calls came from: the call stacks libprof recorded (LIBPROF_BACKTRACE), resolved into
// readable frames and a call site, the first frame outside CUDA's own libraries and the
// profiler, with the CUDA library the call came through:
//   cudaMemcpyAsync ← cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)
//
// Layer: analysis/model/. Built once per ProcessTrace; pure computation.
//
// Rules (also in USAGE.md):
// - CUDA's own frames: frames in CUDA's libraries (IsCudaLibrary: libcuda, libcudart, libcublas*,
//   libcudnn*, libcufft*, libcurand, libcusparse*, libcusolver*, libnccl, libnvrtc, libnvJitLink,
//   libnvidia-*, libcupti, ...), and frames of the CUDA runtime linked statically into another
//   module (functions named cuda[A-Z]..., cudart::..., __cudart..., and nvcc's launch stubs
//   __device_stub__...). libprof's own frames count
//   as CUDA's too (they never reach a trace, which starts below them).
// - Python frames (recorded when the calling thread ran CPython) come before
//   the native frames, innermost first: the native frames run below (inside) them.
// - Framework code: Python frames whose file path contains one of CallSiteRule's
//   framework_paths (by default site-packages, dist-packages, Python's own library and frozen
//   modules: torch, cupy, jax, numba... and the standard library).
// - Call site: in a stack with Python frames, the innermost Python frame that is not framework
//   code (else the innermost Python frame); otherwise, walking outwards from the innermost
//   native frame, the first frame that is not CUDA's.
// - Through: the outermost CUDA frame before the call site, when it lies in a CUDA library
//   other than the runtime and the driver (cuBLAS, cuDNN, NCCL...): the library entry point the
//   application called.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/model/one_time_work.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

// Which frames count as the user's when naming a call site (profview --framework-path).
struct CallSiteRule {
  // A Python frame whose file path contains one of these is framework code.
  std::vector<std::string> framework_paths = DefaultFrameworkPaths();
  // A framework file's path from the folder its package lies in, to name it by:
  // "torch/cuda/__init__.py" for ".../site-packages/torch/cuda/__init__.py", "json/decoder.py"
  // for "/usr/lib/python3.12/json/decoder.py", "<frozen runpy>" whole. "" exactly when the file
  // is not framework code.
  std::string PackagePath(std::string_view python_file) const;
  static std::vector<std::string> DefaultFrameworkPaths();
};

struct FrameView {
  // A Python frame: `function` is its qualified name, `file` and `line` where it was; the
  // module fields are empty.
  bool python = false;
  std::string file;
  uint32_t line = 0;
  bool framework = false;  // a Python frame of framework code (CallSiteRule)
  std::string package_path;  // a framework frame's file from its package's folder (PackagePath)
  std::string function;     // demangled; "" when unknown
  std::string module_path;  // "" when no module contains the address
  std::string module;       // "app" for the program, else the module's file name
  std::string build_id;
  uint64_t module_offset = 0;
  uint64_t address = 0;
  bool cuda = false;  // one of CUDA's own frames (see above)
  // "cublasSnrm2_v2 (libcublas.so.13)": the function without its parameters and anonymous
  // namespaces (or the offset when unnamed), and the module. A Python frame:
  // "train.py:12 in step" (the file's name, not its directory); a framework frame by its
  // package path, "torch/cuda/__init__.py:1162 in synchronize", since its bare name
  // (__init__.py) could be any package's.
  std::string Label() const;
};

struct CallSite {
  bool known = false;  // the call has a recorded stack
  std::string caller;   // Label() of the call-site frame; "" when every frame is CUDA's
  std::string through;  // Label() of the CUDA library entry point; "" when none
  std::string caller_module;  // a Python call site: its file's path
  std::string through_module;
  // The call-site frame names a line of source (a Python frame with its line): unlike a native
  // function, which may wait at several places, it says where the call is.
  bool caller_line = false;
  // The call-site frame's index in CallSites::Frames(); npos when every frame is CUDA's.
  size_t caller_frame = std::string::npos;
  // The one-time work (an autotuner, torch.compile) the stack lies in (one_time_work.h).
  OneTimeWork one_time = OneTimeWork::kNone;
  // "cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)"; "" when not known.
  std::string Text() const;
  // "cudaMemcpyAsync ← " + Text(); "" when not known.
  std::string Chain(const std::string& api) const;
};

class CallSites {
 public:
  explicit CallSites(const ProcessTrace& trace, const CallSiteRule& rule = CallSiteRule{});

  bool empty() const { return stacks_.empty(); }
  // The call site of stack `stack_id` (ApiCall::stack_id); not known for 0 or an undefined id.
  const CallSite& Of(uint32_t stack_id) const;
  // The frames of stack `stack_id`, innermost first (Python frames, then native ones); empty
  // when not known.
  const std::vector<FrameView>& Frames(uint32_t stack_id) const;

 private:
  std::unordered_map<uint32_t, std::vector<FrameView>> stacks_;
  std::unordered_map<uint32_t, CallSite> sites_;
};

// The frames of one stack, as CallSites::Frames gives them, without resolving the other stacks;
// empty for 0 or an undefined id.
std::vector<FrameView> FramesOfStack(const ProcessTrace& trace, uint32_t stack_id);

// The one-time work of each of `stack_ids` that the trace defines (CallSite::one_time, without
// resolving the other stacks): for a reader that needs only that, window after window.
std::unordered_map<uint32_t, OneTimeWork> OneTimeWorkOfStacks(
    const ProcessTrace& trace, const std::unordered_set<uint32_t>& stack_ids);

// True for the file name of one of CUDA's own libraries ("libcublas.so.13", "libcuda.so.1").
bool IsCudaLibrary(std::string_view file_name);
// True for a function of the CUDA runtime or driver API wherever it is linked
// ("cudaMemcpyAsync", "cudart::cudaApiMemcpyAsync(...)", "__cudart812").
bool IsCudaRuntimeFunction(std::string_view function);
// "NormalizeLoop(float*, int)" -> "NormalizeLoop"; "(anonymous namespace)::" removed.
std::string ShortFunctionName(std::string_view function);

}  // namespace libprof::analysis
