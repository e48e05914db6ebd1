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

TEST(KernelNamesTest, ShortensLongNamesStepByStep) {
  EXPECT_EQ(ShortKernelName("spin(float*, int, long)"), "spin(float*, int, long)");
  const std::string templ =
      "nrm2_kernel<float, float, float, 1, 0, 128>(cublasNrm2Params<int, float, float>)";
  EXPECT_EQ(ShortKernelName(templ, 60), "nrm2_kernel<float, float, float, 1, 0, 128>(…)");
  EXPECT_EQ(ShortKernelName(templ, 30), "nrm2_kernel<…>(…)");
  EXPECT_EQ(DisplayWidth("a…b"), 3u);
}

}  // namespace
}  // namespace libprof::analysis
