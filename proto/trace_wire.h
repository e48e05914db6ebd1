// Field numbers of proto/trace.proto's file, header and chunk framing, for the protozero-based
// writer (which has no generated code); those of the record kinds are beside their encoders in
// proto/record_encoders.h. tests/proto/trace_wire_test.cc checks every constant against the
// generated descriptor, so a schema edit that forgets this file fails a unit test instead of
// writing garbage.
//
// Layer: proto/, writer side. Header-only, no dependencies.
#pragma once

#include <cstdint>

namespace libprof::wire {

namespace trace_file {
inline constexpr uint32_t kHeader = 1, kChunk = 2;
}  // namespace trace_file

namespace header {
inline constexpr uint32_t kFormat = 1, kSchemaVersion = 2, kLibprofVersion = 3, kPid = 4,
                          kParentPid = 5, kHostname = 6, kCommandLine = 7, kStartWallTimeNs = 8,
                          kTimebase = 9, kWallClockOffsetNs = 10, kStartTimeNs = 11,
                          kCudaDriverVersion = 12, kCudaRuntimeVersion = 13, kCuptiVersion = 14,
                          kCuptiPath = 15, kDevices = 16, kSettings = 17, kCaptureStatus = 18,
                          kRank = 19, kRankSource = 20;
// A map<string, string> entry is a message {1: key, 2: value}.
inline constexpr uint32_t kMapKey = 1, kMapValue = 2;
}  // namespace header

namespace chunk {
// The chunk's own fields and definitions; the record lists' numbers are in proto/record_kinds.h.
inline constexpr uint32_t kProcessIndex = 1, kSequence = 2, kBaseTimeNs = 3, kStrings = 4,
                          kThreads = 5, kApiNames = 6, kKernelShapes = 7, kRunEnd = 21,
                          kRuntimeInfos = 24;
}  // namespace chunk

namespace interned_string {
inline constexpr uint32_t kId = 1, kValue = 2;
}

namespace api_name {
inline constexpr uint32_t kDomain = 1, kCallbackId = 2, kNameId = 3;
}

// The key under which the writer and the reader keep an ApiName: (domain << 32 | callback id).
// `Domain` is ApiDomain (proto/trace_model.h), a template so that this header needs nothing.
template <typename Domain>
constexpr uint64_t ApiNameKey(Domain domain, uint32_t callback_id) {
  return uint64_t{static_cast<uint8_t>(domain)} << 32 | callback_id;
}

namespace kernel_shape {
inline constexpr uint32_t kId = 1, kNameId = 2, kDemangledNameId = 3, kGrid = 4, kBlock = 5,
                          kRegistersPerThread = 6, kStaticSharedMemoryBytes = 7,
                          kDynamicSharedMemoryBytes = 8, kLocalMemoryPerThreadBytes = 9,
                          kDeviceId = 10, kContextId = 11, kCluster = 12,
                          kSharedMemoryConfigBytes = 13;
}  // namespace kernel_shape

namespace runtime_info {
inline constexpr uint32_t kCudaRuntimeVersion = 1;
}

namespace run_end {
inline constexpr uint32_t kEndTimeNs = 1, kReason = 2, kRecordsWritten = 3, kRecordsDropped = 4,
                          kChunksWritten = 5;
}  // namespace run_end

}  // namespace libprof::wire
