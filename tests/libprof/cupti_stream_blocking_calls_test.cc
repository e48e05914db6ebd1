// Tests of stream_blocking_calls: which calls enqueue a host function or a memory wait, the
// stream each names (from parameter structs as CUPTI hands them over), and the join of those
// streams onto the calls' records.
#include <cupti.h>
#include <gtest/gtest.h>

#include <vector>

#include "libprof/cupti/stream_blocking_calls.h"

namespace libprof {
namespace {

CUstream Handle(uintptr_t value) { return reinterpret_cast<CUstream>(value); }

TEST(StreamBlockingCallsTest, EveryFormOfTheCallsIsWatched) {
  EXPECT_EQ(StreamBlockingCbids(true).size(), 4u);
  EXPECT_EQ(StreamBlockingCbids(false).size(), 16u);
  CUstreamBatchMemOpParams wait{};
  wait.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  for (const bool runtime : {true, false}) {
    for (CUpti_CallbackId cbid : StreamBlockingCbids(runtime)) {
      // Each watched id reads its stream (an id not read would be noted with no stream). Every
      // struct starts with the stream; a batch's holds one wait.
      cuStreamBatchMemOp_params params{};
      params.count = 1;
      params.paramArray = &wait;
      EXPECT_TRUE(StreamBlockingCallStream(runtime, cbid, &params).has_value()) << cbid;
      EXPECT_FALSE(StreamBlockingCallStream(runtime, cbid, nullptr).has_value()) << cbid;
    }
  }
  cudaLaunchKernel_v7000_params launch{};
  EXPECT_FALSE(
      StreamBlockingCallStream(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch));
}

TEST(StreamBlockingCallsTest, StreamArgumentFromEachCall) {
  cudaLaunchHostFunc_v10000_params runtime{};
  runtime.stream = reinterpret_cast<cudaStream_t>(Handle(0x1234));
  auto arg =
      StreamBlockingCallStream(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000, &runtime);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, Handle(0x1234));
  EXPECT_FALSE(arg->per_thread);

  cuStreamAddCallback_params driver{};
  driver.hStream = Handle(0x5678);
  arg = StreamBlockingCallStream(false, CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback, &driver);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, Handle(0x5678));

  // A null stream in a per-thread-stream call is the thread's own stream; in the plain call,
  // the legacy default stream. The special handles say which they stand for.
  cudaLaunchHostFunc_ptsz_v10000_params ptsz{};
  arg = StreamBlockingCallStream(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000,
                                 &ptsz);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, nullptr);
  EXPECT_TRUE(arg->per_thread);
  cuLaunchHostFunc_params plain{};
  arg = StreamBlockingCallStream(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, &plain);
  ASSERT_TRUE(arg);
  EXPECT_FALSE(arg->per_thread);
  plain.hStream = CU_STREAM_PER_THREAD;
  arg = StreamBlockingCallStream(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, &plain);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, nullptr);
  EXPECT_TRUE(arg->per_thread);
  cuLaunchHostFunc_ptsz_params legacy{};
  legacy.hStream = CU_STREAM_LEGACY;
  arg = StreamBlockingCallStream(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz, &legacy);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, nullptr);
  EXPECT_FALSE(arg->per_thread);
}

// A memory wait holds its stream; a batch of memory operations only with a wait among them.
TEST(StreamBlockingCallsTest, MemoryWaitsNameTheirStream) {
  cuStreamWaitValue32_v2_params wait{};
  wait.stream = Handle(0x4321);
  auto arg = StreamBlockingCallStream(false, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2, &wait);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, Handle(0x4321));
  cuStreamWaitValue64_ptsz_params own{};
  arg = StreamBlockingCallStream(false, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz, &own);
  ASSERT_TRUE(arg);
  EXPECT_TRUE(arg->per_thread);

  CUstreamBatchMemOpParams ops[2]{};
  ops[0].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[1].operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  cuStreamBatchMemOp_v2_params batch{};
  batch.stream = Handle(0x99);
  batch.count = 2;
  batch.paramArray = ops;
  const CUpti_CallbackId cbid = CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2;
  EXPECT_FALSE(StreamBlockingCallStream(false, cbid, &batch));  // writes only
  ops[1].operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
  arg = StreamBlockingCallStream(false, cbid, &batch);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->stream, Handle(0x99));
  batch.paramArray = nullptr;
  EXPECT_FALSE(StreamBlockingCallStream(false, cbid, &batch));
}

TEST(StreamBlockingCallsTest, StreamsJoinTheirCallsRecords) {
  StreamBlockingCalls streams;
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

TEST(StreamBlockingCallsTest, CallsWhoseRecordsNeverCameAreForgottenOldestFirst) {
  StreamBlockingCalls streams;
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
