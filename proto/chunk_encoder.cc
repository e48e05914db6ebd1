// Encodes model records into Chunk messages with protozero. Proto3 leaves default values out, so
// every field below is written only when it differs from 0 / false / "": that, the per-list
// deltas and the interning are what keep a launch-loop record near 14 bytes (measured by
// tests/proto/trace_writer_test.cc, LaunchLoopIsCompact).
#include "proto/chunk_encoder.h"

#include <protozero/pbf_writer.hpp>

#include "proto/proto3_writer.h"
#include "proto/trace_wire.h"

namespace libprof {
namespace {

// ApiCall.domain spends nothing on the common case: the wire value 0 means RUNTIME there (and
// only there; ApiName uses the enum's own values). An unspecified domain is written as runtime.
ApiDomain NormalizeDomain(ApiDomain domain) {
  return domain == ApiDomain::kUnspecified ? ApiDomain::kRuntime : domain;
}
uint32_t ApiCallWireDomain(ApiDomain domain) {
  return domain == ApiDomain::kRuntime ? 0 : static_cast<uint32_t>(domain);
}

uint64_t ApiNameKey(ApiDomain domain, uint32_t callback_id) {
  return uint64_t{static_cast<uint8_t>(domain)} << 32 | callback_id;
}

void EncodeShape(uint32_t id, const KernelShape& shape, std::string* out) {
  namespace f = wire::kernel_shape;
  Proto3Writer w(out);
  w.Uint(f::kId, id);
  w.Uint(f::kNameId, shape.name_id);
  w.Uint(f::kDemangledNameId, shape.demangled_name_id);
  w.Xyz(f::kGrid, shape.grid);
  w.Xyz(f::kBlock, shape.block);
  w.Uint(f::kRegistersPerThread, shape.registers_per_thread);
  w.Uint(f::kStaticSharedMemoryBytes, shape.static_shared_memory_bytes);
  w.Uint(f::kDynamicSharedMemoryBytes, shape.dynamic_shared_memory_bytes);
  w.Uint(f::kLocalMemoryPerThreadBytes, shape.local_memory_per_thread_bytes);
  w.Uint(f::kDeviceId, shape.device_id);
  w.Uint(f::kContextId, shape.context_id);
  w.Xyz(f::kCluster, shape.cluster);
  w.Uint(f::kSharedMemoryConfigBytes, shape.shared_memory_config_bytes);
}

void HashCombine(size_t* seed, uint64_t value) {
  *seed ^= std::hash<uint64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2);
}

}  // namespace

void EncodeDevice(const DeviceInfo& device, std::string* out) {
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

size_t TraceWriter::ChunkEncoder::ShapeHash::operator()(const KernelShape& s) const {
  size_t seed = 0;
  for (uint64_t v :
       {uint64_t{s.name_id}, uint64_t{s.demangled_name_id}, uint64_t{s.grid[0]},
        uint64_t{s.grid[1]}, uint64_t{s.grid[2]}, uint64_t{s.block[0]}, uint64_t{s.block[1]},
        uint64_t{s.block[2]}, uint64_t{s.cluster[0]}, uint64_t{s.cluster[1]},
        uint64_t{s.cluster[2]}, uint64_t{s.registers_per_thread},
        uint64_t{s.static_shared_memory_bytes}, uint64_t{s.dynamic_shared_memory_bytes},
        uint64_t{s.local_memory_per_thread_bytes}, uint64_t{s.shared_memory_config_bytes},
        uint64_t{s.device_id}, uint64_t{s.context_id}}) {
    HashCombine(&seed, v);
  }
  return seed;
}

TraceWriter::ChunkEncoder::ChunkEncoder(size_t reserve_bytes) {
  // The chunk is closed once it passes chunk_bytes; room for one more record and the
  // definitions avoids regrowing the buffer at every chunk.
  body_.reserve(reserve_bytes + reserve_bytes / 8);
}

int64_t TraceWriter::ChunkEncoder::StartDelta(List list, uint64_t start_ns) {
  if (!has_base_) {
    // The chunk's first timed record defines the base, so its own delta is 0.
    has_base_ = true;
    base_time_ns_ = start_ns;
    previous_start_.fill(start_ns);
  }
  // Unsigned difference cast to signed: exact modulo 2^64, so any pair of times round-trips.
  const int64_t delta = static_cast<int64_t>(start_ns - previous_start_[list]);
  previous_start_[list] = start_ns;
  return delta;
}

int64_t TraceWriter::ChunkEncoder::CorrelationDelta(List list, uint64_t correlation_id) {
  const int64_t delta = static_cast<int64_t>(correlation_id - previous_correlation_[list]);
  previous_correlation_[list] = correlation_id;
  return delta;
}

uint32_t TraceWriter::ChunkEncoder::ThreadIndex(uint32_t tid) {
  auto [it, inserted] = thread_index_.try_emplace(tid, static_cast<uint32_t>(thread_index_.size()));
  if (inserted) new_threads_.push_back(tid);
  return it->second;
}

uint32_t TraceWriter::ChunkEncoder::ShapeId(const KernelShape& shape) {
  auto [it, inserted] = shape_ids_.try_emplace(shape, static_cast<uint32_t>(shape_ids_.size()));
  if (inserted) new_shapes_.emplace_back(it->second, &it->first);
  return it->second;
}

void TraceWriter::ChunkEncoder::NoteApiName(ApiDomain domain, uint32_t callback_id,
                                            uint32_t name_id) {
  // The name is a function of (domain, callback id); the first one seen is the one written.
  const uint64_t key = ApiNameKey(domain, callback_id);
  if (api_names_.try_emplace(key, name_id).second) new_api_names_.emplace_back(key, name_id);
}

void TraceWriter::ChunkEncoder::CommitRecord(uint32_t field) {
  protozero::pbf_writer(body_).add_message(field, scratch_);
}

void TraceWriter::ChunkEncoder::Add(const ApiCall& r) {
  namespace f = wire::api_call;
  const ApiDomain domain = NormalizeDomain(r.domain);
  NoteApiName(domain, r.callback_id, r.name_id);
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kDomain, ApiCallWireDomain(domain));
  w.Uint(f::kCallbackId, r.callback_id);
  w.Sint64(f::kStartDeltaNs, StartDelta(kApi, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kApi, r.correlation_id));
  w.Uint(f::kThreadIndex, ThreadIndex(r.thread_id));
  w.Sint32(f::kReturnValue, r.return_value);
  w.Bool(f::kNested, r.nested);
  w.Uint(f::kStackId, r.stack_id);
  CommitRecord(wire::chunk::kApiCalls);
}

