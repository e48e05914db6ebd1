#include "proto/trace_model.h"

#include <gtest/gtest.h>

#include <string>

namespace libprof {
namespace {

// Proves every enum value has the readable name profview prints, and out-of-range values (a
// newer file) read as "unknown" instead of crashing.
TEST(TraceModelTest, EnumNames) {
  EXPECT_STREQ(ToString(MemoryKind::kPageable), "pageable");
  EXPECT_STREQ(ToString(MemoryKind::kPinned), "pinned");
  EXPECT_STREQ(ToString(MemoryKind::kDevice), "device");
  EXPECT_STREQ(ToString(MemoryKind::kArray), "array");
  EXPECT_STREQ(ToString(MemoryKind::kManaged), "managed");
  EXPECT_STREQ(ToString(MemoryKind::kDeviceStatic), "device static");
  EXPECT_STREQ(ToString(MemoryKind::kManagedStatic), "managed static");
  EXPECT_STREQ(ToString(MemoryKind::kUnknown), "unknown");
  EXPECT_STREQ(ToString(static_cast<MemoryKind>(99)), "unknown");

  const char* copies[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                          "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  for (int i = 0; i <= 10; ++i) EXPECT_STREQ(ToString(static_cast<CopyKind>(i)), copies[i]);
  EXPECT_STREQ(ToString(static_cast<CopyKind>(11)), "unknown");

  EXPECT_STREQ(ToString(SyncType::kEventSynchronize), "event synchronize");
  EXPECT_STREQ(ToString(SyncType::kStreamWaitEvent), "stream wait event");
  EXPECT_STREQ(ToString(SyncType::kStreamSynchronize), "stream synchronize");
  EXPECT_STREQ(ToString(SyncType::kContextSynchronize), "context synchronize");
  EXPECT_STREQ(ToString(SyncType::kUnknown), "unknown");

  EXPECT_STREQ(ToString(NvtxKind::kPushPop), "push/pop");
  EXPECT_STREQ(ToString(NvtxKind::kStartEnd), "start/end");
  EXPECT_STREQ(ToString(NvtxKind::kMark), "mark");
  EXPECT_STREQ(ToString(NvtxKind::kUnknown), "unknown");

  EXPECT_STREQ(ToString(StreamType::kDefault), "default");
  EXPECT_STREQ(ToString(StreamType::kNonBlocking), "non-blocking");
  EXPECT_STREQ(ToString(StreamType::kNull), "null");
  EXPECT_STREQ(ToString(StreamType::kUnknown), "unknown");

  EXPECT_STREQ(ToString(ApiDomain::kRuntime), "runtime");
  EXPECT_STREQ(ToString(ApiDomain::kDriver), "driver");
  EXPECT_STREQ(ToString(ApiDomain::kInternalLaunch), "internal launch");
  EXPECT_STREQ(ToString(ApiDomain::kUnspecified), "unknown");
}

}  // namespace
}  // namespace libprof
