// Tests of the insignificant-API lists: well formed, include Kineto's choices, never include a
// call that blocks or issues work, and name only queries according to the real libcupti.
#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "libprof/cupti/api_filter.h"
#include "libprof/cupti/api_names.h"
#include "libprof/cupti/cupti_api.h"

namespace libprof {
namespace {

bool Contains(const std::vector<uint32_t>& ids, uint32_t id) {
  return std::binary_search(ids.begin(), ids.end(), id);
}

// Proves both lists are sorted without duplicates and hold Kineto's filtered ids.
TEST(ApiFilterTest, SortedAndCoversKineto) {
  std::vector<uint32_t> runtime = InsignificantRuntimeCbids();
  std::vector<uint32_t> driver = InsignificantDriverCbids();
  EXPECT_TRUE(std::is_sorted(runtime.begin(), runtime.end()));
  EXPECT_EQ(std::adjacent_find(runtime.begin(), runtime.end()), runtime.end());
  EXPECT_TRUE(std::is_sorted(driver.begin(), driver.end()));
  EXPECT_EQ(std::adjacent_find(driver.begin(), driver.end()), driver.end());
  EXPECT_TRUE(Contains(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  EXPECT_TRUE(Contains(driver, CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute));
  EXPECT_TRUE(Contains(driver, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState));
  EXPECT_TRUE(Contains(driver, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
  EXPECT_TRUE(Contains(driver, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2));
}

// Proves no call that blocks, synchronises, polls work, launches, copies or (de)allocates is
// filtered.
TEST(ApiFilterTest, NeverFiltersWorkOrWaits) {
  std::vector<uint32_t> runtime = InsignificantRuntimeCbids();
  for (uint32_t id :
       {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
        CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
        CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020}) {
    EXPECT_FALSE(Contains(runtime, id)) << "runtime cbid " << id;
  }
  std::vector<uint32_t> driver = InsignificantDriverCbids();
  for (uint32_t id :
       {CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
        CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
        CUPTI_DRIVER_TRACE_CBID_cuEventQuery, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
        CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent, CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel,
        CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction}) {
    EXPECT_FALSE(Contains(driver, id)) << "driver cbid " << id;
  }
}

// Proves, through the toolkit's libcupti, that every filtered id is named like a query
// (Get/Is/Peek/Occupancy/Exchange...): a wrong enum value would name some other call.
TEST(ApiFilterTest, EveryFilteredIdIsAQuery) {
  std::string error;
  const CuptiApi* api = LoadCuptiApi("", &error);
  ASSERT_NE(api, nullptr) << error;
  const std::regex query(
      "^cu(da)?(Get|Peek|Runtime|Driver|Device(Get|Primary)|Ctx(Get)|"
      "Stream(Get|Is)|ThreadExchange|Pointer(Get)|Func(Get)|Kernel(Get)|"
      "Occupancy|Module(Get)|Mem(Get))");
  auto check = [&](CUpti_CallbackDomain domain, const std::vector<uint32_t>& ids) {
    for (uint32_t id : ids) {
      const char* name = nullptr;
      ASSERT_EQ(api->cuptiGetCallbackName(domain, id, &name), CUPTI_SUCCESS) << id;
      ASSERT_NE(name, nullptr);
      EXPECT_TRUE(std::regex_search(std::string(CleanApiName(name)), query)) << name;
    }
  };
  check(CUPTI_CB_DOMAIN_RUNTIME_API, InsignificantRuntimeCbids());
  check(CUPTI_CB_DOMAIN_DRIVER_API, InsignificantDriverCbids());
}

}  // namespace
}  // namespace libprof