void TraceWriter::ChunkEncoder::Add(const Kernel& r) {
  namespace f = wire::kernel;
  const uint32_t shape_id = ShapeId(r.shape);
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kShapeId, shape_id);
  w.Sint64(f::kStartDeltaNs, StartDelta(kKernel, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kKernel, r.correlation_id));
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kGraphId, r.graph_id);
  w.Uint(f::kGraphNodeId, r.graph_node_id);
  w.Bool(f::kDeviceLaunched, r.device_launched);
  CommitRecord(wire::chunk::kKernels);
}

void TraceWriter::ChunkEncoder::Add(const Memcpy& r) {
  namespace f = wire::memcpy_record;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kCopyKind, static_cast<uint32_t>(r.copy_kind));
  w.Uint(f::kSrcKind, static_cast<uint32_t>(r.src_kind));
  w.Uint(f::kDstKind, static_cast<uint32_t>(r.dst_kind));
  w.Uint(f::kBytes, r.bytes);
  w.Bool(f::kAsync, r.async);
  w.Sint64(f::kStartDeltaNs, StartDelta(kMemcpy, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kMemcpy, r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kGraphId, r.graph_id);
  w.Uint(f::kGraphNodeId, r.graph_node_id);
  w.Uint(f::kSrcDeviceId, r.src_device_id);
  w.Uint(f::kDstDeviceId, r.dst_device_id);
  CommitRecord(wire::chunk::kMemcpys);
}

void TraceWriter::ChunkEncoder::Add(const Memset& r) {
  namespace f = wire::memset_record;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kMemoryKind, static_cast<uint32_t>(r.memory_kind));
  w.Uint(f::kBytes, r.bytes);
  w.Uint(f::kValue, r.value);
  w.Bool(f::kAsync, r.async);
  w.Sint64(f::kStartDeltaNs, StartDelta(kMemset, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kMemset, r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kGraphId, r.graph_id);
  CommitRecord(wire::chunk::kMemsets);
}

void TraceWriter::ChunkEncoder::Add(const Synchronization& r) {
  namespace f = wire::synchronization;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kType, static_cast<uint32_t>(r.type));
  w.Sint64(f::kStartDeltaNs, StartDelta(kSync, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kSync, r.correlation_id));
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kEventId, r.event_id);
  w.Uint(f::kEventSyncId, r.event_sync_id);
  w.Sint32(f::kReturnValue, r.return_value);
  CommitRecord(wire::chunk::kSynchronizations);
}

