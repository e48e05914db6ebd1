// The one list of record kinds: every kind of record a trace chunk holds, with its list in
// TraceRecords, its field number in Chunk (proto/trace.proto) and its role. The writer's Add, the
// chunk encoder and decoder, TraceRecords itself (its lists, RecordCount, AppendRecords), the
// loader, the filters and the analysis' device-operation view (analysis/model/device_ops.h) iterate
// over this list.
//
// Properties come from the model struct's field names, so a new kind gets them by naming its
// fields as the others do: `start_ns`/`end_ns` (a time span; MemoryOp's `time_ns` is an instant),
// `correlation_id`, `stream_id`, `thread_id`, `device_id` (Kernel's lives in its shape), `bytes`.
//
// Adding a record kind (the compiler or a unit test points at any step left out):
//   1. proto/trace.proto: its message (`// next id`) and a `repeated` field in Chunk whose name
//      is the list's name below.
//   2. here: one X(...) line, appended.
//   3. proto/trace_model.h: its struct.
//   4. proto/record_encoders.h: its field numbers and Encode (writer side, protozero).
//   5. proto/record_decoders.h: its Decode (reader side).
//   6. libprof/cupti/activity_decoder.cc: the conversion of the CUPTI record it comes from.
//   7. proto/capture_kinds.h: its LIBPROF_TRACE name, when it is a new one (else it joins a kind
//      that exists), and
//   8. libprof/cupti/activity_kinds.cc: the CUPTI activity kind that name enables.
//   Then the report that shows it (analysis/, viewer-cli/USAGE.md); a device operation also gets
//   its DeviceOpKind in analysis/model/device_ops.h; every kind gets its SQLite table
//   (analysis/reports/sqlite_tables.h, which fails to compile without it, and its columns in
//   USAGE.md). docs/architecture.md has the whole map.
// Loading, merging, counting, --from/--to, --tid and --nvtx filtering need nothing more.
// tests/proto/trace_test_util.cc SampleRecords must hold one (RoundTripTest checks it).
//
// Layer: proto/ (CUDA-free, libprotobuf-free; linked into libprof.so). Header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

