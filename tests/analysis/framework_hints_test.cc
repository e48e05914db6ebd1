// Proves PyTorch's words are added to a host finding only when the program's own Python line
// called into PyTorch (the innermost Python frame outside torch/, a PyTorch library on the
// stack), and only for the rules they fit.
#include "analysis/rules/framework_hints.h"

#include <gtest/gtest.h>

namespace libprof::analysis {
namespace {

FindingFrame Python(const std::string& file) {
  FindingFrame f;
  f.function = "f";
  f.python_file = file;
  f.line = 1;
  return f;
}

FindingFrame Native(const std::string& module, const std::string& function = "g") {
  FindingFrame f;
  f.function = function;
  f.module = module;
  return f;
}

Finding Copy(RuleId rule, const char* kind, const char* src, std::vector<FindingFrame> stack) {
  Finding f;
  f.rule = rule;
  f.api = "cudaMemcpyAsync";
  CopyDetails d;
  d.copy_kind = kind;
  d.src_kind = src;
  d.dst_kind = kind == std::string("HtoD") ? "device" : "pageable";
  f.details = d;
  f.stack = std::move(stack);
  return f;
}

// A stack as libprof records it for `x.item()` in train.py: Python frames first, then the native
// ones, each innermost first.
std::vector<FindingFrame> ItemStack() {
  return {Python("/home/me/train.py"), Native("libcudart.so.13"), Native("libtorch_cuda.so"),
          Native("libtorch_python.so")};
}

TEST(FrameworkHintsTest, WaitsFromTheProgramsOwnLineGetPyTorchsWords) {
  Finding sync;
  sync.rule = RuleId::kSyncApi;
  sync.api = "cudaStreamSynchronize";
  sync.stack = ItemStack();
  EXPECT_NE(FrameworkHint(sync).find(".item(), .cpu(), .tolist()"), std::string::npos);
  const Finding read_back = Copy(RuleId::kBlockedOnPriorWork, "DtoH", "device", ItemStack());
  EXPECT_EQ(FrameworkHint(read_back), FrameworkHint(sync));
  const Finding upload = Copy(RuleId::kPageableAsyncMemcpy, "HtoD", "pageable", ItemStack());
  EXPECT_NE(FrameworkHint(upload).find("tensor.pin_memory()"), std::string::npos);
  // Rules the words do not fit.
  Finding implicit = sync;
  implicit.rule = RuleId::kImplicitSync;
  EXPECT_EQ(FrameworkHint(implicit), "");
  EXPECT_EQ(FrameworkHint(Copy(RuleId::kBlockedOnPriorWork, "HtoD", "pinned", ItemStack())), "");
}

// Proves the wait is named from PyTorch's native frames where they say what it was.
TEST(FrameworkHintsTest, NamesWhatPyTorchWasDoing) {
  Finding item;
  item.rule = RuleId::kSyncApi;
  item.stack = {Python("/home/me/train.py"), Native("libcudart.so.13", "cudaStreamSynchronize"),
                Native("libtorch_cuda.so", "at::native::_local_scalar_dense_cuda(at::Tensor const&)")};
  EXPECT_NE(FrameworkHint(item).find("reads a number from a CUDA tensor (x.item(), float(x)"),
            std::string::npos)
      << FrameworkHint(item);
  Finding sync = item;
  sync.stack[2] = Native("libc10_cuda.so", "c10::cuda::device_synchronize()");
  EXPECT_NE(FrameworkHint(sync).find("this call is torch.cuda.synchronize()"), std::string::npos);
  Finding cpu = Copy(RuleId::kBlockedOnPriorWork, "DtoH", "device",
                     {Python("/home/me/train.py"),
                      Native("libtorch_cuda.so", "at::native::copy_kernel_cuda(at::TensorIterator&, bool)")});
  EXPECT_NE(FrameworkHint(cpu).find("copies a CUDA tensor to the CPU (x.cpu()"), std::string::npos);
  // Printing: PyTorch's Python code formats the tensor, and that is named wherever the copy is.
  Finding print = cpu;
  print.stack.insert(print.stack.begin(),
                     Python("/venv/lib/python3.12/site-packages/torch/_tensor_str.py"));
  EXPECT_NE(FrameworkHint(print).find("formats a CUDA tensor as text (print(x)"),
            std::string::npos);
  // Boolean-mask indexing, as the H200 recorded `h[h > 0]`: nonzero under index_Tensor.
  Finding mask = item;
  mask.stack[2] = Native("libtorch_cuda.so", "void at::native::nonzero_cuda_out_impl<bool>");
  mask.stack.push_back(Native("libtorch_cpu.so", "at::meta::structured_index_Tensor::meta"));
  EXPECT_NE(FrameworkHint(mask).find("reads back how many elements a boolean mask selects "
                                     "(x[mask], torch.nonzero(x)"),
            std::string::npos)
      << FrameworkHint(mask);
  // torch.cuda.empty_cache() as the H200 recorded it: its Python frame is PyTorch's own.
  Finding empty;
  empty.rule = RuleId::kImplicitSync;
  empty.stack = {Python("/venv/lib/python3.12/site-packages/torch/cuda/memory.py"),
                 Python("/home/me/train.py"), Native("libcudart.so.13", "cudaFree"),
                 Native("libc10_cuda.so",
                        "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::"
                        "emptyCache")};
  EXPECT_NE(FrameworkHint(empty).find("this is torch.cuda.empty_cache()"), std::string::npos)
      << FrameworkHint(empty);
  // cuDNN's autotuning empties the cache itself, under the module's forward (the H200's stack).
  Finding autotuning = empty;
  autotuning.stack.push_back(Native("libtorch_cuda.so",
                                    "at::native::run_single_conv("
                                    "cudnnBackendDescriptorType_t)"));
  EXPECT_NE(FrameworkHint(autotuning).find("cuDNN autotuning (torch.backends.cudnn.benchmark)"),
            std::string::npos)
      << FrameworkHint(autotuning);
  EXPECT_EQ(FrameworkHint(autotuning).find("empty_cache()"), std::string::npos);
  empty.stack.pop_back();  // another cudaFree inside PyTorch's Python code: no words
  EXPECT_EQ(FrameworkHint(empty), "");
  // An upload through the same copy kernel is an upload.
  const Finding upload = Copy(RuleId::kPageableAsyncMemcpy, "HtoD", "pageable", cpu.stack);
  EXPECT_NE(FrameworkHint(upload).find("pin_memory()"), std::string::npos);
  // torch.tensor(python_list, device="cuda"), as the H200 recorded it.
  Finding from_data = upload;
  from_data.stack.push_back(Native("libtorch_python.so", "torch::utils::internal_new_from_data"));
  EXPECT_NE(FrameworkHint(from_data).find("this is torch.tensor(data, device=...)"),
            std::string::npos)
      << FrameworkHint(from_data);
}

// A virtual environment under a folder named torch (the H200's /opt/torch/.venv) does not make
// every installed package PyTorch's: Lightning moving a batch from pageable memory is a line of
// the program's stack outside PyTorch, which gets the words; PyTorch's own files still do not.
// A model moved by nn.Module.cuda()/.cpu() (Module._apply copies each parameter), as the H200
// recorded .carry/s17f/torch_model_shuffle.py moving its model both ways at every step: named,
// in either direction, though the innermost Python frames are PyTorch's own.
TEST(FrameworkHintsTest, NamesAModelMovedByModuleApply) {
  const auto frame = [](const char* function) {
    FindingFrame f = Python("/venv/lib/python3.12/site-packages/torch/nn/modules/module.py");
    f.function = function;
    return f;
  };
  const std::vector<FindingFrame> to_cpu = {
      frame("Module.cpu.<locals>.<lambda>"),
      frame("Module._apply"),
      frame("Module._apply"),
      frame("Module.cpu"),
      Python("/home/me/train.py"),
      Native("libcudart.so.13"),
      Native("libtorch_cuda.so", "at::native::copy_kernel_cuda(at::TensorIterator&, bool)")};
  const std::string back =
      FrameworkHint(Copy(RuleId::kPageableAsyncMemcpy, "DtoH", "device", to_cpu));
  EXPECT_NE(back.find("this is nn.Module.cpu() copying the model's parameters"), std::string::npos)
      << back;
  std::vector<FindingFrame> to_gpu = to_cpu;
  to_gpu[0] = frame("Module.cuda.<locals>.<lambda>");
  to_gpu[3] = frame("Module.cuda");
  const std::string up =
      FrameworkHint(Copy(RuleId::kPageableAsyncMemcpy, "HtoD", "pageable", to_gpu));
  EXPECT_NE(up.find("this is nn.Module.cuda() copying"), std::string::npos) << up;
}

TEST(FrameworkHintsTest, OnlyTorchsPackageIsPyTorchsCode) {
  const std::string venv = "/opt/torch/.venv/lib/python3.12/site-packages/";
  const Finding lightning =
      Copy(RuleId::kPageableAsyncMemcpy, "HtoD", "pageable",
           {Python(venv + "lightning_fabric/utilities/apply_func.py"),
            Python("/home/me/fit.py"), Native("libtorch_cuda.so")});
  EXPECT_NE(FrameworkHint(lightning).find("pin_memory"), std::string::npos)
      << FrameworkHint(lightning);
  Finding apply = lightning;
  apply.stack[0] = Python(venv + "torch/nn/modules/module.py");  // model.cuda()'s Module._apply
  EXPECT_EQ(FrameworkHint(apply), "");
}

TEST(FrameworkHintsTest, NoWordsInsidePyTorchOrWithoutIt) {
  // cuDNN's algorithm search under Conv2d.forward: the innermost Python frame is PyTorch's.
  Finding search;
  search.rule = RuleId::kSyncApi;
  search.stack = {Python("/venv/lib/python3.12/site-packages/torch/nn/modules/conv.py"),
                  Python("/home/me/train.py")};
  EXPECT_EQ(FrameworkHint(search), "");
  // A Python program that is not PyTorch's (CuPy), and a native one.
  search.stack = {Python("/home/me/run.py"), Native("libcudart.so.13"), Native("cupy_backends.so")};
  EXPECT_EQ(FrameworkHint(search), "");
  search.stack = {Native("libtorch_cuda.so")};
  EXPECT_EQ(FrameworkHint(search), "") << "no Python line to change";
  search.stack = {};
  EXPECT_EQ(FrameworkHint(search), "");
}

}  // namespace
}  // namespace libprof::analysis
