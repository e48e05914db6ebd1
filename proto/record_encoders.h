// The wire form of each record kind of proto/record_kinds.h: its field numbers in trace.proto and
// the function that writes its own fields. Everything a kind shares with the others (delta
// encoding of times and correlation ids per list, thread and kernel-shape interning, the Chunk
// field it goes in) is the chunk encoder's, reached through `c`, a ChunkEncoder list context
// (proto/chunk_encoder.cc) with StartDelta, CorrelationDelta, BaseDelta, ThreadIndex, ShapeId and
// NoteApiName. Proto3 leaves default values out, so every field is written only when it differs
// from 0 / false / "": that, the deltas and the interning keep a launch-loop record near 14
// bytes (tests/proto/trace_writer_test.cc, LaunchLoopIsCompact).
//
// tests/proto/trace_wire_test.cc checks every field number against the generated descriptor.
//
// Layer: proto/, writer side; protozero only (no libprotobuf: this is linked into libprof.so).
// Included by chunk_encoder.cc, trace_writer.cc (devices of the header) and the wire test only.
#pragma once

#include <cstdint>
#include <string>

#include "proto/proto3_writer.h"
#include "proto/trace_model.h"

namespace libprof {
namespace wire {
namespace api_call {
inline constexpr uint32_t kDomain = 1, kCallbackId = 2, kStartDeltaNs = 3, kDurationNs = 4,
                          kCorrelationDelta = 5, kThreadIndex = 6, kReturnValue = 7, kNested = 8,
                          kStackId = 11, kStreamIdPlusOne = 12;
}  // namespace api_call

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
                          kColorArgb = 9, kHasColor = 10, kDepth = 11, kOpen = 12, kRangeId = 13,
                          kPayloads = 14;
}  // namespace nvtx_event

namespace nvtx_payload {
inline constexpr uint32_t kSchemaId = 1, kData = 2;
}

namespace nvtx_payload_schema {
inline constexpr uint32_t kDomainId = 1, kSchemaId = 2, kNameId = 3, kSchemaType = 4, kFlags = 5,
                          kStaticSizeBytes = 6, kIsEnum = 7, kEntries = 8, kEnumValues = 9;
}

namespace nvtx_payload_entry {
inline constexpr uint32_t kFlags = 1, kType = 2, kNameId = 3, kArrayLength = 4, kOffsetBytes = 5,
                          kSizeBytes = 6;
}

namespace nvtx_payload_enum_value {
inline constexpr uint32_t kNameId = 1, kValue = 2, kIsFlag = 3;
}

namespace memory_op {
inline constexpr uint32_t kOperation = 1, kMemoryKind = 2, kAddress = 3, kBytes = 4,
                          kStartDeltaNs = 5, kCorrelationDelta = 6, kDeviceId = 7, kContextId = 8,
                          kStreamId = 9, kAsync = 10, kPoolAddress = 11, kPoolType = 12,
                          kPoolReleaseThreshold = 13, kPoolBytes = 14, kPoolUsedBytes = 15;
}  // namespace memory_op

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

namespace drop_report {
inline constexpr uint32_t kSource = 1, kCount = 2, kAtNs = 3;
}

namespace stack_module {
inline constexpr uint32_t kId = 1, kPathId = 2, kBuildId = 3, kExecutable = 4;
}

namespace stack_frame {
inline constexpr uint32_t kId = 1, kAddress = 2, kModuleId = 3, kModuleOffset = 4, kFunctionId = 5,
                          kFunctionOffset = 6;
}

namespace call_stack {
inline constexpr uint32_t kId = 1, kFrameIds = 2, kPythonFrames = 3;
}

namespace python_frame {
inline constexpr uint32_t kFileId = 1, kLine = 2, kFunctionId = 3;
}

namespace device {
inline constexpr uint32_t kId = 1, kName = 2, kUuid = 3, kSmCount = 4, kGlobalMemoryBytes = 5,
                          kComputeCapabilityMajor = 6, kComputeCapabilityMinor = 7, kPciBusId = 8,
                          kCoreClockKhz = 9, kMemoryClockKhz = 10, kMemoryBusWidthBits = 11,
                          kMaxThreadsPerBlock = 12, kL2CacheBytes = 13;
}  // namespace device

namespace context {
inline constexpr uint32_t kContextId = 1, kDeviceId = 2, kNullStreamId = 3, kComputeApi = 4,
                          kCreatedNs = 5, kCreatedThreadId = 6;
}

namespace stream {
inline constexpr uint32_t kStreamId = 1, kContextId = 2, kDeviceId = 3, kType = 4, kPriority = 5,
                          kCorrelationDelta = 6;
}  // namespace stream

namespace nvtx_domain {
inline constexpr uint32_t kId = 1, kNameId = 2;
}

namespace unified_memory_counter {
inline constexpr uint32_t kCounterKind = 1, kValue = 2, kStartDeltaNs = 3, kDurationNs = 4,
                          kAddress = 5, kSrcDeviceId = 6, kDstDeviceId = 7, kFlags = 8;
}  // namespace unified_memory_counter

}  // namespace wire

