// Advice in the words of the framework a host finding's call came from, when its Python frames
// say which: the host rules' advice names CUDA's calls (cudaMallocHost, cudaMemcpyAsync), which a
// PyTorch user does not write.
//
// Layer: analysis/rules/. Only PyTorch for now: its calls come from the Python thread that waits,
// whose frames libprof records; JAX's come from XLA's own threads, which carry none.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "analysis/rules/findings.h"

namespace libprof::analysis {

// "" or a sentence to append to `f`'s explanation ("; in PyTorch, ..."), from its rule, its copy
// details and its stack (the frames of a Python file under a torch/ directory).
std::string FrameworkHint(const Finding& f);

// Whether the process ran PyTorch from Python: a PyTorch library (libtorch*) among its recorded
// stacks' modules and a Python frame in one of its stacks (a C++ program on LibTorch has no
// torch.cuda to call). The pattern rules, whose findings have no stack, ask it of the process.
bool RecordedInPyTorch(const ProcessTrace& trace);
// Whether the process is JAX's: Python frames, and a stack module of XLA's (xla_cuda_plugin.so,
// xla_extension.so).
bool RecordedInJax(const ProcessTrace& trace);

// Who emptied one of PyTorch's caching allocators (NativeCachingAllocator::emptyCache frees the
// device cache's blocks, one cudaFree each; CachingHostAllocatorImpl::empty_cache the pinned
// host cache's, one cudaFreeHost each) in a stack whose native functions and Python frames
// are given innermost first: told by the frame that called it. The program
// (torch.cuda.empty_cache(), through its Python binding, or its own C++), cuDNN's autotuning
// (PyTorch's convolution empties the cache after searching a new shape's algorithms under
// torch.backends.cudnn.benchmark: Conv_v8.cpp's run_single_conv, Conv_v7.cpp's findAlgorithm),
// torch.cuda.graph() (its __enter__ empties both caches before each capture: PyTorch 2.11's
// torch/cuda/graphs.py), torch.compile's CUDA graph trees recording through it (a graph per new
// input shape: torch/_inductor/cudagraph_trees.py below it), or other PyTorch code, native or
// Python (`caller` names it).
struct CacheEmptying {
  enum class Who { kNone, kProgram, kCudnnBenchmark, kGraphCapture, kCompiledGraphs, kPyTorch };
  Who who = Who::kNone;
  bool host = false;   // the pinned host memory cache
  std::string caller;  // the calling frame's function
};
// A Python frame of a stack, as WhoEmptiedCache reads it.
struct PythonFrameRef {
  std::string_view file;
  std::string_view function;
};
CacheEmptying WhoEmptiedCache(std::span<const std::string_view> native_functions,
                              std::span<const PythonFrameRef> python_frames);
// The advice for a cudaFree of that emptying (the host and pattern rules name it), starting
// "PyTorch": why the memory went back to CUDA and what keeps it; "" for kNone.
std::string CacheEmptyingAdvice(const CacheEmptying& emptying);

// Whether a recorded stack runs PyTorch's nn.DataParallel (a Python frame in torch/nn/parallel/
// data_parallel.py), and the GPU rules' advice for its host-bound steps, starting "; ".
bool RecordedInDataParallel(const ProcessTrace& trace);
// Whether a recorded stack runs torch.compile's code: its compiler (torch/_dynamo/, torch/
// _inductor/) or the code Inductor generated (a torchinductor_ cache folder).
bool RecordedWithTorchCompile(const ProcessTrace& trace);
std::string DataParallelHint();

// no-overlap-default-stream's advice in PyTorch's terms, to append to its explanation.
std::string PyTorchSideStreamHint();

}  // namespace libprof::analysis
