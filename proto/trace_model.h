// The in-memory form of a libprof trace: plain structs with absolute times and resolved ids.
//
// Layer: proto/ (CUDA-free, libprotobuf-free). libprof.so builds these from CUPTI records and
// hands them to TraceWriter; TraceReader gives them back to the analysis. Enum values are those of
// proto/trace.proto (and of CUPTI where the proto says so), so conversion is a cast.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/record_kinds.h"

namespace libprof {

// Must equal what proto/trace.proto documents; readers reject any other version.
inline constexpr uint32_t kSchemaVersion = 1;
inline constexpr const char* kTraceFormat = "libprof-trace";

enum class Timebase : uint8_t { kUnspecified = 0, kClockMonotonic = 1, kClockRealtime = 2 };
enum class ApiDomain : uint8_t { kUnspecified = 0, kRuntime = 1, kDriver = 2, kInternalLaunch = 3 };
enum class CopyKind : uint8_t {
  kUnknown = 0, kHtoD = 1, kDtoH = 2, kHtoA = 3, kAtoH = 4, kAtoA = 5,
  kAtoD = 6, kDtoA = 7, kDtoD = 8, kHtoH = 9, kPtoP = 10,
};
enum class MemoryKind : uint8_t {
  kUnknown = 0, kPageable = 1, kPinned = 2, kDevice = 3, kArray = 4,
  kManaged = 5, kDeviceStatic = 6, kManagedStatic = 7,
};
enum class SyncType : uint8_t {
  kUnknown = 0, kEventSynchronize = 1, kStreamWaitEvent = 2,
  kStreamSynchronize = 3, kContextSynchronize = 4,
};
enum class NvtxKind : uint8_t { kUnknown = 0, kPushPop = 1, kStartEnd = 2, kMark = 3 };
enum class MemoryOperation : uint8_t { kUnknown = 0, kAllocation = 1, kRelease = 2 };
enum class StreamType : uint8_t { kUnknown = 0, kDefault = 1, kNonBlocking = 2, kNull = 3 };

// What a unified-memory record counts (CUpti_ActivityUnifiedMemoryCounterKind). The underlying type
// is CUPTI's: a value from a newer writer is kept as read, and the analysis skips it with a
// warning (IsKnown).
enum class UvmCounterKind : uint32_t {
  kUnknown = 0, kBytesHtoD = 1, kBytesDtoH = 2, kCpuPageFault = 3, kGpuPageFault = 4,
  kThrashing = 5, kThrottling = 6, kRemoteMap = 7, kBytesDtoD = 8,
};
inline constexpr bool IsKnown(UvmCounterKind kind) {
  return kind >= UvmCounterKind::kBytesHtoD && kind <= UvmCounterKind::kBytesDtoD;
}
// The processor id of the CPU in unified-memory records (CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID).
inline constexpr uint32_t kUvmCpu = 0xFFFFFFFFu;

// CUPTI's "not applicable" stream id (Synchronization records of context syncs).
inline constexpr uint32_t kNoStream = 0xFFFFFFFFu;

struct DeviceInfo {
  uint32_t id = 0;
  std::string name;
  std::string uuid;  // 16 raw bytes
  uint32_t sm_count = 0;
  uint64_t global_memory_bytes = 0;
  uint32_t compute_capability_major = 0;
  uint32_t compute_capability_minor = 0;
  std::string pci_bus_id;
  uint32_t core_clock_khz = 0;
  uint64_t memory_clock_khz = 0;
  uint32_t memory_bus_width_bits = 0;
  uint32_t max_threads_per_block = 0;
  uint64_t l2_cache_bytes = 0;
  bool operator==(const DeviceInfo&) const = default;
};

struct TraceHeader {
  uint32_t schema_version = kSchemaVersion;
  std::string libprof_version;
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  std::string hostname;
  std::vector<std::string> command_line;
  uint64_t start_wall_time_ns = 0;
  Timebase timebase = Timebase::kUnspecified;
  int64_t wall_clock_offset_ns = 0;
  uint64_t start_time_ns = 0;
  uint32_t cuda_driver_version = 0;
  uint32_t cuda_runtime_version = 0;
  uint32_t cupti_version = 0;
  std::string cupti_path;
  std::vector<DeviceInfo> devices;
  std::map<std::string, std::string> settings;
  std::string capture_status;  // "" when CUPTI capture is active
  std::optional<uint32_t> rank;  // in a parallel job, when the launcher said (RankFromEnvironment)
  std::string rank_source;       // the environment variable the rank came from
  bool operator==(const TraceHeader&) const = default;
};

// Times are nanoseconds on the header's timebase. String ids refer to the file's string table
// (TraceWriter::Intern on the way in, TraceReader::strings() on the way out); 0 is "".

struct ApiCall {
  ApiDomain domain = ApiDomain::kRuntime;
  uint32_t callback_id = 0;
  uint32_t name_id = 0;  // clean name: "cudaMemcpyAsync"
  // The stream the call enqueued a host function or a memory wait on (cudaLaunchHostFunc,
  // cudaStreamAddCallback, cuStreamWaitValue32/64, ...); kNoStream for every other call. (Here, not
  // last: it fills the padding before start_ns.)
  uint32_t stream_id = kNoStream;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t thread_id = 0;  // OS thread id (gettid)
  int32_t return_value = 0;
  bool nested = false;  // a driver call inside a runtime call of the same thread
  uint32_t stack_id = 0;  // CallStack::id of the native stack at entry; 0 = none
  bool operator==(const ApiCall&) const = default;
};

// Call stacks (LIBPROF_BACKTRACE): modules, symbolised return addresses, and stacks of them.
// Ids start at 1 and are per process; 0 means "none".
struct StackModule {
  uint32_t id = 0;
  uint32_t path_id = 0;  // string id
  std::string build_id;  // lowercase hex; "" when the module has none
  bool executable = false;
  bool operator==(const StackModule&) const = default;
};

struct StackFrame {
  uint32_t id = 0;
  uint64_t address = 0;  // return address in the recording process
  uint32_t module_id = 0;
  uint64_t module_offset = 0;
  uint32_t function_id = 0;  // string id of the demangled name; 0 when unknown
  uint64_t function_offset = 0;
  bool operator==(const StackFrame&) const = default;
};

struct PythonFrame {
  uint32_t file_id = 0;  // string id
  uint32_t line = 0;     // 0 when unknown
  uint32_t function_id = 0;  // string id
  bool operator==(const PythonFrame&) const = default;
};

struct CallStack {
  uint32_t id = 0;
  std::vector<uint32_t> frame_ids;  // innermost first
  std::vector<PythonFrame> python_frames;  // innermost first; they call into frame_ids
  bool operator==(const CallStack&) const = default;
};

struct KernelShape {
  uint32_t name_id = 0;
  uint32_t demangled_name_id = 0;
  std::array<uint32_t, 3> grid{};
  std::array<uint32_t, 3> block{};
  std::array<uint32_t, 3> cluster{};  // all 0 when not a cluster launch
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_memory_bytes = 0;
  uint32_t dynamic_shared_memory_bytes = 0;
  uint32_t local_memory_per_thread_bytes = 0;
  uint32_t shared_memory_config_bytes = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  bool operator==(const KernelShape&) const = default;
};

struct Kernel {
  KernelShape shape;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t stream_id = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  bool device_launched = false;
  bool operator==(const Kernel&) const = default;
};

struct Memcpy {
  CopyKind copy_kind = CopyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  uint64_t bytes = 0;
  bool async = false;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  uint32_t src_device_id = 0;  // peer-to-peer only
  uint32_t dst_device_id = 0;
  // Not in the file: CUPTI's end where the reader moved it back to the start of the next
  // operation on the stream (proto/stream_order_repair.h); 0 where end_ns is CUPTI's.
  uint64_t cupti_end_ns = 0;
  bool operator==(const Memcpy&) const = default;
};

struct Memset {
  MemoryKind memory_kind = MemoryKind::kUnknown;
  uint64_t bytes = 0;
  uint32_t value = 0;
  bool async = false;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t graph_id = 0;
  uint64_t cupti_end_ns = 0;  // as Memcpy's: not in the file, 0 where end_ns is CUPTI's
  bool operator==(const Memset&) const = default;
};

struct Synchronization {
  SyncType type = SyncType::kUnknown;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = kNoStream;
  uint32_t event_id = 0;
  uint64_t event_sync_id = 0;
  int32_t return_value = 0;
  bool operator==(const Synchronization&) const = default;
};

// One binary payload of an NVTX event (the NVTX payload extension, nvToolsExtPayload.h): the
// bytes as the application passed them; proto/nvtx_payload.h decodes them with the schema.
struct NvtxPayload {
  uint64_t schema_id = 0;
  std::string data;
  bool operator==(const NvtxPayload&) const = default;
};

struct NvtxEvent {
  NvtxKind kind = NvtxKind::kUnknown;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // == start_ns for marks
  uint32_t thread_id = 0;
  uint32_t end_thread_id = 0;  // START_END: the thread that ended the range
  uint32_t domain_id = 0;      // 0 = default domain; else an NvtxDomain id
  uint32_t message_id = 0;
  uint32_t category = 0;
  uint32_t color_argb = 0;
  bool has_color = false;
  uint32_t depth = 0;
  bool open = false;  // never closed before recording ended
  uint64_t range_id = 0;
  std::vector<NvtxPayload> payloads{};  // payload extension: at push/start and at pop/end
  bool operator==(const NvtxEvent&) const = default;
};

struct NvtxDomain {
  uint32_t id = 0;
  uint32_t name_id = 0;
  bool operator==(const NvtxDomain&) const = default;
};

// A payload schema or enum (nvtxPayloadSchemaRegister / nvtxPayloadEnumRegister), its layout
// resolved at capture: proto/nvtx_payload.h says how.
struct NvtxPayloadEntry {
  uint64_t flags = 0;  // NVTX_PAYLOAD_ENTRY_FLAG_*
  uint64_t type = 0;   // NVTX_PAYLOAD_ENTRY_TYPE_*, or a schema/enum id of the same domain
  uint32_t name_id = 0;
  uint64_t array_length = 0;
  uint64_t offset_bytes = 0;
  uint64_t size_bytes = 0;  // of one element; 0 = unknown
  bool operator==(const NvtxPayloadEntry&) const = default;
};

struct NvtxPayloadEnumValue {
  uint32_t name_id = 0;
  uint64_t value = 0;
  bool is_flag = false;
  bool operator==(const NvtxPayloadEnumValue&) const = default;
};

struct NvtxPayloadSchema {
  uint32_t domain_id = 0;
  uint64_t schema_id = 0;
  uint32_t name_id = 0;
  uint32_t schema_type = 0;  // NVTX_PAYLOAD_SCHEMA_TYPE_*; 0 for an enum
  uint64_t flags = 0;
  uint64_t static_size_bytes = 0;  // static schema: payload size; enum: value size
  bool is_enum = false;
  std::vector<NvtxPayloadEntry> entries{};
  std::vector<NvtxPayloadEnumValue> enum_values{};
  bool operator==(const NvtxPayloadSchema&) const = default;
};

struct MemoryOp {
  MemoryOperation operation = MemoryOperation::kUnknown;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t time_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  bool async = false;
  uint64_t pool_address = 0;
  uint32_t pool_type = 0;  // CUpti_ActivityMemoryPoolType: 0 none (a direct allocation), 1 local,
                           // 2 imported
  // A local pool as it was at this operation (0 otherwise): release threshold, size, in use.
  uint64_t pool_release_threshold = 0;
  uint64_t pool_bytes = 0;
  uint64_t pool_used_bytes = 0;
  bool operator==(const MemoryOp&) const = default;
};

struct StreamInfo {
  uint32_t stream_id = 0;
  uint32_t context_id = 0;
  uint32_t device_id = 0;
  StreamType type = StreamType::kUnknown;
  int32_t priority = 0;
  uint64_t correlation_id = 0;
  bool operator==(const StreamInfo&) const = default;
};

struct ContextInfo {
  uint32_t context_id = 0;
  uint32_t device_id = 0;
  uint32_t null_stream_id = 0;
  uint32_t compute_api = 0;
  uint64_t created_ns = 0;  // trace.proto's Context: 0 when not seen
  uint32_t created_thread_id = 0;
  bool operator==(const ContextInfo&) const = default;
};

struct CudaEvent {
  uint32_t event_id = 0;
  uint64_t sync_id = 0;
  uint64_t correlation_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t device_id = 0;
  uint64_t device_timestamp_ns = 0;  // 0 when not recorded
  bool operator==(const CudaEvent&) const = default;
};

struct Overhead {
  uint32_t overhead_kind = 0;
  uint32_t name_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t thread_id = 0;
  bool operator==(const Overhead&) const = default;
};

struct GraphTrace {
  uint32_t graph_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t device_id = 0;
  uint32_t stream_id = 0;
  bool operator==(const GraphTrace&) const = default;
};

// A migration, page fault, thrashing, throttling or remote map of unified memory. No correlation id,
// stream or thread: CUPTI ties these to none (the analysis attributes them by time and device).
struct UnifiedMemoryCounter {
  UvmCounterKind counter_kind = UvmCounterKind::kUnknown;
  uint64_t value = 0;  // bytes, fault groups (GPU fault) or faulting PC (CPU fault): see trace.proto
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // == start_ns where CUPTI gives no end
  uint64_t address = 0;
  uint32_t src_device_id = 0;  // kUvmCpu = the CPU
  uint32_t dst_device_id = 0;
  uint32_t flags = 0;  // cause or access type, per kind (trace.proto)
  bool operator==(const UnifiedMemoryCounter&) const = default;
};

struct DropReport {
  std::string source;  // "cupti" or "nvtx"
  uint64_t count = 0;
  uint64_t at_ns = 0;
  bool operator==(const DropReport&) const = default;
};

struct RunEnd {
  uint64_t end_time_ns = 0;
  std::string reason;
  uint64_t records_written = 0;
  uint64_t records_dropped = 0;
  uint64_t chunks_written = 0;
  bool operator==(const RunEnd&) const = default;
};

// The records of one chunk (reader side) or of any batch (writer side): one list per kind of
// proto/record_kinds.h, in its order.
struct TraceRecords {
  uint32_t process_index = 0;
  uint64_t sequence = 0;
#define LIBPROF_RECORD_LIST(Type, list, field, role) std::vector<Type> list;
  LIBPROF_RECORD_KINDS(LIBPROF_RECORD_LIST)
#undef LIBPROF_RECORD_LIST
  std::optional<RunEnd> run_end;
  uint32_t cuda_runtime_version = 0;  // 0 = not reported in this batch

  // Number of timed records (the kinds whose role is kTimed or kDeviceOp), the unit of the
  // "bytes per record" figures.
  size_t RecordCount() const {
    size_t count = 0;
    ForEachList(*this, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kIsTimed<T>) count += list.size();
    });
    return count;
  }
  bool operator==(const TraceRecords&) const = default;
};

// Appends every list of `from` to the same list of `to`; takes `from`'s run_end and runtime
// version when it has them (a later chunk's facts replace an earlier one's).
void AppendRecords(const TraceRecords& from, TraceRecords* to);
// Empties *records, its lists keeping their room: whoever fills one TraceRecords again and
// again (a reader chunk after chunk, the windowed read window after window) then allocates and
// page-faults nothing anew.
void EmptyKeepingRoom(TraceRecords* records);

// Readable names of the enums, as profview prints them ("pageable", "HtoD", ...).
const char* ToString(CopyKind kind);
const char* ToString(MemoryKind kind);
const char* ToString(SyncType type);
const char* ToString(NvtxKind kind);
const char* ToString(StreamType type);
const char* ToString(ApiDomain domain);
const char* ToString(UvmCounterKind kind);  // "HtoD", "CPU page fault", ...; "unknown" past 8

}  // namespace libprof