// ApiCall.domain spends nothing on the common case: the wire value 0 means RUNTIME there (and
// only there; ApiName uses the enum's own values). An unspecified domain is written as runtime.
inline ApiDomain NormalizeDomain(ApiDomain domain) {
  return domain == ApiDomain::kUnspecified ? ApiDomain::kRuntime : domain;
}
inline uint32_t ApiCallWireDomain(ApiDomain domain) {
  return domain == ApiDomain::kRuntime ? 0 : static_cast<uint32_t>(domain);
}

// A Device message (Header.devices and Chunk.devices).
inline void EncodeDevice(const DeviceInfo& device, std::string* out) {
  namespace f = wire::device;
  Proto3Writer w(out);
  w.Uint(f::kId, device.id);
  w.String(f::kName, device.name);
  w.Bytes(f::kUuid, device.uuid);
  w.Uint(f::kSmCount, device.sm_count);
  w.Uint(f::kGlobalMemoryBytes, device.global_memory_bytes);
  w.Uint(f::kComputeCapabilityMajor, device.compute_capability_major);
  w.Uint(f::kComputeCapabilityMinor, device.compute_capability_minor);
  w.String(f::kPciBusId, device.pci_bus_id);
  w.Uint(f::kCoreClockKhz, device.core_clock_khz);
  w.Uint(f::kMemoryClockKhz, device.memory_clock_khz);
  w.Uint(f::kMemoryBusWidthBits, device.memory_bus_width_bits);
  w.Uint(f::kMaxThreadsPerBlock, device.max_threads_per_block);
  w.Uint(f::kL2CacheBytes, device.l2_cache_bytes);
}

template <typename Context>
inline void Encode(const ApiCall& r, Context& c, std::string* out) {
  namespace f = wire::api_call;
  const ApiDomain domain = NormalizeDomain(r.domain);
  c.NoteApiName(domain, r.callback_id, r.name_id);
  Proto3Writer w(out);
  w.Uint(f::kDomain, ApiCallWireDomain(domain));
  w.Uint(f::kCallbackId, r.callback_id);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kThreadIndex, c.ThreadIndex(r.thread_id));
  w.Sint32(f::kReturnValue, r.return_value);
  w.Bool(f::kNested, r.nested);
  w.Uint(f::kStackId, r.stack_id);
  w.Uint(f::kStreamIdPlusOne, r.stream_id == kNoStream ? 0 : uint64_t{r.stream_id} + 1);
}

template <typename Context>
inline void Encode(const Kernel& r, Context& c, std::string* out) {
  namespace f = wire::kernel;
  const uint32_t shape_id = c.ShapeId(r.shape);
  Proto3Writer w(out);
  w.Uint(f::kShapeId, shape_id);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kGraphId, r.graph_id);
  w.Uint(f::kGraphNodeId, r.graph_node_id);
  w.Bool(f::kDeviceLaunched, r.device_launched);
}

template <typename Context>
inline void Encode(const Memcpy& r, Context& c, std::string* out) {
  namespace f = wire::memcpy_record;
  Proto3Writer w(out);
  w.Uint(f::kCopyKind, static_cast<uint32_t>(r.copy_kind));
  w.Uint(f::kSrcKind, static_cast<uint32_t>(r.src_kind));
  w.Uint(f::kDstKind, static_cast<uint32_t>(r.dst_kind));
  w.Uint(f::kBytes, r.bytes);
  w.Bool(f::kAsync, r.async);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kGraphId, r.graph_id);
  w.Uint(f::kGraphNodeId, r.graph_node_id);
  w.Uint(f::kSrcDeviceId, r.src_device_id);
  w.Uint(f::kDstDeviceId, r.dst_device_id);
}

template <typename Context>
inline void Encode(const Memset& r, Context& c, std::string* out) {
  namespace f = wire::memset_record;
  Proto3Writer w(out);
  w.Uint(f::kMemoryKind, static_cast<uint32_t>(r.memory_kind));
  w.Uint(f::kBytes, r.bytes);
  w.Uint(f::kValue, r.value);
  w.Bool(f::kAsync, r.async);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kGraphId, r.graph_id);
}

