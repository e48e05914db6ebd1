#include "libprof/cupti/activity_decoder.h"

#include <cstdlib>
#include <string>

namespace libprof {
namespace {

// CUPTI stores copy and memory kinds as bytes; anything past the values this build knows is
// reported as unknown rather than cast into an enum value the model does not have.
CopyKind ToCopyKind(uint32_t value) {
  return value <= CUPTI_ACTIVITY_MEMCPY_KIND_PTOP ? static_cast<CopyKind>(value)
                                                  : CopyKind::kUnknown;
}

MemoryKind ToMemoryKind(uint32_t value) {
  return value <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC ? static_cast<MemoryKind>(value)
                                                            : MemoryKind::kUnknown;
}

SyncType ToSyncType(uint32_t value) {
  return value <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
             ? static_cast<SyncType>(value)
             : SyncType::kUnknown;
}

StreamType ToStreamType(uint32_t flag) {
  // The flag word is a mask (CUPTI_ACTIVITY_STREAM_CREATE_MASK); its low part is the type.
  uint32_t type = flag & CUPTI_ACTIVITY_STREAM_CREATE_MASK;
  return type <= CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL ? static_cast<StreamType>(type)
                                                        : StreamType::kUnknown;
}

MemoryOperation ToMemoryOperation(uint32_t value) {
  return value <= CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? static_cast<MemoryOperation>(value)
                                                               : MemoryOperation::kUnknown;
}

std::array<uint32_t, 3> Dims(int32_t x, int32_t y, int32_t z) {
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(z)};
}

// CUPTI records are read through the struct of their kind; every struct starts with `kind`.
template <typename T>
T& As(const CUpti_Activity* record) {
  return *reinterpret_cast<T*>(const_cast<CUpti_Activity*>(record));
}

const char* CallbackName(const CuptiApi& api, ApiDomain domain, uint32_t callback_id) {
  // Internal launches are driver launches made outside any public API function.
  CUpti_CallbackDomain cupti_domain =
      domain == ApiDomain::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const char* name = nullptr;
  if (api.cuptiGetCallbackName == nullptr ||
      api.cuptiGetCallbackName(cupti_domain, callback_id, &name) != CUPTI_SUCCESS) {
    return nullptr;
  }
  return name;
}

}  // namespace

const char* OverheadKindName(uint32_t overhead_kind) {
  switch (overhead_kind) {
    case CUPTI_ACTIVITY_OVERHEAD_UNKNOWN:
      return "unknown";
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "cupti buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "runtime triggered module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
      return "UVM activity init";
    default:
      return nullptr;
  }
}

ActivityDecoder::ActivityDecoder(const CuptiApi& api, StringInterner& strings)
    : ActivityDecoder(api.layout, strings, [&api](ApiDomain domain, uint32_t id) {
        return CallbackName(api, domain, id);
      }) {}

ActivityDecoder::ActivityDecoder(const RecordLayout& layout, StringInterner& strings,
                                 ApiNameLookup names)
    : layout_(layout),
      strings_(strings),
      api_names_(std::move(names), strings),
      kernel_names_(strings) {}

