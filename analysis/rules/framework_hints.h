// Advice in the words of the framework a host finding's call came from, when its Python frames
// say which: the host rules' advice names CUDA's calls (cudaMallocHost, cudaMemcpyAsync), which a
// PyTorch user does not write.
//
// Layer: analysis/rules/. Only PyTorch for now: its calls come from the Python thread that waits,
// whose frames libprof records; JAX's come from XLA's own threads, which carry none.
#pragma once

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

// Whether a native frame's function is PyTorch's torch.cuda.empty_cache()
// (NativeCachingAllocator::emptyCache): it frees the caching allocator's blocks, one cudaFree
// each, which the host and pattern rules then name.
bool IsEmptyCacheFunction(std::string_view function);

// no-overlap-default-stream's advice in PyTorch's terms, to append to its explanation.
std::string PyTorchSideStreamHint();

}  // namespace libprof::analysis