template <typename Context>
inline void Encode(const Synchronization& r, Context& c, std::string* out) {
  namespace f = wire::synchronization;
  Proto3Writer w(out);
  w.Uint(f::kType, static_cast<uint32_t>(r.type));
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kEventId, r.event_id);
  w.Uint(f::kEventSyncId, r.event_sync_id);
  w.Sint32(f::kReturnValue, r.return_value);
}

template <typename Context>
inline void Encode(const NvtxEvent& r, Context& c, std::string* out) {
  namespace f = wire::nvtx_event;
  Proto3Writer w(out);
  w.Uint(f::kKind, static_cast<uint32_t>(r.kind));
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Uint(f::kThreadIndex, c.ThreadIndex(r.thread_id));
  // Index 0 is a real thread, so an unset end thread (OS id 0) is interned like any other id:
  // exact round trip at the cost of one Chunk.threads entry.
  w.Uint(f::kEndThreadIndex, c.ThreadIndex(r.end_thread_id));
  w.Uint(f::kDomainId, r.domain_id);
  w.Uint(f::kMessageId, r.message_id);
  w.Uint(f::kCategory, r.category);
  w.Uint(f::kColorArgb, r.color_argb);
  w.Bool(f::kHasColor, r.has_color);
  w.Uint(f::kDepth, r.depth);
  w.Bool(f::kOpen, r.open);
  w.Uint(f::kRangeId, r.range_id);
  for (const NvtxPayload& payload : r.payloads) {
    std::string nested;
    Proto3Writer p(&nested);
    p.Uint(wire::nvtx_payload::kSchemaId, payload.schema_id);
    p.Bytes(wire::nvtx_payload::kData, payload.data);
    w.writer().add_message(f::kPayloads, nested);
  }
}

template <typename Context>
inline void Encode(const MemoryOp& r, Context& c, std::string* out) {
  namespace f = wire::memory_op;
  Proto3Writer w(out);
  w.Uint(f::kOperation, static_cast<uint32_t>(r.operation));
  w.Uint(f::kMemoryKind, static_cast<uint32_t>(r.memory_kind));
  w.Uint(f::kAddress, r.address);
  w.Uint(f::kBytes, r.bytes);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.time_ns));
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Bool(f::kAsync, r.async);
  w.Uint(f::kPoolAddress, r.pool_address);
  w.Uint(f::kPoolType, r.pool_type);
  w.Uint(f::kPoolReleaseThreshold, r.pool_release_threshold);
  w.Uint(f::kPoolBytes, r.pool_bytes);
  w.Uint(f::kPoolUsedBytes, r.pool_used_bytes);
}

template <typename Context>
inline void Encode(const CudaEvent& r, Context& c, std::string* out) {
  namespace f = wire::cuda_event;
  Proto3Writer w(out);
  w.Uint(f::kEventId, r.event_id);
  w.Uint(f::kSyncId, r.sync_id);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kDeviceId, r.device_id);
  if (r.device_timestamp_ns != 0) {
    // The field has explicit presence (proto3 `optional`): written even when the delta is 0, so
    // "recorded at the base time" differs from "not recorded".
    w.writer().add_sint64(f::kDeviceTimestampDeltaNs, c.BaseDelta(r.device_timestamp_ns));
  }
}

template <typename Context>
inline void Encode(const Overhead& r, Context& c, std::string* out) {
  namespace f = wire::overhead;
  Proto3Writer w(out);
  w.Uint(f::kOverheadKind, r.overhead_kind);
  w.Uint(f::kNameId, r.name_id);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Uint(f::kThreadIndex, c.ThreadIndex(r.thread_id));
}

template <typename Context>
inline void Encode(const GraphTrace& r, Context& c, std::string* out) {
  namespace f = wire::graph_trace;
  Proto3Writer w(out);
  w.Uint(f::kGraphId, r.graph_id);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kStreamId, r.stream_id);
}

template <typename Context>
inline void Encode(const DropReport& r, Context&, std::string* out) {
  namespace f = wire::drop_report;
  Proto3Writer w(out);
  w.String(f::kSource, r.source);
  w.Uint(f::kCount, r.count);
  w.Uint(f::kAtNs, r.at_ns);
}

template <typename Context>
inline void Encode(const StackModule& r, Context&, std::string* out) {
  namespace f = wire::stack_module;
  Proto3Writer w(out);
  w.Uint(f::kId, r.id);
  w.Uint(f::kPathId, r.path_id);
  w.String(f::kBuildId, r.build_id);
  w.Bool(f::kExecutable, r.executable);
}