bool ActivityDecoder::Decode(const CUpti_Activity* record, TraceRecords* out) {
  if (record == nullptr || !layout_.supported) return false;
  // The buffer is ours (CUPTI fills buffers we hand it), so Device and Overhead records may be
  // written to, to clear the pointers we free.
  try {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
      case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
        DecodeApi(As<CUpti_ActivityAPI>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        DecodeKernel(As<CUpti_ActivityKernel10>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        DecodeMemcpy(As<CUpti_ActivityMemcpy6>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        DecodePeerMemcpy(As<CUpti_ActivityMemcpyPtoP4>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        DecodeMemset(As<CUpti_ActivityMemset4>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        DecodeSynchronization(As<CUpti_ActivitySynchronization2>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        DecodeCudaEvent(As<CUpti_ActivityCudaEvent2>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_STREAM:
        DecodeStream(As<CUpti_ActivityStream>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_CONTEXT:
        DecodeContext(As<CUpti_ActivityContext3>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        DecodeDevice(As<CUpti_ActivityDevice5>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        DecodeMemory(As<CUpti_ActivityMemory4>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        DecodeOverhead(As<CUpti_ActivityOverhead3>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        DecodeGraphTrace(As<CUpti_ActivityGraphTrace2>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
        DecodeUnifiedMemory(As<CUpti_ActivityUnifiedMemoryCounter3>(record), out);
        break;
      default:
        ++stats_.unknown_kinds;
        stats_.last_unknown_kind = static_cast<uint32_t>(record->kind);
        return false;
    }
  } catch (...) {
    ++stats_.failed;
    return false;
  }
  ++stats_.decoded;
  return true;
}

void ActivityDecoder::DecodeApi(const CUpti_ActivityAPI& r, TraceRecords* out) {
  ApiCall call;
  call.domain = r.kind == CUPTI_ACTIVITY_KIND_RUNTIME  ? ApiDomain::kRuntime
                : r.kind == CUPTI_ACTIVITY_KIND_DRIVER ? ApiDomain::kDriver
                                                       : ApiDomain::kInternalLaunch;
  call.callback_id = r.cbid;
  call.start_ns = r.start;
  call.end_ns = r.end;
  call.correlation_id = r.correlationId;
  call.thread_id = r.threadId;
  call.return_value = static_cast<int32_t>(r.returnValue);
  AddApiCall(call, out);
}

void ActivityDecoder::AddApiCall(ApiCall call, TraceRecords* out) {
  call.name_id = api_names_.NameId(call.domain, call.callback_id);
  out->api_calls.push_back(call);
}

void ActivityDecoder::DecodeKernel(const CUpti_ActivityKernel10& r, TraceRecords* out) {
  Kernel kernel;
  KernelShape& shape = kernel.shape;
  KernelNameIds names = kernel_names_.Get(r.name);
  shape.name_id = names.name_id;
  shape.demangled_name_id = names.demangled_id;
  shape.grid = Dims(r.gridX, r.gridY, r.gridZ);
  shape.block = Dims(r.blockX, r.blockY, r.blockZ);
  // The model's "no cluster" is all zeros; a launch without clusters may report 0 in any of them.
  if (r.clusterX != 0 && r.clusterY != 0 && r.clusterZ != 0) {
    shape.cluster = {r.clusterX, r.clusterY, r.clusterZ};
  }
  shape.registers_per_thread = r.registersPerThread;
  shape.static_shared_memory_bytes = static_cast<uint32_t>(r.staticSharedMemory);
  shape.dynamic_shared_memory_bytes = static_cast<uint32_t>(r.dynamicSharedMemory);
  shape.local_memory_per_thread_bytes = r.localMemoryPerThread;
  shape.shared_memory_config_bytes = r.sharedMemoryExecuted;
  shape.device_id = r.deviceId;
  shape.context_id = r.contextId;
  // start == end == 0 means CUPTI could not time the kernel: kept as is, the analysis skips it.
  kernel.start_ns = r.start;
  kernel.end_ns = r.end;
  kernel.correlation_id = r.correlationId;
  kernel.stream_id = r.streamId;
  kernel.graph_id = r.graphId;
  kernel.graph_node_id = r.graphNodeId;
  kernel.device_launched = layout_.kernel_is_device_launched && r.isDeviceLaunched != 0;
  out->kernels.push_back(kernel);
}

namespace {

// The fields CUpti_ActivityMemcpy6 and CUpti_ActivityMemcpyPtoP4 share, by name.
template <typename CuptiCopy>
Memcpy CommonCopyFields(const CuptiCopy& r) {
  Memcpy copy;
  copy.copy_kind = ToCopyKind(r.copyKind);
  copy.src_kind = ToMemoryKind(r.srcKind);
  copy.dst_kind = ToMemoryKind(r.dstKind);
  copy.bytes = r.bytes;
  copy.async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  copy.start_ns = r.start;
  copy.end_ns = r.end;
  // correlationId, not runtimeCorrelationId: the latter read 0 on a real run (cupti-facts.md 2.3).
  copy.correlation_id = r.correlationId;
  copy.device_id = r.deviceId;
  copy.context_id = r.contextId;
  copy.stream_id = r.streamId;
  copy.graph_id = r.graphId;
  copy.graph_node_id = r.graphNodeId;
  return copy;
}

}  // namespace

void ActivityDecoder::DecodeMemcpy(const CUpti_ActivityMemcpy6& r, TraceRecords* out) {
  out->memcpys.push_back(CommonCopyFields(r));
}

void ActivityDecoder::DecodePeerMemcpy(const CUpti_ActivityMemcpyPtoP4& r, TraceRecords* out) {
  Memcpy copy = CommonCopyFields(r);
  copy.src_device_id = r.srcDeviceId;
  copy.dst_device_id = r.dstDeviceId;
  out->memcpys.push_back(copy);
}

void ActivityDecoder::DecodeMemset(const CUpti_ActivityMemset4& r, TraceRecords* out) {
  Memset set;
  set.memory_kind = ToMemoryKind(r.memoryKind);
  set.bytes = r.bytes;
  set.value = r.value;
  set.async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
  set.start_ns = r.start;
  set.end_ns = r.end;
  set.correlation_id = r.correlationId;
  set.device_id = r.deviceId;
  set.context_id = r.contextId;
  set.stream_id = r.streamId;
  set.graph_id = r.graphId;
  out->memsets.push_back(set);
}

void ActivityDecoder::DecodeSynchronization(const CUpti_ActivitySynchronization2& r,
                                            TraceRecords* out) {
  // cudaStreamQuery/cudaEventQuery on unfinished work also come here, typed STREAM_/EVENT_-
  // SYNCHRONIZE with returnValue 600 (CUDA_ERROR_NOT_READY): polls, not waits (seen on an H200,
  // CUPTI 13.0). The return value says which; cuptiActivityEnableAllSyncRecords(0) drops them.
  Synchronization sync;
  sync.type = ToSyncType(r.type);
  sync.start_ns = r.start;
  sync.end_ns = r.end;
  sync.correlation_id = r.correlationId;
  sync.context_id = r.contextId;
  sync.stream_id = r.streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (== kNoStream) if n/a
  sync.event_id = r.cudaEventId;
  if (layout_.sync_event_sync_id) {
    sync.event_sync_id = r.cudaEventSyncId;
    sync.return_value = static_cast<int32_t>(r.returnValue);
  } else {
    // The older record ends before these fields: say "not applicable" as CUPTI would.
    sync.event_sync_id = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  }
  out->synchronizations.push_back(sync);
}

void ActivityDecoder::DecodeCudaEvent(const CUpti_ActivityCudaEvent2& r, TraceRecords* out) {
  CudaEvent event;
  event.event_id = r.eventId;
  event.correlation_id = r.correlationId;
  event.context_id = r.contextId;
  event.stream_id = r.streamId;
  if (layout_.cuda_event_v2) {
    event.device_id = r.deviceId;
    event.sync_id = r.cudaEventSyncId;
    event.device_timestamp_ns = r.deviceTimestamp;  // 0 unless device timestamps are enabled
  } else if (auto it = context_devices_.find(r.contextId); it != context_devices_.end()) {
    event.device_id = it->second;
  }
  out->cuda_events.push_back(event);
}

void ActivityDecoder::DecodeStream(const CUpti_ActivityStream& r, TraceRecords* out) {
  StreamInfo stream;
  stream.stream_id = r.streamId;
  stream.context_id = r.contextId;
  // A stream's context record normally comes first (the context exists before its streams);
  // if not, device_id stays 0 and the analysis can still join through the context.
  if (auto it = context_devices_.find(r.contextId); it != context_devices_.end()) {
    stream.device_id = it->second;
  }
  stream.type = ToStreamType(r.flag);
  stream.priority = static_cast<int32_t>(r.priority);  // CUDA priorities are <= 0
  stream.correlation_id = r.correlationId;
  out->streams.push_back(stream);
}

void ActivityDecoder::DecodeContext(const CUpti_ActivityContext3& r, TraceRecords* out) {
  ContextInfo context;
  context.context_id = r.contextId;
  context.device_id = r.deviceId;
  context.null_stream_id = r.nullStreamId;
  context.compute_api = r.computeApiKind;
  context_devices_[r.contextId] = r.deviceId;
  out->contexts.push_back(context);
}

void ActivityDecoder::DecodeDevice(CUpti_ActivityDevice5& r, TraceRecords* out) {
  DeviceInfo device;
  device.id = r.id;
  if (r.name != nullptr) device.name = r.name;
  device.uuid.assign(reinterpret_cast<const char*>(r.uuid.bytes), sizeof r.uuid.bytes);
  device.sm_count = r.numMultiprocessors;
  device.global_memory_bytes = r.globalMemorySize;
  device.compute_capability_major = r.computeCapabilityMajor;
  device.compute_capability_minor = r.computeCapabilityMinor;
  device.core_clock_khz = r.coreClockRate;
  device.max_threads_per_block = r.maxThreadsPerBlock;
  device.l2_cache_bytes = r.l2CacheSize;
  // The record has no PCI bus id, memory clock or bus width: those stay empty here.
  // "Client is responsible for freeing this memory" (CUDA 13.0 cupti_activity.h, Device5.name);
  // on an H200 with CUPTI 13.0 the name was indeed on the malloc heap.
  if (layout_.device_name_owned && r.name != nullptr) {
    std::free(const_cast<char*>(r.name));
    r.name = nullptr;
  }
  out->devices.push_back(std::move(device));
}

void ActivityDecoder::DecodeMemory(const CUpti_ActivityMemory4& r, TraceRecords* out) {
  MemoryOp op;
  op.operation = ToMemoryOperation(r.memoryOperationType);
  op.memory_kind = ToMemoryKind(r.memoryKind);
  op.address = r.address;
  op.bytes = r.bytes;
  op.time_ns = r.timestamp;
  op.correlation_id = r.correlationId;
  op.device_id = r.deviceId;
  op.context_id = r.contextId;  // CUPTI_INVALID_CONTEXT_ID without a context
  op.stream_id = r.streamId;    // CUPTI_INVALID_STREAM_ID for synchronous operations
  op.async = r.isAsync != 0;
  op.pool_type = r.memoryPoolConfig.memoryPoolType;
  if (op.pool_type != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
    op.pool_address = r.memoryPoolConfig.address;
  }
  // Valid for local pools only (cupti_activity.h); an imported pool's union holds a process id.
  if (op.pool_type == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
    op.pool_release_threshold = r.memoryPoolConfig.releaseThreshold;
    op.pool_bytes = r.memoryPoolConfig.pool.size;
    op.pool_used_bytes = r.memoryPoolConfig.utilizedSize;
  }
  out->memory_ops.push_back(op);
}

void ActivityDecoder::DecodeOverhead(CUpti_ActivityOverhead3& r, TraceRecords* out) {
  Overhead overhead;
  overhead.overhead_kind = r.overheadKind;
  overhead.name_id = OverheadNameId(r.overheadKind);
  overhead.start_ns = r.start;
  overhead.end_ns = r.end;
  if (r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) overhead.thread_id = r.objectId.pt.threadId;
  // "Client is responsible for freeing this memory" (Overhead3.overheadData, CUPTI 12.4+). The
  // model keeps no overhead details (command-buffer channel) yet.
  if (layout_.overhead_data && r.overheadData != nullptr) {
    std::free(r.overheadData);
    r.overheadData = nullptr;
  }
  out->overheads.push_back(overhead);
}

void ActivityDecoder::DecodeGraphTrace(const CUpti_ActivityGraphTrace2& r, TraceRecords* out) {
  GraphTrace graph;
  graph.graph_id = r.graphId;
  graph.start_ns = r.start;
  graph.end_ns = r.end;
  graph.correlation_id = r.correlationId;
  graph.device_id = r.deviceId;
  graph.stream_id = r.streamId;
  out->graph_traces.push_back(graph);
}

// Reads only the fields UnifiedMemoryCounter2 (every CUPTI of CUDA 12) has at the same offsets;
// Counter3's `processors` bitmask adds nothing below 32 devices (srcId holds it there).
void ActivityDecoder::DecodeUnifiedMemory(const CUpti_ActivityUnifiedMemoryCounter3& r,
                                          TraceRecords* out) {
  UnifiedMemoryCounter counter;
  // Kept as CUPTI gives it: a kind newer than this build is the analysis' to skip.
  counter.counter_kind = static_cast<UvmCounterKind>(r.counterKind);
  counter.value = r.value;
  counter.start_ns = r.start;
  // cupti_activity.h: "Ignore this field [end]" for CPU faults, thrashing and remote maps.
  const bool has_end = counter.counter_kind != UvmCounterKind::kCpuPageFault &&
                       counter.counter_kind != UvmCounterKind::kThrashing &&
                       counter.counter_kind != UvmCounterKind::kRemoteMap;
  counter.end_ns = has_end && r.end > r.start ? r.end : r.start;
  counter.address = r.address;
  // srcId is to be ignored for CPU faults (the faulting processor is the CPU: said so) and dstId
  // for faults, thrashing and throttling (0 there, rather than whatever CUPTI left).
  const bool fault = counter.counter_kind == UvmCounterKind::kCpuPageFault ||
                     counter.counter_kind == UvmCounterKind::kGpuPageFault;
  const bool has_dst = !fault && counter.counter_kind != UvmCounterKind::kThrashing &&
                       counter.counter_kind != UvmCounterKind::kThrottling;
  counter.src_device_id = counter.counter_kind == UvmCounterKind::kCpuPageFault ? kUvmCpu : r.srcId;
  counter.dst_device_id = has_dst ? r.dstId : 0;
  counter.flags = r.flags;
  out->unified_memory_counters.push_back(counter);
}

uint32_t ActivityDecoder::OverheadNameId(uint32_t overhead_kind) {
  if (auto it = overhead_names_.find(overhead_kind); it != overhead_names_.end()) return it->second;
  const char* name = OverheadKindName(overhead_kind);
  uint32_t id =
      strings_.Intern(name ? std::string(name) : "overhead kind " + std::to_string(overhead_kind));
  overhead_names_.emplace(overhead_kind, id);
  return id;
}

}  // namespace libprof
