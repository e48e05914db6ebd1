// Field numbers of proto/trace.proto, for the protozero-based writer (which has no generated
// code). tests/proto/trace_wire_test.cc checks every constant against the generated descriptor,
// so a schema edit that forgets this file fails a unit test instead of writing garbage.
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

namespace device {
inline constexpr uint32_t kId = 1, kName = 2, kUuid = 3, kSmCount = 4, kGlobalMemoryBytes = 5,
                          kComputeCapabilityMajor = 6, kComputeCapabilityMinor = 7, kPciBusId = 8,
                          kCoreClockKhz = 9, kMemoryClockKhz = 10, kMemoryBusWidthBits = 11,
                          kMaxThreadsPerBlock = 12, kL2CacheBytes = 13;
}  // namespace device

namespace chunk {
inline constexpr uint32_t kProcessIndex = 1, kSequence = 2, kBaseTimeNs = 3, kStrings = 4,
                          kThreads = 5, kApiNames = 6, kKernelShapes = 7, kApiCalls = 8,
                          kKernels = 9, kMemcpys = 10, kMemsets = 11, kSynchronizations = 12,
                          kNvtxEvents = 13, kMemoryOps = 14, kStreams = 15, kContexts = 16,
                          kCudaEvents = 17, kOverheads = 18, kDevices = 19, kNvtxDomains = 20,
                          kRunEnd = 21, kDrops = 22, kGraphTraces = 23, kRuntimeInfos = 24,
                          kStackModules = 25, kStackFrames = 26, kCallStacks = 27;
}  // namespace chunk

namespace interned_string {
inline constexpr uint32_t kId = 1, kValue = 2;
}

namespace api_name {
inline constexpr uint32_t kDomain = 1, kCallbackId = 2, kNameId = 3;
}

namespace api_call {
inline constexpr uint32_t kDomain = 1, kCallbackId = 2, kStartDeltaNs = 3, kDurationNs = 4,
                          kCorrelationDelta = 5, kThreadIndex = 6, kReturnValue = 7, kNested = 8,
                          kStackId = 11;
}  // namespace api_call

namespace stack_module {
inline constexpr uint32_t kId = 1, kPathId = 2, kBuildId = 3, kExecutable = 4;
}

namespace stack_frame {
inline constexpr uint32_t kId = 1, kAddress = 2, kModuleId = 3, kModuleOffset = 4,
                          kFunctionId = 5, kFunctionOffset = 6;
}

namespace call_stack {
inline constexpr uint32_t kId = 1, kFrameIds = 2;
}

namespace kernel_shape {
inline constexpr uint32_t kId = 1, kNameId = 2, kDemangledNameId = 3, kGrid = 4, kBlock = 5,
                          kRegistersPerThread = 6, kStaticSharedMemoryBytes = 7,
                          kDynamicSharedMemoryBytes = 8, kLocalMemoryPerThreadBytes = 9,
                          kDeviceId = 10, kContextId = 11, kCluster = 12,
                          kSharedMemoryConfigBytes = 13;
}  // namespace kernel_shape

namespace kernel {
inline constexpr uint32_t kShapeId = 1, kStartDeltaNs = 2, kDurationNs = 3, kCorrelationDelta = 4,
                          kStreamId = 5, kGraphId = 6, kGraphNodeId = 7, kDeviceLaunched = 8;
}  // namespace kernel

// memcpy/memset would read like the C functions: suffixed.
namespace memcpy_record {
inline constexpr uint32_t kCopyKind = 1, kSrcKind = 2, kDstKind = 3, kBytes = 4, kAsync = 5,
                          kStartDeltaNs = 6, kDurationNs = 7, kCorrelationDelta = 8, kDeviceId = 9,
                          kContextId = 10, kStreamId = 11, kGraphId = 12, kGraphNodeId = 13,
                          kSrcDeviceId = 14, kDstDeviceId = 15;
}  // namespace memcpy_record

namespace memset_record {
inline constexpr uint32_t kMemoryKind = 1, kBytes = 2, kValue = 3, kAsync = 4, kStartDeltaNs = 5,
                          kDurationNs = 6, kCorrelationDelta = 7, kDeviceId = 8, kContextId = 9,
                          kStreamId = 10, kGraphId = 11;
}  // namespace memset_record

namespace synchronization {
inline constexpr uint32_t kType = 1, kStartDeltaNs = 2, kDurationNs = 3, kCorrelationDelta = 4,
                          kContextId = 5, kStreamId = 6, kEventId = 7, kEventSyncId = 8,
                          kReturnValue = 9;
}  // namespace synchronization

namespace nvtx_event {
inline constexpr uint32_t kKind = 1, kStartDeltaNs = 2, kDurationNs = 3, kThreadIndex = 4,
                          kEndThreadIndex = 5, kDomainId = 6, kMessageId = 7, kCategory = 8,
                          kColorArgb = 9, kHasColor = 10, kDepth = 11, kOpen = 12, kRangeId = 13;
}  // namespace nvtx_event

namespace nvtx_domain {
inline constexpr uint32_t kId = 1, kNameId = 2;
}

namespace memory_op {
inline constexpr uint32_t kOperation = 1, kMemoryKind = 2, kAddress = 3, kBytes = 4,
                          kStartDeltaNs = 5, kCorrelationDelta = 6, kDeviceId = 7, kContextId = 8,
                          kStreamId = 9, kAsync = 10, kPoolAddress = 11, kPoolType = 12;
}  // namespace memory_op

namespace stream {
inline constexpr uint32_t kStreamId = 1, kContextId = 2, kDeviceId = 3, kType = 4, kPriority = 5,
                          kCorrelationDelta = 6;
}  // namespace stream

namespace context {
inline constexpr uint32_t kContextId = 1, kDeviceId = 2, kNullStreamId = 3, kComputeApi = 4;
}

namespace cuda_event {
inline constexpr uint32_t kEventId = 1, kSyncId = 2, kCorrelationDelta = 3, kContextId = 4,
                          kStreamId = 5, kDeviceId = 6, kDeviceTimestampDeltaNs = 7;
}  // namespace cuda_event

namespace overhead {
inline constexpr uint32_t kOverheadKind = 1, kNameId = 2, kStartDeltaNs = 3, kDurationNs = 4,
                          kThreadIndex = 5;
}  // namespace overhead

namespace graph_trace {
inline constexpr uint32_t kGraphId = 1, kStartDeltaNs = 2, kDurationNs = 3, kCorrelationDelta = 4,
                          kDeviceId = 5, kStreamId = 6;
}  // namespace graph_trace

namespace runtime_info {
inline constexpr uint32_t kCudaRuntimeVersion = 1;
}

namespace drop_report {
inline constexpr uint32_t kSource = 1, kCount = 2, kAtNs = 3;
}

namespace run_end {
inline constexpr uint32_t kEndTimeNs = 1, kReason = 2, kRecordsWritten = 3, kRecordsDropped = 4,
                          kChunksWritten = 5;
}  // namespace run_end

}  // namespace libprof::wire