void TraceWriter::ChunkEncoder::Add(const NvtxEvent& r) {
  namespace f = wire::nvtx_event;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kKind, static_cast<uint32_t>(r.kind));
  w.Sint64(f::kStartDeltaNs, StartDelta(kNvtx, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Uint(f::kThreadIndex, ThreadIndex(r.thread_id));
  // Index 0 is a real thread, so an unset end thread (OS id 0) is interned like any other id:
  // exact round trip at the cost of one Chunk.threads entry.
  w.Uint(f::kEndThreadIndex, ThreadIndex(r.end_thread_id));
  w.Uint(f::kDomainId, r.domain_id);
  w.Uint(f::kMessageId, r.message_id);
  w.Uint(f::kCategory, r.category);
  w.Uint(f::kColorArgb, r.color_argb);
  w.Bool(f::kHasColor, r.has_color);
  w.Uint(f::kDepth, r.depth);
  w.Bool(f::kOpen, r.open);
  w.Uint(f::kRangeId, r.range_id);
  CommitRecord(wire::chunk::kNvtxEvents);
}

void TraceWriter::ChunkEncoder::Add(const NvtxDomain& r) {
  namespace f = wire::nvtx_domain;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kId, r.id);
  w.Uint(f::kNameId, r.name_id);
  CommitRecord(wire::chunk::kNvtxDomains);
}

void TraceWriter::ChunkEncoder::Add(const MemoryOp& r) {
  namespace f = wire::memory_op;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kOperation, static_cast<uint32_t>(r.operation));
  w.Uint(f::kMemoryKind, static_cast<uint32_t>(r.memory_kind));
  w.Uint(f::kAddress, r.address);
  w.Uint(f::kBytes, r.bytes);
  w.Sint64(f::kStartDeltaNs, StartDelta(kMemoryOp, r.time_ns));
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kMemoryOp, r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Bool(f::kAsync, r.async);
  w.Uint(f::kPoolAddress, r.pool_address);
  w.Uint(f::kPoolType, r.pool_type);
  CommitRecord(wire::chunk::kMemoryOps);
}

void TraceWriter::ChunkEncoder::Add(const StreamInfo& r) {
  namespace f = wire::stream;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kType, static_cast<uint32_t>(r.type));
  w.Sint32(f::kPriority, r.priority);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kStream, r.correlation_id));
  CommitRecord(wire::chunk::kStreams);
}

void TraceWriter::ChunkEncoder::Add(const ContextInfo& r) {
  namespace f = wire::context;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kNullStreamId, r.null_stream_id);
  w.Uint(f::kComputeApi, r.compute_api);
  CommitRecord(wire::chunk::kContexts);
}

void TraceWriter::ChunkEncoder::Add(const CudaEvent& r) {
  namespace f = wire::cuda_event;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kEventId, r.event_id);
  w.Uint(f::kSyncId, r.sync_id);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kCudaEvent, r.correlation_id));
  w.Uint(f::kContextId, r.context_id);
  w.Uint(f::kStreamId, r.stream_id);
  w.Uint(f::kDeviceId, r.device_id);
  if (r.device_timestamp_ns != 0) {
    if (!has_base_) StartDelta(kCudaEvent, r.device_timestamp_ns);  // only to set the base
    // The field has explicit presence (proto3 `optional`): written even when the delta is 0, so
    // "recorded at the base time" differs from "not recorded".
    w.writer().add_sint64(f::kDeviceTimestampDeltaNs,
                          static_cast<int64_t>(r.device_timestamp_ns - base_time_ns_));
  }
  CommitRecord(wire::chunk::kCudaEvents);
}

void TraceWriter::ChunkEncoder::Add(const Overhead& r) {
  namespace f = wire::overhead;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kOverheadKind, r.overhead_kind);
  w.Uint(f::kNameId, r.name_id);
  w.Sint64(f::kStartDeltaNs, StartDelta(kOverhead, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Uint(f::kThreadIndex, ThreadIndex(r.thread_id));
  CommitRecord(wire::chunk::kOverheads);
}

void TraceWriter::ChunkEncoder::Add(const DeviceInfo& r) {
  scratch_.clear();
  EncodeDevice(r, &scratch_);
  CommitRecord(wire::chunk::kDevices);
}

void TraceWriter::ChunkEncoder::Add(const GraphTrace& r) {
  namespace f = wire::graph_trace;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kGraphId, r.graph_id);
  w.Sint64(f::kStartDeltaNs, StartDelta(kGraph, r.start_ns));
  w.Uint(f::kDurationNs, r.end_ns - r.start_ns);
  w.Sint64(f::kCorrelationDelta, CorrelationDelta(kGraph, r.correlation_id));
  w.Uint(f::kDeviceId, r.device_id);
  w.Uint(f::kStreamId, r.stream_id);
  CommitRecord(wire::chunk::kGraphTraces);
}

