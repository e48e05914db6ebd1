// AppendRecords and the readable names of the trace model's enums, as profview prints them.
#include "proto/trace_model.h"

namespace libprof {

void EmptyKeepingRoom(TraceRecords* records) {
  TraceRecords empty;
  ForEachList(*records, [&]<typename T>(std::vector<T>& list) {
    list.clear();
    ListOf<T>(empty) = std::move(list);
  });
  *records = std::move(empty);
}

void AppendRecords(const TraceRecords& from, TraceRecords* to) {
  ForEachList(from, [&]<typename T>(const std::vector<T>& list) {
    std::vector<T>& into = ListOf<T>(*to);
    into.insert(into.end(), list.begin(), list.end());
  });
  if (from.run_end) to->run_end = from.run_end;
  if (from.cuda_runtime_version != 0) to->cuda_runtime_version = from.cuda_runtime_version;
}

const char* ToString(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHtoD:
      return "HtoD";
    case CopyKind::kDtoH:
      return "DtoH";
    case CopyKind::kHtoA:
      return "HtoA";
    case CopyKind::kAtoH:
      return "AtoH";
    case CopyKind::kAtoA:
      return "AtoA";
    case CopyKind::kAtoD:
      return "AtoD";
    case CopyKind::kDtoA:
      return "DtoA";
    case CopyKind::kDtoD:
      return "DtoD";
    case CopyKind::kHtoH:
      return "HtoH";
    case CopyKind::kPtoP:
      return "PtoP";
    case CopyKind::kUnknown:
      break;
  }
  // Also reached by out-of-range values cast from a newer file.
  return "unknown";
}

const char* ToString(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kPageable:
      return "pageable";
    case MemoryKind::kPinned:
      return "pinned";
    case MemoryKind::kDevice:
      return "device";
    case MemoryKind::kArray:
      return "array";
    case MemoryKind::kManaged:
      return "managed";
    case MemoryKind::kDeviceStatic:
      return "device static";
    case MemoryKind::kManagedStatic:
      return "managed static";
    case MemoryKind::kUnknown:
      break;
  }
  return "unknown";
}

const char* ToString(SyncType type) {
  switch (type) {
    case SyncType::kEventSynchronize:
      return "event synchronize";
    case SyncType::kStreamWaitEvent:
      return "stream wait event";
    case SyncType::kStreamSynchronize:
      return "stream synchronize";
    case SyncType::kContextSynchronize:
      return "context synchronize";
    case SyncType::kUnknown:
      break;
  }
  return "unknown";
}

const char* ToString(NvtxKind kind) {
  switch (kind) {
    case NvtxKind::kPushPop:
      return "push/pop";
    case NvtxKind::kStartEnd:
      return "start/end";
    case NvtxKind::kMark:
      return "mark";
    case NvtxKind::kUnknown:
      break;
  }
  return "unknown";
}

const char* ToString(StreamType type) {
  switch (type) {
    case StreamType::kDefault:
      return "default";
    case StreamType::kNonBlocking:
      return "non-blocking";
    case StreamType::kNull:
      return "null";
    case StreamType::kUnknown:
      break;
  }
  return "unknown";
}

const char* ToString(ApiDomain domain) {
  switch (domain) {
    case ApiDomain::kRuntime:
      return "runtime";
    case ApiDomain::kDriver:
      return "driver";
    case ApiDomain::kInternalLaunch:
      return "internal launch";
    case ApiDomain::kUnspecified:
      break;
  }
  return "unknown";
}

const char* ToString(UvmCounterKind kind) {
  switch (kind) {
    case UvmCounterKind::kBytesHtoD:
      return "HtoD";
    case UvmCounterKind::kBytesDtoH:
      return "DtoH";
    case UvmCounterKind::kCpuPageFault:
      return "CPU page fault";
    case UvmCounterKind::kGpuPageFault:
      return "GPU page fault";
    case UvmCounterKind::kThrashing:
      return "thrashing";
    case UvmCounterKind::kThrottling:
      return "throttling";
    case UvmCounterKind::kRemoteMap:
      return "remote map";
    case UvmCounterKind::kBytesDtoD:
      return "DtoD";
    case UvmCounterKind::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace libprof
