// Tests of the unified-memory counter set-up (unified_memory_counters, activity_kinds): what
// libprof asks CUPTI for and what it does when CUPTI refuses all or part of it (CUPTI is a fake
// table), and the gate that waits for the program's first use of managed memory.
#include <cupti.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "libprof/cupti/activity_kinds.h"
#include "libprof/cupti/managed_memory_gate.h"
#include "libprof/cupti/unified_memory_counters.h"

namespace libprof {
namespace {

// What the fake CUPTI was asked, and what it refuses.
std::vector<std::vector<CUpti_ActivityUnifiedMemoryCounterKind>> g_calls;
std::set<CUpti_ActivityUnifiedMemoryCounterKind> g_refused;
CUptiResult g_refusal = CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE;

CUptiResult FakeConfigure(CUpti_ActivityUnifiedMemoryCounterConfig* config, uint32_t count) {
  std::vector<CUpti_ActivityUnifiedMemoryCounterKind> kinds;
  bool refuse = false;
  for (uint32_t i = 0; i < count; ++i) {
    kinds.push_back(config[i].kind);
    refuse = refuse || g_refused.contains(config[i].kind) || config[i].enable == 0;
  }
  g_calls.push_back(kinds);
  return refuse ? g_refusal : CUPTI_SUCCESS;
}

CUptiResult FakeResultString(CUptiResult, const char** text) {
  *text = "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE";
  return CUPTI_SUCCESS;
}

// The default kinds, `uvm` among them: its entry comes last.
RecordKinds WithUvm() {
  RecordKinds kinds;
  kinds.uvm = true;
  return kinds;
}

class UnifiedMemoryConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls.clear();
    g_refused.clear();
    g_refusal = CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE;
    api_.cuptiActivityConfigureUnifiedMemoryCounter = &FakeConfigure;
    api_.cuptiGetResultString = &FakeResultString;
  }
  CuptiApi api_;
};

// Proves every counter kind of CUPTI 13.0 is asked for, enabled, in one call when CUPTI agrees.
TEST_F(UnifiedMemoryConfigTest, AllCountersInOneCall) {
  const std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> configs =
      UnifiedMemoryCounterConfigs();
  ASSERT_EQ(configs.size(), 8u);
  EXPECT_EQ(configs.front().kind, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD);
  EXPECT_EQ(configs.back().kind, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD);
  for (const auto& c : configs) EXPECT_EQ(c.enable, 1u);

  const UnifiedMemoryConfigResult result = ConfigureUnifiedMemoryCounters(api_);
  EXPECT_EQ(result.configured, 8u);
  EXPECT_EQ(result.refused, "");
  ASSERT_EQ(g_calls.size(), 1u);
  EXPECT_EQ(g_calls[0].size(), 8u);
}