template <typename Context>
inline void Encode(const StackFrame& r, Context&, std::string* out) {
  namespace f = wire::stack_frame;
  Proto3Writer w(out);
  w.Uint(f::kId, r.id);
  w.Uint(f::kAddress, r.address);
  w.Uint(f::kModuleId, r.module_id);
  w.Uint(f::kModuleOffset, r.module_offset);
  w.Uint(f::kFunctionId, r.function_id);
  w.Uint(f::kFunctionOffset, r.function_offset);
}

template <typename Context>
inline void Encode(const CallStack& r, Context&, std::string* out) {
  namespace f = wire::call_stack;
  Proto3Writer w(out);
  w.Uint(f::kId, r.id);
  if (!r.frame_ids.empty()) {
    w.writer().add_packed_uint32(f::kFrameIds, r.frame_ids.begin(), r.frame_ids.end());
  }
  for (const PythonFrame& p : r.python_frames) {
    namespace pf = wire::python_frame;
    protozero::pbf_writer frame(w.writer(), f::kPythonFrames);
    if (p.file_id != 0) frame.add_uint32(pf::kFileId, p.file_id);
    if (p.line != 0) frame.add_uint32(pf::kLine, p.line);
    if (p.function_id != 0) frame.add_uint32(pf::kFunctionId, p.function_id);
  }
}

template <typename Context>
inline void Encode(const DeviceInfo& r, Context&, std::string* out) {
  EncodeDevice(r, out);
}

template <typename Context>
inline void Encode(const ContextInfo& r, Context&, std::string* out) {
  namespace f = wire::context;
  Proto3Writer w(out);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kNullStreamId, r.null_stream_id);
  w.Uint(f::kComputeApi, r.compute_api);
  w.Uint(f::kCreatedNs, r.created_ns);
  w.Uint(f::kCreatedThreadId, r.created_thread_id);
}

template <typename Context>
inline void Encode(const StreamInfo& r, Context& c, std::string* out) {
  namespace f = wire::stream;
  Proto3Writer w(out);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kType, static_cast<uint32_t>(r.type));
  w.Sint32(f::kPriority, r.priority);
  w.Sint64(f::kCorrelationDelta, c.CorrelationDelta(r.correlation_id));
}

template <typename Context>
inline void Encode(const NvtxDomain& r, Context&, std::string* out) {
  namespace f = wire::nvtx_domain;
  Proto3Writer w(out);
  w.Uint(f::kId, r.id);
  w.Uint(f::kNameId, r.name_id);
}

template <typename Context>
inline void Encode(const UnifiedMemoryCounter& r, Context& c, std::string* out) {
  namespace f = wire::unified_memory_counter;
  Proto3Writer w(out);
  w.Uint(f::kCounterKind, static_cast<uint32_t>(r.counter_kind));
  w.Uint(f::kValue, r.value);
  w.Sint64(f::kStartDeltaNs, c.StartDelta(r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Uint(f::kAddress, r.address);
  w.Uint(f::kSrcDeviceId, r.src_device_id);
  w.Uint(f::kDstDeviceId, r.dst_device_id);
  w.Uint(f::kFlags, r.flags);
}

template <typename Context>
inline void Encode(const NvtxPayloadSchema& r, Context&, std::string* out) {
  namespace f = wire::nvtx_payload_schema;
  Proto3Writer w(out);
  w.Uint(f::kDomainId, r.domain_id);
  w.Uint(f::kSchemaId, r.schema_id);
  w.Uint(f::kNameId, r.name_id);
  w.Uint(f::kSchemaType, r.schema_type);
  w.Uint(f::kFlags, r.flags);
  w.Uint(f::kStaticSizeBytes, r.static_size_bytes);
  w.Bool(f::kIsEnum, r.is_enum);
  for (const NvtxPayloadEntry& entry : r.entries) {
    namespace e = wire::nvtx_payload_entry;
    std::string nested;
    Proto3Writer n(&nested);
    n.Uint(e::kFlags, entry.flags);
    n.Uint(e::kType, entry.type);
    n.Uint(e::kNameId, entry.name_id);
    n.Uint(e::kArrayLength, entry.array_length);
    n.Uint(e::kOffsetBytes, entry.offset_bytes);
    n.Uint(e::kSizeBytes, entry.size_bytes);
    w.writer().add_message(f::kEntries, nested);
  }
  for (const NvtxPayloadEnumValue& value : r.enum_values) {
    namespace v = wire::nvtx_payload_enum_value;
    std::string nested;
    Proto3Writer n(&nested);
    n.Uint(v::kNameId, value.name_id);
    n.Uint(v::kValue, value.value);
    n.Bool(v::kIsFlag, value.is_flag);
    w.writer().add_message(f::kEnumValues, nested);
  }
}

}  // namespace libprof
