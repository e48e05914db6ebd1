// Tests of API name cleaning and kernel name demangling/caching (CUDA-free helpers of the
// decoder).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "libprof/cupti/api_names.h"
#include "libprof/cupti/kernel_names.h"

namespace libprof {
namespace {

// Proves version and per-thread-stream suffixes are stripped in any order, and nothing else.
TEST(CleanApiNameTest, StripsSuffixes) {
  EXPECT_EQ(CleanApiName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(CleanApiName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(CleanApiName("cudaMalloc_v3020"), "cudaMalloc");
  EXPECT_EQ(CleanApiName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(CleanApiName("cuMemcpyDtoHAsync_v2_ptsz"), "cuMemcpyDtoHAsync");
  EXPECT_EQ(CleanApiName("cudaStreamGetCaptureInfo_v2_ptsz_v11030"), "cudaStreamGetCaptureInfo");
  EXPECT_EQ(CleanApiName("cudaMemcpy_ptds_v7000"), "cudaMemcpy");
  EXPECT_EQ(CleanApiName("cuGetProcAddress_v2"), "cuGetProcAddress");
  EXPECT_EQ(CleanApiName("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(CleanApiName("cuMemcpy2D"), "cuMemcpy2D");  // digits without "_v"
  EXPECT_EQ(CleanApiName("cudaMemcpy3D_v3020"), "cudaMemcpy3D");
  EXPECT_EQ(CleanApiName("cuFoo_v"), "cuFoo_v");  // "_v" without digits
  EXPECT_EQ(CleanApiName("_v2"), "_v2");          // never emptied
  EXPECT_EQ(CleanApiName(""), "");
}

// Proves names are looked up once per (domain, id), and unknown ids get a readable fallback.
TEST(ApiNameCacheTest, CachesPerDomainAndId) {
  StringInterner strings;
  int calls = 0;
  ApiNameCache cache(
      [&](ApiDomain domain, uint32_t id) -> const char* {
        ++calls;
        if (id == 1) return domain == ApiDomain::kRuntime ? "cudaFoo_v3020" : "cuFoo_v2";
        return nullptr;
      },
      strings);
  uint32_t runtime = cache.NameId(ApiDomain::kRuntime, 1);
  uint32_t driver = cache.NameId(ApiDomain::kDriver, 1);
  EXPECT_NE(runtime, driver);
  EXPECT_EQ(cache.NameId(ApiDomain::kRuntime, 1), runtime);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(strings.Intern("cudaFoo"), runtime);
  EXPECT_EQ(strings.Intern("cuFoo"), driver);
  EXPECT_EQ(cache.NameId(ApiDomain::kDriver, 77), strings.Intern("driver API 77"));
  EXPECT_EQ(cache.NameId(ApiDomain::kInternalLaunch, 1u << 20),
            strings.Intern("internal launch API 1048576"));
  ApiNameCache no_lookup(nullptr, strings);
  EXPECT_EQ(no_lookup.NameId(ApiDomain::kRuntime, 5), strings.Intern("runtime API 5"));
}

// Proves C++ names are demangled, and C names (even ones __cxa_demangle would accept as a type,
// such as "f") are left alone.
TEST(DemangleTest, OnlyMangledNames) {
  EXPECT_EQ(DemangleKernelName("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(DemangleKernelName("_ZN7cutlass6KernelINS_4gemmEEEvNT_6ParamsE"),
            DemangleKernelName("_ZN7cutlass6KernelINS_4gemmEEEvNT_6ParamsE"));
  EXPECT_EQ(DemangleKernelName("f"), "f");
  EXPECT_EQ(DemangleKernelName("vectorAdd"), "vectorAdd");
  EXPECT_EQ(DemangleKernelName("_Znot a name"), "_Znot a name");
  EXPECT_EQ(DemangleKernelName(nullptr), "");
}

// Proves the cache is keyed by pointer but checks content, so a reused pointer (module unloaded,
// memory reused for another name) gets the new name's ids.
TEST(KernelNameCacheTest, PointerReuseIsDetected) {
  StringInterner strings;
  KernelNameCache cache(strings);
  char buffer[64];
  std::strcpy(buffer, "_Z3fooi");
  KernelNameIds foo = cache.Get(buffer);
  EXPECT_EQ(foo.name_id, strings.Intern("_Z3fooi"));
  EXPECT_EQ(foo.demangled_id, strings.Intern("foo(int)"));
  std::strcpy(buffer, "_Z3barf");
  KernelNameIds bar = cache.Get(buffer);
  EXPECT_EQ(bar.demangled_id, strings.Intern("bar(float)"));
  static const char kSame[] = "_Z3fooi";  // another pointer, same content
  KernelNameIds again = cache.Get(kSame);
  EXPECT_EQ(again.name_id, foo.name_id);
  EXPECT_EQ(again.demangled_id, foo.demangled_id);
  EXPECT_EQ(cache.Get(nullptr).name_id, 0u);
}

}  // namespace
}  // namespace libprof
