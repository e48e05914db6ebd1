// Tests of host_functions: which calls enqueue a host function, the stream each names (from
// parameter structs as CUPTI hands them over), and the join of those streams onto the calls'
// records.
#include "libprof/cupti/host_functions.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <vector>

namespace libprof {
namespace {

CUstream Handle(uintptr_t value) { return reinterpret_cast<CUstream>(value); }

TEST(HostFunctionsTest, EveryFormOfTheCallsIsWatched) {
  EXPECT_EQ(HostFunctionCbids(true).size(), 4u);
  EXPECT_EQ(HostFunctionCbids(false).size(), 4u);
  for (const bool runtime : {true, false}) {
    for (CUpti_CallbackId cbid : HostFunctionCbids(runtime)) {
      // Each watched id reads its stream (an id not read would be noted with no stream).
      cuLaunchHostFunc_params params{};
      EXPECT_TRUE(HostFunctionStream(runtime, cbid, &params).has_value()) << cbid;
      EXPECT_FALSE(HostFunctionStream(runtime, cbid, nullptr).has_value()) << cbid;
    }
  }
  cudaLaunchKernel_v7000_params launch{};
  EXPECT_FALSE(
      HostFunctionStream(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch));
}

TEST(HostFunctionsTest, StreamArgumentFromEachCall) {
  cudaLaunchHostFunc_v10000_params runtime{};
  runtime.stream = reinterpret_cast<cudaStream_t>(Handle(0x1234));
  auto arg = HostFunctionStream(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000, &runtime);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, Handle(0x1234));
  EXPECT_FALSE(arg->per_thread);

  cuStreamAddCallback_params driver{};
  driver.hStream = Handle(0x5678);
  arg = HostFunctionStream(false, CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback, &driver);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, Handle(0x5678));

  // A null stream in a per-thread-stream call is the thread's own stream; in the plain call,
  // the legacy default stream. The special handles say which they stand for.
  cudaLaunchHostFunc_ptsz_v10000_params ptsz{};
  arg = HostFunctionStream(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000, &ptsz);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, nullptr);
  EXPECT_TRUE(arg->per_thread);
  cuLaunchHostFunc_params plain{};
  arg = HostFunctionStream(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, &plain);
  ASSERT_TRUE(arg);
  EXPECT_FALSE(arg->per_thread);
  plain.hStream = CU_STREAM_PER_THREAD;
  arg = HostFunctionStream(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, &plain);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, nullptr);
  EXPECT_TRUE(arg->per_thread);
  cuLaunchHostFunc_ptsz_params legacy{};
  legacy.hStream = CU_STREAM_LEGACY;
  arg = HostFunctionStream(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz, &legacy);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, nullptr);
  EXPECT_FALSE(arg->per_thread);
}

TEST(HostFunctionsTest, StreamsJoinTheirCallsRecords) {
  HostFunctionStreams streams;
  std::vector<ApiCall> calls(3);
  calls[0].correlation_id = 10;
  calls[1].correlation_id = 11;
  calls[2].correlation_id = 12;
  streams.Attach(calls);  // nothing noted: nothing changes
  for (const ApiCall& c : calls) EXPECT_EQ(c.stream_id, kNoStream);
  streams.Note(11, 0);  // stream id 0 is a stream like any other
  streams.Note(12, 7);
  streams.Attach(calls);
  EXPECT_EQ(calls[0].stream_id, kNoStream);
  EXPECT_EQ(calls[1].stream_id, 0u);
  EXPECT_EQ(calls[2].stream_id, 7u);
  // Kept after the join: a driver call nested in the runtime one may come with the same id.
  std::vector<ApiCall> nested(1);
  nested[0].correlation_id = 12;
  streams.Attach(nested);
  EXPECT_EQ(nested[0].stream_id, 7u);
}

TEST(HostFunctionsTest, CallsWhoseRecordsNeverCameAreForgottenOldestFirst) {
  HostFunctionStreams streams;
  for (uint64_t id = 1; id <= 10000; ++id) streams.Note(id, 3);
  std::vector<ApiCall> calls(2);
  calls[0].correlation_id = 1;
  calls[1].correlation_id = 10000;
  streams.Attach(calls);
  EXPECT_EQ(calls[0].stream_id, kNoStream);
  EXPECT_EQ(calls[1].stream_id, 3u);
}

}  // namespace
}  // namespace libprof
