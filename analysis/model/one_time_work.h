// Work a library does once per compiled graph, shape or key, told from a call's stack: an
// autotuner timing candidate kernels (XLA's, cuDNN's benchmark search, TorchInductor's
// max-autotune, @triton.autotune, PyTorch's TunableOp), torch.compile compiling a graph, or a
// CUDA library setting up a plan or handle (cuFFT, cuBLAS, cuDNN...). Their waits are not the
// steady state's: each candidate is synchronised on purpose, thousands of times in a JAX
// program's first steps (a 200-step JAX MLP on an H200: all 1,699 of its host findings lay inside
// xla::Autotuner::GetTunedConfig), and the program's own code is not where to fix them.
//
// Layer: analysis/model/. Reads call_sites.h's frames only; pure computation.
//
// The rules, from the frames PyTorch 2.11, Triton 3.6 and the JAX of the lent H200 recorded
// (2026-11-29):
// - XLA's autotuning: a native frame in namespace xla:: whose function names an Autotuner or an
//   AlgorithmPicker (xla::Autotuner::GetTunedConfig, xla::gpu::GemmFusionAutotunerImpl::...,
//   xla::gpu::GpuConvAlgorithmPicker::...).
// - cuDNN's algorithm search: a native frame of cudnn_frontend::time_sorted_plan (cuDNN's
//   frontend timing plans, PyTorch's torch.backends.cudnn.benchmark) or of cuDNN's
//   cudnnFind*Algorithm* entry points.
// - TorchInductor's autotuning: a Python frame of torch/_inductor/select_algorithm.py,
//   autotune_process.py, runtime/benchmarking.py or runtime/coordinate_descent_tuner.py, or a
//   method of torch/_inductor/runtime/triton_heuristics.py whose name says bench, autotune or
//   tuning (CachingAutotuner.run, the launch path of every compiled kernel, does not): at compile
//   time with mode="max-autotune", and at the first run of a kernel with several configs
//   (CachingAutotuner.autotune_to_one_config) in every mode.
// - Triton's autotuning: a Python frame of triton/runtime/autotuner.py's benchmarking methods
//   (Autotuner._bench, Autotuner.run.<locals>.benchmark), which time each config through
//   triton.testing.do_bench (do_bench called by a program's own benchmark is not one-time work).
// - PyTorch's TunableOp tuning (PYTORCH_TUNABLEOP_ENABLED=1): a native frame of
//   at::cuda::tunable::TunableOp<...>::FindFastest, which times each candidate GEMM solution the
//   first time a shape is seen (TunableOp::operator() alone is how every tuned GEMM runs).
// - torch.compile's compilation: a Python frame of TorchDynamo's frame conversion
//   (torch/_dynamo/convert_frame.py), AOTAutograd's graph compilation
//   (torch/_functorch/_aot_autograd/graph_compile.py) or Inductor's lowering and code generation
//   (torch/_inductor/graph.py, scheduler.py, fx_passes/).
// - A CUDA library's set-up: a native frame of cuFFT's plan creation (cufftPlan*,
//   cufftMakePlan*, cufftXtMakePlan*: torch.fft's first call on a shape built a plan whose
//   18.45 ms pageable upload of its tables was a sync-memcpy finding) or of a handle's creation
//   (cublasCreate_v2, cublasLtCreate, cudnnCreate, cusparseCreate, cusolverDnCreate).
// The autotuners are looked for first (they run inside compilation), TorchInductor's before
// Triton's (Inductor benchmarks through Triton); only the recorded frames are seen
// (LIBPROF_BACKTRACE_DEPTH), so a wait deep below its tuner may go unrecognised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace libprof::analysis {

struct FrameView;  // call_sites.h, which includes this header for CallSite::one_time

enum class OneTimeWork : uint8_t {
  kNone,
  kXlaAutotuning,
  kCudnnSearch,
  kInductorAutotuning,
  kTritonAutotuning,
  kTorchCompile,
  kTunableOp,
  kLibrarySetUp,
};
inline constexpr size_t kOneTimeWorkKinds = 8;

// Which one-time work the stack (CallSites::Frames, innermost first) lies in; kNone if none.
OneTimeWork OneTimeWorkOf(const std::vector<FrameView>& frames);

// A kind's bit in a set of kinds (FindingsTotals::one_time_kinds); 0 for kNone.
inline uint32_t OneTimeWorkBit(OneTimeWork work) {
  return work == OneTimeWork::kNone ? 0 : uint32_t{1} << static_cast<uint32_t>(work);
}

// "xla-autotuning", "cudnn-search", "inductor-autotuning", "triton-autotuning", "torch-compile",
// "tunableop", "library-setup" (JSON, CSV, partials); "" for kNone. FromId: the kind of an id,
// kNone for "" or unknown ones.
std::string_view OneTimeWorkId(OneTimeWork work);
OneTimeWork OneTimeWorkFromId(std::string_view id);
// "XLA's autotuning", "cuDNN's algorithm search", ... for prose and table labels.
std::string_view OneTimeWorkName(OneTimeWork work);
// The names of a set of kinds (OneTimeWorkBit's), in OneTimeWork's order, joined by " and ".
std::string OneTimeWorkNames(uint32_t kinds);
// The sentence appended to a finding inside it: what the work is, when it is paid again and how
// to avoid paying it, starting "; inside ...".
std::string_view OneTimeWorkNote(OneTimeWork work);

}  // namespace libprof::analysis
