// Tests of analysis/model/call_sites.h: which frames are CUDA's own, the call site and the library a
// call came through, on the stacks of CallSitesScenario and on hand-made ones.
#include "analysis/model/call_sites.h"

#include <gtest/gtest.h>

#include "tests/analysis/scenarios.h"

namespace libprof::analysis {
namespace {

using testing::CallSitesScenario;

// Proves the three shapes of call site: through a CUDA library (cuBLAS with its own static
// cudart, past an unnamed internal frame), from the program's own static cudart (no library in
// between), and through the shared cudart from another library (PyTorch's), where the runtime
// itself is not named as the library.
TEST(CallSitesTest, ScenarioStacks) {
  const ProcessTrace trace = CallSitesScenario().Build();
  const CallSites sites(trace);
  ASSERT_FALSE(sites.empty());
  const CallSite& nrm2 = sites.Of(1);
  EXPECT_TRUE(nrm2.known);
  EXPECT_EQ(nrm2.through, "cublasSnrm2_v2 (libcublas.so.13)");
  EXPECT_EQ(nrm2.caller, "NormalizeLoop (app)");
  EXPECT_EQ(nrm2.Chain("cudaMemcpyAsync"),
            "cudaMemcpyAsync ← cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)");
  const CallSite& copy_back = sites.Of(2);
  EXPECT_EQ(copy_back.through, "");
  EXPECT_EQ(copy_back.Text(), "CopyBack (app)");
  const CallSite& torch = sites.Of(3);
  EXPECT_EQ(torch.through, "");
  EXPECT_EQ(torch.caller, "c10::cuda::CUDAStream::synchronize (libtorch_cuda.so)");
  EXPECT_EQ(torch.caller_module, "libtorch_cuda.so");
  // Frames: innermost first, CUDA's marked.
  const std::vector<FrameView>& frames = sites.Frames(1);
  ASSERT_EQ(frames.size(), 6u);
  EXPECT_TRUE(frames[0].cuda && frames[1].cuda && frames[2].cuda);
  EXPECT_FALSE(frames[3].cuda);
  EXPECT_EQ(frames[1].Label(), "0x5b0044 (libcublas.so.13)");
  EXPECT_EQ(sites.Frames(3)[2].Label(), "0x7f3a2c001000 (?)");
  // No stack, or an id the trace does not define: not known, no text.
  EXPECT_FALSE(sites.Of(0).known);
  EXPECT_FALSE(sites.Of(99).known);
  EXPECT_EQ(sites.Of(0).Chain("cudaMemcpy"), "");
  EXPECT_TRUE(sites.Frames(99).empty());
}

// Proves a trace without stacks gives an empty table, and a stack made only of CUDA's frames
// says so instead of naming a caller.
TEST(CallSitesTest, NoStacksAndOnlyCudaFrames) {
  testing::TraceBuilder b;
  EXPECT_TRUE(CallSites(b.Build()).empty());
  TraceRecords& r = b.records();
  r.stack_modules.push_back(
      {.id = 1, .path_id = b.Intern("/usr/lib/libcuda.so.1"), .build_id = "", .executable = false});
  r.stack_frames.push_back({.id = 1, .address = 0x10, .module_id = 1, .module_offset = 0x10});
  r.call_stacks.push_back({.id = 1, .frame_ids = {1}});
  const CallSites sites(b.Build());
  EXPECT_EQ(sites.Of(1).caller, "");
  EXPECT_EQ(sites.Of(1).Text(), "CUDA's own code");
}

// A library's call on its own thread (NCCL's async jobs under PyTorch's nn.DataParallel, on an
// H200): past its frames only libc's thread start, so the library's outermost frame is the
// call site, not "0x9cb84 (libc.so.6)".
TEST(CallSitesTest, ALibrarysOwnThreadIsItsCallSite) {
  testing::TraceBuilder b;
  TraceRecords& r = b.records();
  r.stack_modules.push_back({.id = 1, .path_id = b.Intern("/venv/lib/nccl/lib/libnccl.so.2")});
  r.stack_modules.push_back({.id = 2, .path_id = b.Intern("/usr/lib/x86_64-linux-gnu/libc.so.6")});
  r.stack_frames.push_back({.id = 1,
                            .address = 0x10,
                            .module_id = 1,
                            .module_offset = 0x10,
                            .function_id = b.Intern("cudaMemcpyAsync")});
  r.stack_frames.push_back({.id = 2,
                            .address = 0x20,
                            .module_id = 1,
                            .module_offset = 0x20,
                            .function_id = b.Intern("ncclAsyncJobMain(void*)")});
  r.stack_frames.push_back({.id = 3, .address = 0x30, .module_id = 2, .module_offset = 0x9cb84});
  r.stack_frames.push_back({.id = 4, .address = 0x40, .module_id = 2, .module_offset = 0x129ecc});
  r.call_stacks.push_back({.id = 1, .frame_ids = {1, 2, 3, 4}});
  // The same call from a program's own thread: its function is the call site.
  r.stack_modules.push_back({.id = 3, .path_id = b.Intern("/home/me/app")});
  r.stack_frames.push_back({.id = 5,
                            .address = 0x50,
                            .module_id = 3,
                            .module_offset = 0x50,
                            .function_id = b.Intern("Worker(void*)")});
  r.call_stacks.push_back({.id = 2, .frame_ids = {1, 2, 5, 3, 4}});
  const CallSites sites(b.Build());
  EXPECT_EQ(sites.Of(1).caller, "ncclAsyncJobMain (libnccl.so.2)");
  EXPECT_EQ(sites.Of(2).caller, "Worker (app)");
}

// A stack as libprof records it under PyTorch: cudart, libtorch_cuda, then the interpreter, with
// the Python frames of the calling thread (innermost first) on top.
ProcessTrace PythonStack(const std::vector<std::pair<std::string, uint32_t>>& python) {
  testing::TraceBuilder b;
  TraceRecords& r = b.records();
  r.stack_modules.push_back({.id = 1, .path_id = b.Intern("/usr/lib/libcudart.so.13")});
  r.stack_modules.push_back({.id = 2, .path_id = b.Intern("/venv/lib/torch/lib/libtorch_cuda.so")});
  r.stack_frames.push_back({.id = 1, .address = 0x10, .module_id = 1, .module_offset = 0x10,
                            .function_id = b.Intern("cudaStreamSynchronize")});
  r.stack_frames.push_back({.id = 2, .address = 0x20, .module_id = 2, .module_offset = 0x20,
                            .function_id = b.Intern("at::native::_local_scalar_dense_cuda(at::Tensor const&)")});
  CallStack stack{.id = 1, .frame_ids = {1, 2}};
  for (const auto& [file, line] : python) {
    stack.python_frames.push_back(
        {.file_id = b.Intern(file), .line = line, .function_id = b.Intern("f" + std::to_string(line))});
  }
  r.call_stacks.push_back(stack);
  return b.Build();
}

// Proves the call site of a Python program: the innermost Python frame outside framework code
// (torch's own Python, the standard library, frozen modules), named by file name, line and
// function, above the native frames; native frames (libtorch) are no longer the caller.
TEST(CallSitesTest, PythonCallSiteSkipsFrameworks) {
  const ProcessTrace trace = PythonStack({
      {"/venv/lib/python3.12/site-packages/torch/_tensor.py", 1034},  // Tensor.item wrapper
      {"/usr/lib/python3.12/contextlib.py", 81},
      {"/home/u/normalize.py", 7},
      {"/home/u/normalize.py", 20},
      {"<frozen runpy>", 88},
  });
  const CallSites sites(trace);
  const CallSite& site = sites.Of(1);
  EXPECT_EQ(site.caller, "normalize.py:7 in f7");
  EXPECT_EQ(site.caller_module, "/home/u/normalize.py");
  EXPECT_EQ(site.caller_frame, 2u);
  EXPECT_EQ(site.Chain("cudaStreamSynchronize"), "cudaStreamSynchronize ← normalize.py:7 in f7");
  const std::vector<FrameView>& frames = sites.Frames(1);
  ASSERT_EQ(frames.size(), 7u);  // 5 Python, then 2 native
  EXPECT_TRUE(frames[0].python && frames[0].framework);
  EXPECT_TRUE(frames[1].framework);
  EXPECT_FALSE(frames[2].framework);
  EXPECT_TRUE(frames[4].framework);
  EXPECT_FALSE(frames[5].python);
  // Framework frames by their package path (a bare "_tensor.py" or "__init__.py" could be any
  // package's), the program's by its file name.
  EXPECT_EQ(frames[0].Label(), "torch/_tensor.py:1034 in f1034");
  EXPECT_EQ(frames[1].Label(), "contextlib.py:81 in f81");
  EXPECT_EQ(frames[2].Label(), "normalize.py:7 in f7");
  EXPECT_EQ(frames[4].Label(), "<frozen runpy>:88 in f88");
  EXPECT_EQ(frames[6].Label(), "at::native::_local_scalar_dense_cuda (libtorch_cuda.so)");
}

// Proves the boundary is a setting: other path parts move it (a user's own package counted as
// framework), an empty list makes the innermost Python frame the call site, and a stack whose
// Python frames are all framework code is named by the innermost of them.
TEST(CallSitesTest, PythonBoundaryIsASetting) {
  const ProcessTrace trace = PythonStack({
      {"/venv/lib/python3.12/site-packages/torch/_tensor.py", 1034},
      {"/home/u/mylib/ops.py", 3},
      {"/home/u/train.py", 50},
  });
  EXPECT_EQ(CallSites(trace).Of(1).caller, "ops.py:3 in f3");
  CallSiteRule mine;
  mine.framework_paths = {"/site-packages/", "/mylib/"};
  EXPECT_EQ(CallSites(trace, mine).Of(1).caller, "train.py:50 in f50");
  EXPECT_EQ(CallSites(trace, mine).Frames(1)[1].Label(), "ops.py:3 in f3");  // from /mylib/
  CallSiteRule none;
  none.framework_paths = {""};
  EXPECT_EQ(CallSites(trace, none).Of(1).caller, "_tensor.py:1034 in f1034");
  const ProcessTrace all_framework = PythonStack({
      {"/usr/lib/python3/dist-packages/cupy/_core.py", 5},
      {"/usr/lib/python3.12/threading.py", 1010},
  });
  EXPECT_EQ(CallSites(all_framework).Of(1).caller, "cupy/_core.py:5 in f5");
  // No Python frames: the native rule, unchanged.
  EXPECT_EQ(CallSites(PythonStack({})).Of(1).caller,
            "at::native::_local_scalar_dense_cuda (libtorch_cuda.so)");
  EXPECT_EQ(CallSites(PythonStack({})).Of(1).caller_frame, 1u);
}

// Proves a framework file's package path: from the framework part that ends last (a venv's
// site-packages inside lib/python3.12), past the version folder "/lib/python3" stops in, whole
// for frozen modules and whatever does not fit; "" for the program's own files.
TEST(CallSitesTest, FrameworkFilesAreNamedFromTheirPackageFolder) {
  const CallSiteRule rule;
  EXPECT_EQ(rule.PackagePath("/opt/torch/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py"),
            "torch/cuda/__init__.py");
  EXPECT_EQ(rule.PackagePath("/usr/lib/python3/dist-packages/cupy/_core.py"), "cupy/_core.py");
  EXPECT_EQ(rule.PackagePath("/usr/lib/python3.12/json/decoder.py"), "json/decoder.py");
  EXPECT_EQ(rule.PackagePath("<frozen runpy>"), "<frozen runpy>");
  EXPECT_EQ(rule.PackagePath("/usr/lib/python3"), "/usr/lib/python3");
  EXPECT_EQ(rule.PackagePath("/home/u/train.py"), "");
  CallSiteRule mine;
  mine.framework_paths = {"/mylib/"};
  EXPECT_EQ(mine.PackagePath("/home/u/mylib/ops/conv.py"), "ops/conv.py");
}

// Proves the library and function classification on names seen in real processes.
TEST(CallSitesTest, Classification) {
  for (const char* name : {"libcuda.so.1", "libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13",
                           "libcudnn_ops.so.9", "libnccl.so.2", "libcupti.so.13", "libprof.so",
                           "libnvidia-ptxjitcompiler.so.1", "libcufft.so.12"}) {
    EXPECT_TRUE(IsCudaLibrary(name)) << name;
  }
  for (const char* name : {"app", "libtorch_cuda.so", "libc.so.6", "python3.12", "libcuda_ext.so"}) {
    EXPECT_FALSE(IsCudaLibrary(name)) << name;
  }
  for (const char* name : {"cudaMemcpyAsync", "cudart::cudaApiMemcpy(void*)", "__cudart812"}) {
    EXPECT_TRUE(IsCudaRuntimeFunction(name)) << name;
  }
  for (const char* name : {"cuda", "cudaish_helper", "NormalizeLoop", "at::cuda::getCurrentStream"}) {
    EXPECT_FALSE(IsCudaRuntimeFunction(name)) << name;
  }
  EXPECT_EQ(ShortFunctionName("(anonymous namespace)::NormalizeLoop(float*, int)"), "NormalizeLoop");
  EXPECT_EQ(ShortFunctionName("std::function<void (int)>::operator()(int) const"),
            "std::function<void (int)>::operator()");
  EXPECT_EQ(ShortFunctionName("Foo(int) [clone .isra.0]"), "Foo");
  EXPECT_EQ(ShortFunctionName("main"), "main");
}

}  // namespace
}  // namespace libprof::analysis
