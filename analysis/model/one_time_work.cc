#include "analysis/model/one_time_work.h"

#include <array>
#include <utility>

#include "analysis/model/call_sites.h"

namespace libprof::analysis {
namespace {

struct Kind {
  OneTimeWork work;
  std::string_view id, name, note;
};
constexpr std::array<Kind, kOneTimeWorkKinds> kKinds = {{
    {OneTimeWork::kNone, "", "", ""},
    {OneTimeWork::kXlaAutotuning, "xla-autotuning", "XLA's autotuning",
     "; inside XLA's autotuning, which times candidate kernels while it compiles a jitted "
     "function: paid once per compilation, and again for each new input shape (which "
     "recompiles); JAX's persistent compilation cache (jax.config.update("
     "\"jax_compilation_cache_dir\", DIR)) skips it in later runs, and "
     "XLA_FLAGS=--xla_gpu_autotune_level=0 turns it off at some cost in kernel speed"},
    {OneTimeWork::kCudnnSearch, "cudnn-search", "cuDNN's algorithm search",
     "; inside cuDNN's algorithm search (in PyTorch, torch.backends.cudnn.benchmark = True), "
     "which times candidate algorithms for each new input shape: paid once per shape; if it "
     "recurs through the run, the shapes keep changing (keep them fixed, pad or bucket them, or "
     "set torch.backends.cudnn.benchmark = False)"},
    {OneTimeWork::kInductorAutotuning, "inductor-autotuning", "TorchInductor's autotuning",
     "; inside TorchInductor's autotuning, which times candidate kernels (while it compiles, with "
     "torch.compile's mode=\"max-autotune\") or a kernel's configs (at its first run): paid once "
     "per compiled graph and shape; Inductor's on-disk cache (TORCHINDUCTOR_CACHE_DIR) skips it "
     "in later runs"},
    {OneTimeWork::kTritonAutotuning, "triton-autotuning", "Triton's autotuning",
     "; inside Triton's autotuning (@triton.autotune), which times every config once per new "
     "value of the key arguments: paid once per key; if it recurs through the run, the key "
     "keeps changing (keep its arguments steady, or give the kernel one config)"},
    {OneTimeWork::kTorchCompile, "torch-compile", "torch.compile's compilation",
     "; inside torch.compile's compilation (TorchDynamo, AOTAutograd, TorchInductor): paid once "
     "per compiled graph, and again on each recompilation (TORCH_LOGS=recompiles says why one "
     "happens)"},
    {OneTimeWork::kTunableOp, "tunableop", "PyTorch's TunableOp tuning",
     "; inside PyTorch's TunableOp tuning (PYTORCH_TUNABLEOP_ENABLED=1), which times candidate "
     "GEMM solutions the first time it sees each shape: paid once per shape and process; with "
     "the results file it wrote (PYTORCH_TUNABLEOP_FILENAME) and PYTORCH_TUNABLEOP_TUNING=0, "
     "later runs skip it"},
    {OneTimeWork::kLibrarySetUp, "library-setup", "a CUDA library's set-up",
     "; inside a CUDA library's set-up (a cuFFT plan, a cuBLAS, cuDNN, cuSPARSE or cuSOLVER "
     "handle, or an NCCL communicator's connections), which uploads its tables or allocates its "
     "workspace: paid once per plan or handle; if it recurs through the run, the program makes "
     "them again (create them once and "
     "reuse them; PyTorch caches cuFFT plans per shape, torch.backends.cuda.cufft_plan_cache)"},
}};

const Kind& KindOf(OneTimeWork work) { return kKinds[static_cast<size_t>(work)]; }

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Whether a Python file's path is `suffix` ("torch/_inductor/graph.py") or ends in "/" + suffix,
// so that "mytorch/_inductor/graph.py" is not taken for PyTorch's.
bool PathIs(std::string_view file, std::string_view suffix) {
  if (!file.ends_with(suffix)) return false;
  return file.size() == suffix.size() || file[file.size() - suffix.size() - 1] == '/';
}
// Whether a Python file lies under `dir` ("torch/_inductor/fx_passes/") at a folder boundary.
bool PathUnder(std::string_view file, std::string_view dir) {
  const size_t at = file.find(dir);
  return at != std::string_view::npos && (at == 0 || file[at - 1] == '/');
}

// A qualified Python name's last part: "Autotuner.run.<locals>.benchmark" -> "benchmark".
std::string_view Method(std::string_view qualified) {
  const size_t dot = qualified.rfind('.');
  return dot == std::string_view::npos ? qualified : qualified.substr(dot + 1);
}

bool IsXlaAutotuning(const FrameView& f) {
  return !f.python && Contains(f.function, "xla::") &&
         (Contains(f.function, "Autotuner") || Contains(f.function, "AlgorithmPicker"));
}

bool IsCudnnSearch(const FrameView& f) {
  return !f.python && (Contains(f.function, "cudnn_frontend::time_sorted_plan") ||
                       (f.function.starts_with("cudnnFind") && Contains(f.function, "Algorithm")));
}

bool IsInductorAutotuning(const FrameView& f) {
  if (!f.python) return false;
  if (PathIs(f.file, "torch/_inductor/select_algorithm.py") ||
      PathIs(f.file, "torch/_inductor/autotune_process.py") ||
      PathIs(f.file, "torch/_inductor/runtime/benchmarking.py") ||
      PathIs(f.file, "torch/_inductor/runtime/coordinate_descent_tuner.py")) {
    return true;
  }
  if (!PathIs(f.file, "torch/_inductor/runtime/triton_heuristics.py")) return false;
  const std::string_view method = Method(f.function);
  return Contains(method, "bench") || Contains(method, "autotune") || Contains(method, "tuning");
}

// Only the autotuner's own benchmarking: triton.testing.do_bench called by a program's benchmark
// script is the measurement it asked for, not one-time work.
bool IsTritonAutotuning(const FrameView& f) {
  return f.python && PathIs(f.file, "triton/runtime/autotuner.py") &&
         Contains(Method(f.function), "bench");
}

bool IsTunableOpTuning(const FrameView& f) {
  return !f.python && Contains(f.function, "at::cuda::tunable::TunableOp<") &&
         Contains(f.function, "::FindFastest");
}

bool IsLibrarySetUp(const FrameView& f) {
  if (f.python) return false;
  for (std::string_view plan : {"cufftPlan", "cufftMakePlan", "cufftXtMakePlan"}) {
    if (f.function.starts_with(plan)) return true;
  }
  for (std::string_view handle : {"cublasCreate_v2", "cublasLtCreate", "cudnnCreate",
                                  "cusparseCreate", "cusolverDnCreate"}) {
    if (f.function == handle) return true;
  }
  // NCCL sets a communicator up on its own threads: its ranks (ncclCommInitRankFunc) and the
  // connections of each algorithm at its first collective (ncclCollPreconnectFunc), copying
  // its tables to the device from pageable memory (.carry/s17b/dataparallel.py on the H200).
  for (std::string_view nccl :
       {"ncclCommInitRankFunc(", "ncclCollPreconnectFunc(", "ncclTransportP2pSetup("}) {
    if (f.function.starts_with(nccl)) return true;  // (C++: demangled with parameters)
  }
  return false;
}

// Compiling, and recording the CUDA graphs of mode="reduce-overhead" (once per shape: its
// torch.cuda.synchronize() in record_function, .carry/s19/pt_compile_graphs.py on the H200).
bool IsTorchCompile(const FrameView& f) {
  return f.python && (PathIs(f.file, "torch/_dynamo/convert_frame.py") ||
                      PathIs(f.file, "torch/_functorch/_aot_autograd/graph_compile.py") ||
                      PathIs(f.file, "torch/_inductor/graph.py") ||
                      PathIs(f.file, "torch/_inductor/scheduler.py") ||
                      PathUnder(f.file, "torch/_inductor/fx_passes/") ||
                      (PathIs(f.file, "torch/_inductor/cudagraph_trees.py") &&
                       f.function == "CUDAGraphTreeManager.record_function"));
}

}  // namespace

OneTimeWork OneTimeWorkOf(const std::vector<FrameView>& frames) {
  // In order of precedence: a tuner inside another's frames (Inductor benchmarking through
  // Triton's do_bench, any tuner inside torch.compile) is named by the more specific one.
  constexpr std::array<std::pair<OneTimeWork, bool (*)(const FrameView&)>, 7> kTests = {{
      {OneTimeWork::kInductorAutotuning, IsInductorAutotuning},
      {OneTimeWork::kTritonAutotuning, IsTritonAutotuning},
      {OneTimeWork::kXlaAutotuning, IsXlaAutotuning},
      {OneTimeWork::kCudnnSearch, IsCudnnSearch},
      {OneTimeWork::kTunableOp, IsTunableOpTuning},
      {OneTimeWork::kLibrarySetUp, IsLibrarySetUp},
      {OneTimeWork::kTorchCompile, IsTorchCompile},
  }};
  for (const auto& [work, test] : kTests) {
    for (const FrameView& f : frames) {
      if (test(f)) return work;
    }
  }
  return OneTimeWork::kNone;
}

std::string_view OneTimeWorkId(OneTimeWork work) { return KindOf(work).id; }

OneTimeWork OneTimeWorkFromId(std::string_view id) {
  for (const Kind& k : kKinds) {
    if (k.id == id) return k.work;  // ("" is kNone's)
  }
  return OneTimeWork::kNone;
}

std::string_view OneTimeWorkName(OneTimeWork work) { return KindOf(work).name; }

std::string OneTimeWorkNames(uint32_t kinds) {
  std::string names;
  for (size_t k = 1; k < kOneTimeWorkKinds; ++k) {
    const auto work = static_cast<OneTimeWork>(k);
    if ((kinds & OneTimeWorkBit(work)) == 0) continue;
    if (!names.empty()) names += " and ";
    names += OneTimeWorkName(work);
  }
  return names;
}

std::string_view OneTimeWorkNote(OneTimeWork work) { return KindOf(work).note; }

}  // namespace libprof::analysis
