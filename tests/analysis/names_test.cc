// Proves API names are classified (noise, sync, implicit sync, per-thread) and kernel names are
// demangled and shortened sensibly.
#include <gtest/gtest.h>

#include "analysis/model/api_names.h"
#include "analysis/model/kernel_names.h"

namespace libprof::analysis {
namespace {

TEST(ApiNamesTest, NoiseIsHiddenButRealWorkIsNot) {
  for (const char* noise :
       {"cuGetProcAddress", "cuGetProcAddress_v2", "cuKernelGetName", "cudaStreamGetCaptureInfo_v2",
        "cuStreamGetCaptureInfo_v3", "cudaStreamIsCapturing", "cudaGetLastError",
        "cuDeviceGetAttribute", "cudaGetDevice", "cudaFuncGetAttributes",
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cuStreamGetCaptureInfo_v2_ptsz"}) {
    EXPECT_TRUE(IsNoiseApi(noise)) << noise;
  }
  for (const char* real : {"cudaMemcpyAsync", "cudaLaunchKernel", "cuLaunchKernel",
                           "cudaStreamSynchronize", "cudaMalloc", "cudaEventRecord"}) {
    EXPECT_FALSE(IsNoiseApi(real)) << real;
  }
}

// Proves a noise call inside which a context was created (on its thread, within its interval) is
// not noise, and that the others of its name, thread or time still are.
TEST(ApiNamesTest, ACallThatCreatedAContextIsNotNoise) {
  ContextInfo context;
  context.created_ns = 5'000;
  context.created_thread_id = 7;
  const std::vector<ContextInfo> contexts = {ContextInfo{}, context};  // one from an old trace
  ApiCall creating;
  creating.thread_id = 7;
  creating.start_ns = 1'000;
  creating.end_ns = 5'000;  // created as it returned
  EXPECT_TRUE(CreatedAContext(creating, contexts));
  EXPECT_FALSE(IsNoiseCall("cudaDeviceGetStreamPriorityRange", creating, contexts));
  ApiCall other_thread = creating;
  other_thread.thread_id = 8;
  EXPECT_TRUE(IsNoiseCall("cudaDeviceGetStreamPriorityRange", other_thread, contexts));
  ApiCall later = creating;
  later.start_ns = 5'001;
  later.end_ns = 6'000;
  EXPECT_TRUE(IsNoiseCall("cudaDeviceGetStreamPriorityRange", later, contexts));
  EXPECT_TRUE(IsNoiseCall("cudaGetDevice", creating, {}));
  EXPECT_FALSE(IsNoiseCall("cudaMalloc", later, contexts)) << "never noise";
}

TEST(ApiNamesTest, SynchronisationClasses) {
  EXPECT_EQ(ExplicitSyncScope("cudaDeviceSynchronize"), SyncScope::kDevice);
  EXPECT_EQ(ExplicitSyncScope("cuCtxSynchronize"), SyncScope::kContext);
  EXPECT_EQ(ExplicitSyncScope("cudaStreamSynchronize_ptsz"), SyncScope::kStream);
  EXPECT_EQ(ExplicitSyncScope("cuStreamSynchronize"), SyncScope::kStream);
  EXPECT_EQ(ExplicitSyncScope("cudaEventSynchronize"), SyncScope::kEvent);
  EXPECT_EQ(ExplicitSyncScope("cudaStreamQuery"), SyncScope::kNone);
  EXPECT_TRUE(IsImplicitSyncApi("cudaFree"));
  EXPECT_TRUE(IsImplicitSyncApi("cuMemFree_v2"));
  EXPECT_TRUE(IsImplicitSyncApi("cudaHostRegister"));
  EXPECT_FALSE(IsImplicitSyncApi("cudaFreeAsync"));  // stream-ordered: no device sync
  EXPECT_TRUE(IsMemcpyApi("cudaMemcpy2DAsync"));
  EXPECT_TRUE(IsMemcpyApi("cuMemcpyDtoHAsync_v2"));
  EXPECT_TRUE(IsMemsetApi("cudaMemsetAsync"));
  EXPECT_TRUE(IsAsyncApi("cudaMemcpyAsync_ptsz"));
  EXPECT_FALSE(IsAsyncApi("cudaMemcpy"));
  EXPECT_TRUE(IsPerThreadApi("cudaMemcpyAsync_ptsz"));
  EXPECT_TRUE(IsPerThreadApi("cudaMemcpy_ptds"));
  EXPECT_FALSE(IsPerThreadApi("cudaMemcpyAsync"));
  EXPECT_EQ(WithoutPerThreadSuffix("cudaLaunchKernel_ptsz"), "cudaLaunchKernel");
  EXPECT_EQ(CaptureBoundOf("cudaStreamBeginCapture"), CaptureBound::kBegin);
  EXPECT_EQ(CaptureBoundOf("cudaStreamBeginCaptureToGraph"), CaptureBound::kBegin);
  EXPECT_EQ(CaptureBoundOf("cuStreamBeginCapture_v2"), CaptureBound::kBegin);
  EXPECT_EQ(CaptureBoundOf("cudaStreamEndCapture"), CaptureBound::kEnd);
  EXPECT_EQ(CaptureBoundOf("cuStreamEndCapture"), CaptureBound::kEnd);
  EXPECT_EQ(CaptureBoundOf("cudaStreamIsCapturing"), CaptureBound::kNone);
  EXPECT_EQ(TraitsOf("cudaStreamEndCapture").capture, CaptureBound::kEnd);
}

TEST(KernelNamesTest, DemanglesAndDropsReturnType) {
  EXPECT_EQ(KernelDisplayName("_Z4spinPfil", ""), "spin(float*, int, long)");
  EXPECT_EQ(KernelDisplayName("_Z4spinPfil", "_Z4spinPfil"), "spin(float*, int, long)");
  EXPECT_EQ(KernelDisplayName("x", "void nrm2_kernel<float, 1>(Params<int, float>)"),
            "nrm2_kernel<float, 1>(Params<int, float>)");
  EXPECT_EQ(KernelDisplayName("", "at::(anonymous namespace)::fill(float*)"),
            "at::(anonymous namespace)::fill(float*)");
  EXPECT_EQ(KernelDisplayName("not_mangled_kernel", ""), "not_mangled_kernel");
  EXPECT_EQ(KernelDisplayName("_Zbroken", ""), "_Zbroken");  // undemanglable stays as is
}

// Start-up work (analysis/metrics/start_up.h) by name, versions and per-thread suffixes included.
TEST(ApiNamesTest, StartUpWork) {
  for (const char* load : {"cuLibraryLoadData", "cuModuleLoadData", "cuModuleLoadDataEx",
                           "cuModuleLoadFatBinary", "cudaLibraryLoadData", "cuLinkComplete"}) {
    EXPECT_EQ(StartUpWorkOf(load), StartUpWork::kModuleLoad) << load;
  }
  for (const char* context : {"cuInit", "cuCtxCreate_v2", "cuDevicePrimaryCtxRetain"}) {
    EXPECT_EQ(StartUpWorkOf(context), StartUpWork::kContext) << context;
  }
  for (const char* alloc : {"cudaMalloc", "cudaMallocAsync_ptsz", "cuMemAlloc_v2", "cuMemCreate"}) {
    EXPECT_EQ(StartUpWorkOf(alloc), StartUpWork::kAllocation) << alloc;
  }
  for (const char* other : {"cudaLaunchKernel", "cuModuleGetFunction", "cudaFree", "cuCtxSynchronize"}) {
    EXPECT_EQ(StartUpWorkOf(other), StartUpWork::kNone) << other;
  }
}

TEST(KernelNamesTest, ShortensLongNamesStepByStep) {
  EXPECT_EQ(AbbreviateName("spin(float*, int, long)", 60), "spin(float*, int, long)");
  const std::string templ =
      "nrm2_kernel<float, float, float, 1, 0, 128>(cublasNrm2Params<int, float, float>)";
  EXPECT_EQ(AbbreviateName(templ, 60), "nrm2_kernel<float, float, float, 1, 0, 128>(…)");
  EXPECT_EQ(AbbreviateName(templ, 30), "nrm2_kernel<…>(…)");
  EXPECT_EQ(DisplayWidth("a…b"), 3u);
}

// The case: summary cut "cudnn::detail::dgr…" mid-word; every width now gives a name
// whose words are whole, with namespaces kept as long as they fit, and never wider than asked.
TEST(KernelNamesTest, AbbreviatesToAnyWidthKeepingNamespacesThenTheName) {
  const std::string cudnn =
      "cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>(int, int, int, float "
      "const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, "
      "float, int)";
  EXPECT_EQ(AbbreviateName(cudnn, 80), "cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>(…)");
  EXPECT_EQ(AbbreviateName(cudnn, 40), "cudnn::detail::dgrad_engine<…>(…)");
  EXPECT_EQ(AbbreviateName(cudnn, 25), "…::dgrad_engine<…>(…)");
  EXPECT_EQ(AbbreviateName(cudnn, 16), "…::dgrad_engine…");
  EXPECT_EQ(AbbreviateName(cudnn, 10), "…::dgrad_…");
  for (size_t width = 1; width < 200; ++width) {
    EXPECT_LE(DisplayWidth(AbbreviateName(cudnn, width)), width) << width;
  }
  // Empty lists, lambdas and anonymous namespaces keep their parentheses.
  EXPECT_EQ(AbbreviateName("at::native::(anonymous namespace)::launch(int)::{lambda()#1}::"
                           "operator()() const",
                           78),
            "at::native::(anonymous namespace)::launch(…)::{lambda()#1}::operator()() const");
  EXPECT_EQ(AbbreviateName("(anonymous namespace)::TransformKernel(unsigned int const*, "
                           "unsigned int*, unsigned long)",
                           41),
            "(anonymous namespace)::TransformKernel(…)");
  // Text that is no C++ name is cut at a word boundary.
  EXPECT_EQ(AbbreviateName("[copy pageable to device memory]", 28), "[copy pageable to device…");
}

}  // namespace
}  // namespace libprof::analysis
