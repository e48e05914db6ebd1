#include "analysis/rules/framework_hints.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <variant>

namespace libprof::analysis {
namespace {

// A Python file of PyTorch's package: the folder after the last site-packages/ (or
// dist-packages/) is torch/. Not any "/torch/" in the path: the H200's venv is /opt/torch/.venv,
// which made every installed package (Lightning's batch transfer, say) PyTorch's own code.
bool TorchFile(std::string_view file) {
  for (std::string_view root : {"site-packages/", "dist-packages/"}) {
    const size_t at = file.rfind(root);
    if (at != std::string_view::npos) return file.substr(at + root.size()).starts_with("torch/");
  }
  return file.find("/torch/") != std::string_view::npos;  // a source checkout
}

bool InTorch(const FindingFrame& frame) {
  if (!frame.python_file.empty()) return TorchFile(frame.python_file);
  return frame.module.starts_with("libtorch") || frame.module.starts_with("libc10");
}

constexpr const char* kReadLess =
    ", which waits for the GPU work before it: read such values every few steps, or keep them on "
    "the GPU";

// What PyTorch was doing when it waited, from its frames (PyTorch 2.11's names), as the hint's
// sentence, or "". These name the operation wherever the Python line that asked for it lies.
std::string PyTorchWait(const Finding& f, bool read_back) {
  for (const FindingFrame& frame : f.stack) {
    if (frame.python_file.ends_with("torch/_tensor_str.py")) {
      return std::string("; in PyTorch, this call formats a CUDA tensor as text (print(x), "
                         "str(x), an f-string) and so copies it to the CPU") +
             kReadLess;
    }
  }
  for (const FindingFrame& frame : f.stack) {
    if (!frame.python_file.empty()) continue;
    const std::string& fn = frame.function;
    if (fn.find("_local_scalar_dense") != std::string::npos) {
      return std::string("; in PyTorch, this call reads a number from a CUDA tensor (x.item(), "
                         "float(x), int(x), or `if x:`)") +
             kReadLess;
    }
    if (fn.find("nonzero_cuda") != std::string::npos) {
      // Boolean-mask indexing reaches it through index_Tensor's make_info (seen on the H200).
      return "; in PyTorch, this call reads back how many elements a boolean mask selects "
             "(x[mask], torch.nonzero(x), torch.where(mask), x.masked_select(mask)): an output "
             "whose size depends on the data waits for the GPU work before it; keep shapes "
             "fixed (torch.where(mask, x, 0), x * mask) or give the size "
             "(torch.nonzero_static(x, size=n))";
    }
    if (fn.find("device_synchronize") != std::string::npos ||
        fn.find("cudaSynchronize") != std::string::npos) {
      return "; in PyTorch, this call is torch.cuda.synchronize(), which waits for all the GPU's "
             "work: call it only where the host needs the results (time GPU work with "
             "torch.cuda.Event instead)";
    }
    if (read_back && fn.find("copy_kernel_cuda") != std::string::npos) {
      return std::string("; in PyTorch, this call copies a CUDA tensor to the CPU (x.cpu(), "
                         "x.to(\"cpu\"), x.tolist(), printing it)") +
             kReadLess;
    }
  }
  return "";
}

// A copy made by moving an nn.Module (Module.cuda(), .cpu(), .to(): Module._apply copies each
// parameter and buffer), as its hint, or "". Paid once when the model moves once; a model moved
// to the GPU and back at every step (.carry/s17f/torch_model_shuffle.py: 1.05 s of 1.8 s on the
// H200) copies all its weights twice a step.
std::string ModuleMove(const Finding& f) {
  const auto in_module_py = [](const FindingFrame& frame) {
    return frame.python_file.ends_with("torch/nn/modules/module.py") && InTorch(frame);
  };
  const bool applies = std::any_of(f.stack.begin(), f.stack.end(), [&](const FindingFrame& frame) {
    return in_module_py(frame) && frame.function == "Module._apply";
  });
  if (!applies) return "";
  std::string method = "Module.to()";
  for (const FindingFrame& frame : f.stack) {
    if (!in_module_py(frame)) continue;
    for (std::string_view name : {"Module.cuda", "Module.cpu", "Module.to"}) {
      if (frame.function == name) method = std::string(name) + "()";
    }
  }
  return "; in PyTorch, this is nn." + method +
         " copying the model's parameters and buffers one by one: paid once when the model "
         "moves once, but a model moved to the GPU and back in a loop (to save memory) copies "
         "all its weights every step: keep it on the GPU";
}

}  // namespace

std::string FrameworkHint(const Finding& f) {
  // A stack lists its Python frames first, then the native ones, each innermost first.
  const auto python = std::find_if(f.stack.begin(), f.stack.end(), [](const FindingFrame& frame) {
    return !frame.python_file.empty();
  });
  if (python == f.stack.end() || !std::any_of(f.stack.begin(), f.stack.end(), InTorch)) return "";
  // The program's own line called into PyTorch directly: the innermost Python frame lies outside
  // torch/ (x.cuda(), a stream's synchronize). Where the wait is not named from PyTorch's frames
  // (PyTorchWait), a wait inside PyTorch's Python code (cuDNN's algorithm search under
  // Conv2d.forward, model.cuda()'s Module._apply) is not something that line can change, and
  // gets no hint.
  const bool own_line = !InTorch(*python);
  // Emptying the allocator's cache frees its cached blocks, one cudaFree each: named from its
  // native frames wherever the Python line lies (torch.cuda.empty_cache()'s innermost is
  // torch/cuda/memory.py's; cuDNN's autotuning's, the module's forward).
  if (f.rule == RuleId::kImplicitSync) {
    std::vector<std::string_view> native;
    std::vector<PythonFrameRef> python_frames;
    for (const FindingFrame& frame : f.stack) {
      if (frame.python_file.empty()) {
        native.push_back(frame.function);
      } else {
        python_frames.push_back({frame.python_file, frame.function});
      }
    }
    const CacheEmptying emptying = WhoEmptiedCache(native, python_frames);
    if (emptying.who == CacheEmptying::Who::kProgram && !emptying.host) {
      return "; in PyTorch, this is torch.cuda.empty_cache(), which gives the caching "
             "allocator's free memory back to CUDA (each cudaFree waits for the device), so "
             "that later tensors need cudaMalloc again: call it only when another program needs "
             "the memory, not in a loop";
    }
    if (emptying.who != CacheEmptying::Who::kNone) return "; " + CacheEmptyingAdvice(emptying);
  }
  const auto* copy = std::get_if<CopyDetails>(&f.details);
  const bool copy_rule = f.rule == RuleId::kPageableAsyncMemcpy || f.rule == RuleId::kSyncMemcpy;
  if (copy_rule && copy != nullptr) {
    if (std::string moved = ModuleMove(f); !moved.empty()) return moved;
  }
  if (copy_rule && copy != nullptr && copy->copy_kind == "HtoD" && copy->src_kind == "pageable") {
    if (!own_line) return "";
    if (std::any_of(f.stack.begin(), f.stack.end(), [](const FindingFrame& frame) {
          return frame.function.find("internal_new_from_data") != std::string::npos;
        })) {
      return "; in PyTorch, this is torch.tensor(data, device=...) (or torch.as_tensor), which "
             "builds the tensor from the Python data in pageable memory and copies it at each "
             "call: make it once, before the loop, or on the GPU directly (torch.arange, "
             "torch.full, torch.linspace)";
    }
    // non_blocking=True alone changes nothing here: a program that passed it on an unpinned
    // batch (.carry/s18/nonblocking_pageable.py) waited 8.3 ms per 64 MiB copy all the same.
    return "; in PyTorch, pin the source (tensor.pin_memory(), or DataLoader(pin_memory=True)) "
           "and copy it with .to(device, non_blocking=True): non_blocking=True alone leaves a "
           "copy from unpinned memory synchronous";
  }
  const bool read_back = copy != nullptr && copy->copy_kind == "DtoH";
  if (f.rule == RuleId::kSyncApi ||
      (read_back && (copy_rule || f.rule == RuleId::kBlockedOnPriorWork))) {
    if (std::string named = PyTorchWait(f, read_back); !named.empty()) return named;
    if (!own_line) return "";
    return "; in PyTorch, .item(), .cpu(), .tolist(), printing a CUDA tensor and "
           "torch.cuda.synchronize() wait for the GPU like this: read such values every few "
           "steps, or keep them on the GPU";
  }
  return "";
}

namespace {

// Whether the process recorded Python frames and a stack module whose file name starts with one
// of `prefixes`.
bool PythonWithModule(const ProcessTrace& trace, std::initializer_list<std::string_view> prefixes) {
  const TraceRecords& r = trace.records;
  const bool python = std::any_of(r.call_stacks.begin(), r.call_stacks.end(),
                                  [](const CallStack& s) { return !s.python_frames.empty(); });
  return python &&
         std::any_of(r.stack_modules.begin(), r.stack_modules.end(), [&](const StackModule& m) {
           const std::string_view path = trace.Str(m.path_id);
           const size_t slash = path.rfind('/');
           const std::string_view file =
               path.substr(slash == std::string_view::npos ? 0 : slash + 1);
           return std::any_of(prefixes.begin(), prefixes.end(),
                              [&](std::string_view p) { return file.starts_with(p); });
         });
}

}  // namespace

bool RecordedInPyTorch(const ProcessTrace& trace) { return PythonWithModule(trace, {"libtorch"}); }

bool RecordedInJax(const ProcessTrace& trace) {
  return PythonWithModule(trace, {"xla_cuda_plugin", "xla_extension"});
}

CacheEmptying WhoEmptiedCache(std::span<const std::string_view> native_functions,
                              std::span<const PythonFrameRef> python_frames) {
  const auto empties_device = [](std::string_view function) {
    return function.find("CachingAllocator") != std::string_view::npos &&
           function.find("emptyCache") != std::string_view::npos;
  };
  const auto empties_host = [](std::string_view function) {
    return function.find("CachingHostAllocator") != std::string_view::npos &&
           function.find("empty_cache") != std::string_view::npos;
  };
  const auto empties = [&](std::string_view function) {
    return empties_device(function) || empties_host(function);
  };
  auto it = std::find_if(native_functions.begin(), native_functions.end(), empties);
  if (it == native_functions.end()) return {};
  CacheEmptying emptying;
  emptying.host = empties_host(*it);
  while (it != native_functions.end() && empties(*it)) ++it;  // (its inline wrapper too)
  emptying.who = CacheEmptying::Who::kProgram;
  if (it != native_functions.end() && it->starts_with("at::")) {
    emptying.caller = std::string(*it);
    const bool convolution = it->find("run_single_conv") != std::string_view::npos ||
                             it->find("findAlgorithm") != std::string_view::npos;
    emptying.who = convolution ? CacheEmptying::Who::kCudnnBenchmark : CacheEmptying::Who::kPyTorch;
    return emptying;
  }
  // Through the Python binding: the first Python frame past torch.cuda.empty_cache()'s own
  // (torch/cuda/memory.py) says who asked.
  for (size_t i = 0; i < python_frames.size(); ++i) {
    const PythonFrameRef& frame = python_frames[i];
    if (frame.file.ends_with("torch/cuda/memory.py") && TorchFile(frame.file)) continue;
    if (!TorchFile(frame.file)) break;  // the program's line
    emptying.caller = std::string(frame.function);
    emptying.who = CacheEmptying::Who::kPyTorch;
    if (frame.file.ends_with("torch/cuda/graphs.py")) {
      // torch.compile's CUDA graph trees record through torch.cuda.graph() too.
      const bool compiled =
          i + 1 < python_frames.size() &&
          python_frames[i + 1].file.ends_with("torch/_inductor/cudagraph_trees.py");
      emptying.who =
          compiled ? CacheEmptying::Who::kCompiledGraphs : CacheEmptying::Who::kGraphCapture;
    }
    break;
  }
  return emptying;
}

std::string CacheEmptyingAdvice(const CacheEmptying& emptying) {
  switch (emptying.who) {
    case CacheEmptying::Who::kNone:
      return "";
    case CacheEmptying::Who::kProgram:
      if (emptying.host) {
        return "the program emptied PyTorch's pinned host memory cache, giving its free memory "
               "back to CUDA, so that later pinned tensors need cudaHostAlloc again: empty it "
               "only when the memory is needed elsewhere, not in a loop";
      }
      return "PyTorch's torch.cuda.empty_cache() gave the caching allocator's free memory back "
             "to CUDA, so that later tensors need cudaMalloc again: call it only when another "
             "program needs the memory, not in a loop";
    case CacheEmptying::Who::kGraphCapture:
      return std::string("PyTorch's torch.cuda.graph() empties the ") +
             (emptying.host ? "pinned host memory cache" : "caching allocator") +
             " each time it captures a graph, giving its free memory back to CUDA, so that "
             "later tensors need " +
             (emptying.host ? "cudaHostAlloc" : "cudaMalloc") +
             " again: capture the graph once, before the loop, and call g.replay() each step";
    case CacheEmptying::Who::kCudnnBenchmark:
      return "PyTorch's cuDNN autotuning (torch.backends.cudnn.benchmark) empties the caching "
             "allocator after it searches the algorithms of each new input shape, giving its "
             "free memory back to CUDA: paid once per shape, so inputs of a few fixed shapes "
             "(padded or bucketed) pay it rarely; "
             "torch._C._cudnn_set_conv_benchmark_empty_cache(False) keeps the memory";
    case CacheEmptying::Who::kCompiledGraphs:
      return std::string(
                 "torch.compile(mode=\"reduce-overhead\") records a CUDA graph for each "
                 "new input shape through torch.cuda.graph(), which empties PyTorch's ") +
             (emptying.host ? "pinned host memory cache" : "caching allocator") +
             " each time, giving its free memory back to CUDA: keep the input shapes few (pad or "
             "bucket them) or mark the varying dimension dynamic";
    case CacheEmptying::Who::kPyTorch:
      return std::string("PyTorch emptied its ") +
             (emptying.host ? "pinned host memory cache" : "caching allocator") + " itself (in " +
             emptying.caller +
             "), giving its free memory back to CUDA, so that later tensors need " +
             (emptying.host ? "cudaHostAlloc" : "cudaMalloc") + " again";
  }
  return "";
}

namespace {

// Whether a Python frame of a recorded stack lies in a file `is` says yes to (each file once).
template <typename Predicate>
bool AnyPythonFile(const ProcessTrace& trace, Predicate is) {
  std::unordered_set<uint32_t> files;
  for (const CallStack& s : trace.records.call_stacks) {
    for (const PythonFrame& f : s.python_frames) files.insert(f.file_id);
  }
  return std::any_of(files.begin(), files.end(),
                     [&](uint32_t id) { return is(std::string_view(trace.Str(id))); });
}

}  // namespace

bool RecordedInDataParallel(const ProcessTrace& trace) {
  return AnyPythonFile(trace, [](std::string_view file) {
    return file.ends_with("torch/nn/parallel/data_parallel.py") && TorchFile(file);
  });
}

bool RecordedWithTorchCompile(const ProcessTrace& trace) {
  return AnyPythonFile(trace, [](std::string_view file) {
    return (TorchFile(file) && (file.find("torch/_inductor/") != std::string_view::npos ||
                                file.find("torch/_dynamo/") != std::string_view::npos)) ||
           file.find("/torchinductor_") != std::string_view::npos;
  });
}

std::string DataParallelHint() {
  return "; in PyTorch, nn.DataParallel replicates the model to every GPU, scatters the inputs "
         "and gathers the outputs from one Python process at every step, and its GPUs wait for "
         "that: DistributedDataParallel, one process per GPU, does none of it (PyTorch's own "
         "advice)";
}

std::string PyTorchSideStreamHint() {
  return "; in PyTorch, copy the next batch on a side stream (with torch.cuda.stream(s): "
         "x = batch.to(device, non_blocking=True), batch in pinned memory) while the default "
         "stream computes, then torch.cuda.current_stream().wait_stream(s) before using x";
}

}  // namespace libprof::analysis