namespace libprof {

// What a kind is to the writer and the analysis.
enum class KindRole : uint8_t {
  kTimed,       // a host or driver event with a time: counted by RecordCount, filtered by time
  kDeviceOp,    // work on the device (TraceIndex's device operations); timed as well
  kUntimed,     // facts without a time of their own (drops, call stacks); not counted
  kDefinition,  // tables others refer to (devices, contexts, streams, NVTX domains): written
                // first by TraceWriter::AddAll, never filtered
};

// X(Type, list in TraceRecords and in trace.proto's Chunk, Chunk field number, KindRole).
// The order is the order of TraceRecords' lists and of TraceWriter::AddAll (definitions go first
// there whatever their place here), so it fixes the byte order of rewritten traces: append.
#define LIBPROF_RECORD_KINDS(X)                    \
  X(ApiCall, api_calls, 8, kTimed)                 \
  X(Kernel, kernels, 9, kDeviceOp)                 \
  X(Memcpy, memcpys, 10, kDeviceOp)                \
  X(Memset, memsets, 11, kDeviceOp)                \
  X(Synchronization, synchronizations, 12, kTimed) \
  X(NvtxEvent, nvtx_events, 13, kTimed)            \
  X(MemoryOp, memory_ops, 14, kTimed)              \
  X(CudaEvent, cuda_events, 17, kTimed)            \
  X(Overhead, overheads, 18, kTimed)               \
  X(GraphTrace, graph_traces, 23, kDeviceOp)       \
  X(DropReport, drops, 22, kUntimed)               \
  X(StackModule, stack_modules, 25, kUntimed)      \
  X(StackFrame, stack_frames, 26, kUntimed)        \
  X(CallStack, call_stacks, 27, kUntimed)          \
  X(DeviceInfo, devices, 19, kDefinition)          \
  X(ContextInfo, contexts, 16, kDefinition)        \
  X(StreamInfo, streams, 15, kDefinition)          \
  X(NvtxDomain, nvtx_domains, 20, kDefinition)

#define LIBPROF_DECLARE_KIND(Type, list, field, role) struct Type;
LIBPROF_RECORD_KINDS(LIBPROF_DECLARE_KIND)
#undef LIBPROF_DECLARE_KIND

// RecordKind<T>: the list entry of model type T (undefined for other types).
template <typename T>
struct RecordKind;

namespace kinds_internal {
inline constexpr uint32_t kChunkFields[] = {
#define LIBPROF_KIND_FIELD(Type, list, field, role) field,
    LIBPROF_RECORD_KINDS(LIBPROF_KIND_FIELD)
#undef LIBPROF_KIND_FIELD
};
constexpr size_t IndexOfField(uint32_t field) {
  size_t i = 0;
  while (kChunkFields[i] != field) ++i;
  return i;
}
}  // namespace kinds_internal

inline constexpr size_t kRecordKindCount = std::size(kinds_internal::kChunkFields);

#define LIBPROF_DEFINE_KIND(Type, list, field, role)                      \
  template <>                                                             \
  struct RecordKind<Type> {                                               \
    static constexpr const char* kList = #list;                           \
    static constexpr uint32_t kChunkField = field;                        \
    static constexpr KindRole kRole = KindRole::role;                     \
    static constexpr size_t kIndex = kinds_internal::IndexOfField(field); \
    template <typename Records>                                           \
    static auto& List(Records& records) {                                 \
      return records.list;                                                \
    }                                                                     \
  };
LIBPROF_RECORD_KINDS(LIBPROF_DEFINE_KIND)
#undef LIBPROF_DEFINE_KIND

template <typename T>
concept RecordKindType = requires {
  RecordKind<T>::kChunkField;
};

template <typename T>
inline constexpr bool kIsTimed =
    RecordKind<T>::kRole == KindRole::kTimed || RecordKind<T>::kRole == KindRole::kDeviceOp;
template <typename T>
inline constexpr bool kIsDeviceOp = RecordKind<T>::kRole == KindRole::kDeviceOp;
template <typename T>
inline constexpr bool kIsDefinition = RecordKind<T>::kRole == KindRole::kDefinition;

// The list of kind T in `records` (a TraceRecords, const or not).
template <typename T, typename Records>
auto& ListOf(Records& records) {
  return RecordKind<T>::List(records);
}

// Calls f(list) for every record list of `records` (a TraceRecords, const or not), in list
// order; `f` is generic (`[&]<typename T>(std::vector<T>& list)` or `auto&`).
template <typename Records, typename F>
void ForEachList(Records& records, F&& f) {
#define LIBPROF_VISIT_LIST(Type, list, field, role) f(records.list);
  LIBPROF_RECORD_KINDS(LIBPROF_VISIT_LIST)
#undef LIBPROF_VISIT_LIST
}

// Properties, read from the field names (see the top of this file).
template <typename T>
inline constexpr bool kHasTime = requires(const T& r) {
  r.start_ns;
}
|| requires(const T& r) { r.time_ns; };
template <typename T>
inline constexpr bool kHasCorrelation = requires(const T& r) {
  r.correlation_id;
};
template <typename T>
inline constexpr bool kHasThread = requires(const T& r) {
  r.thread_id;
};
template <typename T>
inline constexpr bool kHasStream = requires(const T& r) {
  r.stream_id;
};
template <typename T>
inline constexpr bool kHasDevice = requires(const T& r) {
  r.device_id;
}
|| requires(const T& r) { r.shape.device_id; };
template <typename T>
inline constexpr bool kHasBytes = requires(const T& r) {
  r.bytes;
};

// Nanoseconds on the trace's timebase; an instant's start and end are its time.
template <typename T>
requires kHasTime<T> uint64_t StartNs(const T& r) {
  if constexpr (requires { r.start_ns; }) {
    return r.start_ns;
  } else {
    return r.time_ns;
  }
}
template <typename T>
requires kHasTime<T> uint64_t EndNs(const T& r) {
  if constexpr (requires { r.end_ns; }) {
    return r.end_ns;
  } else {
    return StartNs(r);
  }
}
template <typename T>
requires kHasDevice<T> uint32_t DeviceId(const T& r) {
  if constexpr (requires { r.device_id; }) {
    return r.device_id;
  } else {
    return r.shape.device_id;
  }
}
template <typename T>
requires kHasDevice<T> uint32_t ContextId(const T& r) {
  if constexpr (requires { r.context_id; }) {
    return r.context_id;
  } else if constexpr (requires { r.shape.context_id; }) {
    return r.shape.context_id;
  } else {
    return 0;
  }
}

}  // namespace libprof