// Proves a platform lacking one counter still records the others, and the refusal names it.
TEST_F(UnifiedMemoryConfigTest, PartialRefusalKeepsTheRest) {
  g_refused = {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT};
  const UnifiedMemoryConfigResult result = ConfigureUnifiedMemoryCounters(api_);
  EXPECT_EQ(result.configured, 7u);
  EXPECT_EQ(result.refused, "GPU page fault (CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE)");
  EXPECT_EQ(g_calls.size(), 1u + 8u);  // all at once, then one by one

  std::string warning;
  const std::vector<ActivityKindToEnable> kinds = DataActivityKinds(WithUvm());
  const ActivityKindToEnable& uvm = kinds.back();
  ASSERT_EQ(uvm.kind, CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  ASSERT_NE(uvm.prepare, nullptr);
  EXPECT_EQ(uvm.prepare(api_, &warning), PrepareResult::kReady);
  EXPECT_NE(warning.find("the others are recorded"), std::string::npos) << warning;
}

// Proves a platform without unified-memory counters (or a CUPTI without the call) leaves the
// kind off with one warning.
TEST_F(UnifiedMemoryConfigTest, FullRefusalLeavesTheKindOff) {
  for (const auto& c : UnifiedMemoryCounterConfigs()) g_refused.insert(c.kind);
  const ActivityKindToEnable uvm = DataActivityKinds(WithUvm()).back();
  std::string warning;
  EXPECT_EQ(uvm.prepare(api_, &warning), PrepareResult::kRefused);
  EXPECT_NE(warning.find("cannot record unified memory"), std::string::npos) << warning;

  CuptiApi old;  // no cuptiActivityConfigureUnifiedMemoryCounter
  const UnifiedMemoryConfigResult none = ConfigureUnifiedMemoryCounters(old);
  EXPECT_EQ(none.configured, 0u);
  EXPECT_NE(none.refused.find("no cuptiActivityConfigureUnifiedMemoryCounter"), std::string::npos);
}

// Proves a CUPTI that is not ready yet (inside cuInit, before the driver is initialised: seen on
// an H100 with CUDA 13.0) defers the kind, without a warning and without trying counters one by
// one, so the session can try again once a context exists.
TEST_F(UnifiedMemoryConfigTest, NotReadyBeforeTheDriverDefersTheKind) {
  for (const CUptiResult not_ready : {CUPTI_ERROR_NOT_READY, CUPTI_ERROR_NOT_INITIALIZED}) {
    g_calls.clear();
    g_refused = {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD};
    g_refusal = not_ready;
    const UnifiedMemoryConfigResult result = ConfigureUnifiedMemoryCounters(api_);
    EXPECT_TRUE(result.not_ready);
    EXPECT_EQ(result.configured, 0u);
    EXPECT_EQ(g_calls.size(), 1u);
    std::string warning;
    EXPECT_EQ(DataActivityKinds(WithUvm()).back().prepare(api_, &warning),
              PrepareResult::kNotYet);
    EXPECT_EQ(warning, "");
  }
}

// Proves the LIBPROF_TRACE word switches the CUPTI kind on (by default) and off, and no other
// kind needs set-up.
TEST(ActivityKindsTest, UvmKindFollowsItsWord) {
  EXPECT_TRUE(RecordKinds{}.uvm);
  RecordKinds without;
  without.uvm = false;
  for (const ActivityKindToEnable& k : DataActivityKinds(without)) {
    EXPECT_NE(k.kind, CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    EXPECT_EQ(k.prepare, nullptr) << k.what;
  }
  size_t uvm = 0;
  for (const ActivityKindToEnable& k : DataActivityKinds(WithUvm())) {
    uvm += k.kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  }
  EXPECT_EQ(uvm, 1u);
}

// Proves the unified-memory kind waits for managed memory (its counters cost seconds at exit
// once enabled, bench/README.md) and no other kind does.
TEST(ManagedMemoryGateTest, OnlyTheUnifiedMemoryKindWaits) {
  for (const ActivityKindToEnable& k : DataActivityKinds(WithUvm())) {
    EXPECT_EQ(k.after_managed_memory, k.kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
        << k.what;
  }
}

// Proves which driver calls open the gate: managed allocations, `__managed__` variables,
// advice and prefetches, each whatever its parameters; pool calls only for a managed pool.
TEST(ManagedMemoryGateTest, ManagedCallsOpenIt) {
  for (CUpti_CallbackId cbid :
       {CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, CUPTI_DRIVER_TRACE_CBID_cuLibraryGetManaged,
        CUPTI_DRIVER_TRACE_CBID_cuMemAdvise_v2, CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync_v2_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchBatchAsync}) {
    EXPECT_TRUE(StartsManagedMemory(cbid, nullptr)) << cbid;
  }
  for (CUpti_CallbackId cbid :
       {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2}) {
    EXPECT_FALSE(StartsManagedMemory(cbid, nullptr)) << cbid;
  }
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  cuMemPoolCreate_params create{nullptr, &props};
  EXPECT_FALSE(StartsManagedMemory(CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate, &create));
  props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
  EXPECT_TRUE(StartsManagedMemory(CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate, &create));
  cuMemGetDefaultMemPool_params get{nullptr, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED};
  EXPECT_FALSE(StartsManagedMemory(CUPTI_DRIVER_TRACE_CBID_cuMemGetDefaultMemPool, &get));
  get.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
  EXPECT_TRUE(StartsManagedMemory(CUPTI_DRIVER_TRACE_CBID_cuMemGetDefaultMemPool, &get));
  // Every id the session watches opens it for some parameters.
  for (CUpti_CallbackId cbid : ManagedMemoryDriverCbids()) {
    EXPECT_TRUE(StartsManagedMemory(cbid, nullptr)) << cbid;
  }
}

}  // namespace
}  // namespace libprof