void TraceWriter::ChunkEncoder::Add(const DropReport& r) {
  namespace f = wire::drop_report;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.String(f::kSource, r.source);
  w.Uint(f::kCount, r.count);
  w.Uint(f::kAtNs, r.at_ns);
  CommitRecord(wire::chunk::kDrops);
}

void TraceWriter::ChunkEncoder::Add(const StackModule& r) {
  namespace f = wire::stack_module;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kId, r.id);
  w.Uint(f::kPathId, r.path_id);
  w.String(f::kBuildId, r.build_id);
  w.Bool(f::kExecutable, r.executable);
  CommitRecord(wire::chunk::kStackModules);
}

void TraceWriter::ChunkEncoder::Add(const StackFrame& r) {
  namespace f = wire::stack_frame;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kId, r.id);
  w.Uint(f::kAddress, r.address);
  w.Uint(f::kModuleId, r.module_id);
  w.Uint(f::kModuleOffset, r.module_offset);
  w.Uint(f::kFunctionId, r.function_id);
  w.Uint(f::kFunctionOffset, r.function_offset);
  CommitRecord(wire::chunk::kStackFrames);
}

void TraceWriter::ChunkEncoder::Add(const CallStack& r) {
  namespace f = wire::call_stack;
  scratch_.clear();
  Proto3Writer w(&scratch_);
  w.Uint(f::kId, r.id);
  if (!r.frame_ids.empty()) {
    w.writer().add_packed_uint32(f::kFrameIds, r.frame_ids.begin(), r.frame_ids.end());
  }
  CommitRecord(wire::chunk::kCallStacks);
}

void TraceWriter::ChunkEncoder::AddRuntimeVersion(uint32_t cuda_runtime_version) {
  scratch_.clear();
  Proto3Writer(&scratch_).Uint(wire::runtime_info::kCudaRuntimeVersion, cuda_runtime_version);
  CommitRecord(wire::chunk::kRuntimeInfos);
}

void TraceWriter::ChunkEncoder::SetRunEnd(const RunEnd& run_end) { run_end_ = run_end; }

const std::string& TraceWriter::ChunkEncoder::Close(const StringInterner& strings,
                                                    uint64_t sequence, uint32_t process_index) {
  Proto3Writer chunk(&body_);
  // Definitions go after the records that use them: protobuf parsers collect a repeated field's
  // elements wherever they appear, and only now do we know which definitions this chunk needs.
  new_strings_.clear();
  strings.CollectFrom(string_watermark_, &new_strings_);
  for (const auto& [id, value] : new_strings_) {
    scratch_.clear();
    Proto3Writer w(&scratch_);
    w.Uint(wire::interned_string::kId, id);
    w.String(wire::interned_string::kValue, value);
    CommitRecord(wire::chunk::kStrings);
  }
  if (!new_strings_.empty()) string_watermark_ = new_strings_.back().first + 1;
  if (!new_threads_.empty()) {
    chunk.writer().add_packed_uint32(wire::chunk::kThreads, new_threads_.begin(),
                                     new_threads_.end());
  }
  for (const auto& [key, name_id] : new_api_names_) {
    scratch_.clear();
    Proto3Writer w(&scratch_);
    w.Uint(wire::api_name::kDomain, key >> 32);
    w.Uint(wire::api_name::kCallbackId, key & 0xFFFFFFFFu);
    w.Uint(wire::api_name::kNameId, name_id);
    CommitRecord(wire::chunk::kApiNames);
  }
  for (const auto& [id, shape] : new_shapes_) {
    scratch_.clear();
    EncodeShape(id, *shape, &scratch_);
    CommitRecord(wire::chunk::kKernelShapes);
  }
  if (run_end_) {
    namespace f = wire::run_end;
    scratch_.clear();
    Proto3Writer w(&scratch_);
    w.Uint(f::kEndTimeNs, run_end_->end_time_ns);
    w.String(f::kReason, run_end_->reason);
    w.Uint(f::kRecordsWritten, run_end_->records_written);
    w.Uint(f::kRecordsDropped, run_end_->records_dropped);
    w.Uint(f::kChunksWritten, run_end_->chunks_written);
    CommitRecord(wire::chunk::kRunEnd);
  }
  chunk.Uint(wire::chunk::kBaseTimeNs, base_time_ns_);
  chunk.Uint(wire::chunk::kSequence, sequence);
  chunk.Uint(wire::chunk::kProcessIndex, process_index);
  return body_;
}

void TraceWriter::ChunkEncoder::StartNextChunk() {
  body_.clear();
  run_end_.reset();
  has_base_ = false;
  base_time_ns_ = 0;
  previous_start_.fill(0);
  previous_correlation_.fill(0);
  new_threads_.clear();
  new_api_names_.clear();
  new_shapes_.clear();
  new_strings_.clear();
}

}  // namespace libprof
