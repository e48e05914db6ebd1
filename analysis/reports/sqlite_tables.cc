#include "analysis/reports/sqlite_tables.h"

#include <array>

namespace libprof::analysis {
namespace {

constexpr const char* kInt = "INTEGER";

// A table of the export itself or a view: its name and CREATE statement.
struct SqliteObject {
  const char* name;
  const char* sql;
};
constexpr const char* kText = "TEXT";

const char* ToString(MemoryOperation operation) {
  switch (operation) {
    case MemoryOperation::kAllocation:
      return "allocation";
    case MemoryOperation::kRelease:
      return "release";
    case MemoryOperation::kUnknown:
      break;
  }
  return "unknown";
}

// Columns that hold "none" as 0 (or as CUPTI's all-ones stream id) read better as NULL in SQL:
// a join on them then matches nothing instead of a row with id 0.
void IdOrNull(uint64_t id, SqliteStatement* row) {
  if (id == 0) {
    row->Null();
  } else {
    row->Uint(id);
  }
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// The columns of each table, in the order Bind binds them (after process_id).
constexpr SqliteColumn kApiCallColumns[] = {{"domain", kText},   {"callback_id", kInt},
                                            {"name_id", kInt},   {"start_ns", kInt},
                                            {"end_ns", kInt},    {"correlation_id", kInt},
                                            {"thread_id", kInt}, {"return_value", kInt},
                                            {"nested", kInt},    {"stack_id", kInt},
                                            {"stream_id", kInt}};  // (stream_id: host functions and
                                                                   // memory waits only)
constexpr SqliteColumn kKernelColumns[] = {
    {"start_ns", kInt},
    {"end_ns", kInt},
    {"correlation_id", kInt},
    {"device_id", kInt},
    {"context_id", kInt},
    {"stream_id", kInt},
    {"mangled_name_id", kInt},
    {"demangled_name_id", kInt},
    {"grid_x", kInt},
    {"grid_y", kInt},
    {"grid_z", kInt},
    {"block_x", kInt},
    {"block_y", kInt},
    {"block_z", kInt},
    {"cluster_x", kInt},
    {"cluster_y", kInt},
    {"cluster_z", kInt},
    {"registers_per_thread", kInt},
    {"static_shared_memory_bytes", kInt},
    {"dynamic_shared_memory_bytes", kInt},
    {"local_memory_per_thread_bytes", kInt},
    {"shared_memory_config_bytes", kInt},
    {"graph_id", kInt},
    {"graph_node_id", kInt},
    {"device_launched", kInt}};
constexpr SqliteColumn kMemcpyColumns[] = {
    {"copy_kind", kText},    {"src_kind", kText},       {"dst_kind", kText},
    {"bytes", kInt},         {"async", kInt},           {"start_ns", kInt},
    {"end_ns", kInt},        {"correlation_id", kInt},  {"device_id", kInt},
    {"context_id", kInt},    {"stream_id", kInt},       {"graph_id", kInt},
    {"graph_node_id", kInt}, {"src_device_id", kInt},   {"dst_device_id", kInt},
    {"cupti_end_ns", kInt}};
constexpr SqliteColumn kMemsetColumns[] = {
    {"memory_kind", kText}, {"bytes", kInt},     {"value", kInt},
    {"async", kInt},        {"start_ns", kInt},  {"end_ns", kInt},
    {"correlation_id", kInt}, {"device_id", kInt}, {"context_id", kInt},
    {"stream_id", kInt},    {"graph_id", kInt},     {"cupti_end_ns", kInt}};
constexpr SqliteColumn kSynchronizationColumns[] = {
    {"type", kText},       {"start_ns", kInt},      {"end_ns", kInt},
    {"correlation_id", kInt}, {"context_id", kInt}, {"stream_id", kInt},
    {"event_id", kInt},    {"event_sync_id", kInt}, {"return_value", kInt}};
constexpr SqliteColumn kNvtxEventColumns[] = {
    {"kind", kText},        {"start_ns", kInt},  {"end_ns", kInt},
    {"thread_id", kInt},    {"end_thread_id", kInt}, {"domain_id", kInt},
    {"message_id", kInt},   {"category", kInt},  {"color_argb", kInt},
    {"depth", kInt},        {"open", kInt},      {"range_id", kInt}};
constexpr SqliteColumn kMemoryOpColumns[] = {
    {"operation", kText},  {"memory_kind", kText},   {"address", kInt},
    {"bytes", kInt},       {"time_ns", kInt},        {"correlation_id", kInt},
    {"device_id", kInt},   {"context_id", kInt},     {"stream_id", kInt},
    {"async", kInt},       {"pool_address", kInt},   {"pool_type", kInt},
    {"pool_release_threshold", kInt}, {"pool_bytes", kInt}, {"pool_used_bytes", kInt}};
constexpr SqliteColumn kCudaEventColumns[] = {
    {"event_id", kInt},   {"sync_id", kInt},   {"correlation_id", kInt},
    {"context_id", kInt}, {"stream_id", kInt}, {"device_id", kInt},
    {"device_timestamp_ns", kInt}};
constexpr SqliteColumn kOverheadColumns[] = {{"overhead_kind", kInt}, {"name", kText},
                                             {"start_ns", kInt},      {"end_ns", kInt},
                                             {"thread_id", kInt}};
constexpr SqliteColumn kGraphTraceColumns[] = {
    {"graph_id", kInt},       {"start_ns", kInt},  {"end_ns", kInt},
    {"correlation_id", kInt}, {"device_id", kInt}, {"stream_id", kInt}};
constexpr SqliteColumn kDropColumns[] = {{"source", kText}, {"count", kInt}, {"at_ns", kInt}};
constexpr SqliteColumn kStackModuleColumns[] = {
    {"id", kInt}, {"path", kText}, {"build_id", kText}, {"executable", kInt}};
constexpr SqliteColumn kStackFrameColumns[] = {
    {"id", kInt},          {"address", kInt},  {"module_id", kInt},
    {"module_offset", kInt}, {"function", kText}, {"function_offset", kInt}};
constexpr SqliteColumn kCallStackColumns[] = {{"id", kInt}, {"depth", kInt}, {"frame_id", kInt}};
constexpr SqliteColumn kDeviceColumns[] = {{"id", kInt},
                                           {"name", kText},
                                           {"uuid", kText},
                                           {"sm_count", kInt},
                                           {"global_memory_bytes", kInt},
                                           {"compute_capability_major", kInt},
                                           {"compute_capability_minor", kInt},
                                           {"pci_bus_id", kText},
                                           {"core_clock_khz", kInt},
                                           {"memory_clock_khz", kInt},
                                           {"memory_bus_width_bits", kInt},
                                           {"max_threads_per_block", kInt},
                                           {"l2_cache_bytes", kInt}};
// created_ns: when the context was created (trace time; 0: not recorded), created_thread_id:
// the thread whose API call created it.
constexpr SqliteColumn kContextColumns[] = {{"context_id", kInt},     {"device_id", kInt},
                                            {"null_stream_id", kInt}, {"compute_api", kInt},
                                            {"created_ns", kInt},     {"created_thread_id", kInt}};
constexpr SqliteColumn kStreamColumns[] = {{"stream_id", kInt}, {"context_id", kInt},
                                           {"device_id", kInt}, {"type", kText},
                                           {"priority", kInt},  {"correlation_id", kInt}};
constexpr SqliteColumn kNvtxDomainColumns[] = {{"id", kInt}, {"name", kText}};
// counter_kind is profview's word ("HtoD", "GPU page fault", ...; "unknown" for a newer kind, whose
// number is kept in counter_kind_id); value's unit depends on the kind (trace.proto).
constexpr SqliteColumn kUnifiedMemoryColumns[] = {
    {"counter_kind", kText}, {"counter_kind_id", kInt}, {"value", kInt},
    {"start_ns", kInt},      {"end_ns", kInt},          {"address", kInt},
    {"src_device_id", kInt}, {"dst_device_id", kInt},   {"flags", kInt}};
// A registered NVTX payload schema (its entries stay in the trace: profview decodes payloads).
constexpr SqliteColumn kNvtxPayloadSchemaColumns[] = {
    {"domain_id", kInt}, {"schema_id", kInt},         {"name", kText},    {"schema_type", kInt},
    {"flags", kInt},     {"static_size_bytes", kInt}, {"is_enum", kInt}, {"entries", kInt}};

// The export's own tables. strings and kernel_names are looked up by key for every row of a view:
// WITHOUT ROWID keeps them as one b-tree on that key.
constexpr SqliteObject kExportTables[] = {
    {"processes",
     "CREATE TABLE processes (id INTEGER PRIMARY KEY, file TEXT NOT NULL, "
     "process_index INTEGER NOT NULL, pid INTEGER, parent_pid INTEGER, hostname TEXT, "
     "rank INTEGER, rank_source TEXT, command_line TEXT, libprof_version TEXT, "
     "schema_version INTEGER, timebase TEXT, start_time_ns INTEGER, "
     "start_wall_time_ns INTEGER, wall_clock_offset_ns INTEGER, cuda_driver_version INTEGER, "
     "cuda_runtime_version INTEGER, cupti_version INTEGER, cupti_path TEXT, "
     "capture_status TEXT, end_time_ns INTEGER, end_reason TEXT, records_written INTEGER, "
     "records_dropped INTEGER, chunks_written INTEGER, chunks_read INTEGER)"},
    {"settings", "CREATE TABLE settings (process_id INTEGER NOT NULL, name TEXT, value TEXT)"},
    {"strings",
     "CREATE TABLE strings (process_id INTEGER NOT NULL, id INTEGER NOT NULL, value TEXT, "
     "PRIMARY KEY (process_id, id)) WITHOUT ROWID"},
    {"kernel_names",
     "CREATE TABLE kernel_names (process_id INTEGER NOT NULL, mangled_name_id INTEGER NOT NULL, "
     "demangled_name_id INTEGER NOT NULL, name TEXT, "
     "PRIMARY KEY (process_id, mangled_name_id, demangled_name_id)) WITHOUT ROWID"},
    {"schema_version", "CREATE TABLE schema_version (version INTEGER NOT NULL)"},
    // The Python frames of call_stacks (CallStack.python_frames), one row per frame, depth 0 the
    // innermost; they call into the stack's native frames. Names resolved: a frame is its text.
    {"python_frames",
     "CREATE TABLE python_frames (process_id INTEGER NOT NULL, stack_id INTEGER NOT NULL, "
     "depth INTEGER NOT NULL, file TEXT, line INTEGER, function TEXT, "
     "PRIMARY KEY (process_id, stack_id, depth)) WITHOUT ROWID"},
};

// The views add the names after the stored columns (r.*), so that a column added to a table
// appears in its view without touching it.
constexpr SqliteObject kViews[] = {
    {"api_calls",
     "CREATE VIEW api_calls AS SELECT r.*, s.value AS name FROM api_calls_ids r "
     "LEFT JOIN strings s ON s.process_id = r.process_id AND s.id = r.name_id"},
    {"kernels",
     "CREATE VIEW kernels AS SELECT r.*, n.name AS name, s.value AS mangled_name "
     "FROM kernels_ids r "
     "LEFT JOIN kernel_names n ON n.process_id = r.process_id AND "
     "n.mangled_name_id = r.mangled_name_id AND n.demangled_name_id = r.demangled_name_id "
     "LEFT JOIN strings s ON s.process_id = r.process_id AND s.id = r.mangled_name_id"},
    {"nvtx_events",
     "CREATE VIEW nvtx_events AS SELECT r.*, s.value AS message, d.name AS domain "
     "FROM nvtx_events_ids r "
     "LEFT JOIN strings s ON s.process_id = r.process_id AND s.id = r.message_id "
     "LEFT JOIN nvtx_domains d ON d.process_id = r.process_id AND d.id = r.domain_id"},
};

// Extra indexes, beyond the correlation ids (every kind that has one) and the tables' keys. Not
// on stream or stack ids: 0.3 s of 1.3 s per million rows (bench/README.md), for joins that a
// GROUP BY does without them.
constexpr const char* kIndexes[] = {
    "CREATE INDEX settings_process ON settings (process_id)",
};

template <typename T>
std::expected<void, std::string> CreateRecordTable(SqliteDb* db) {
  using Table = SqliteTable<T>;
  std::string sql = std::string("CREATE TABLE ") + Table::kTable + " (process_id INTEGER NOT NULL";
  for (const SqliteColumn& c : Table::kColumns) sql += std::string(", ") + c.name + " " + c.type;
  sql += ")";
  if (auto done = db->Exec(sql); !done) return done;
  if (Table::kKey == nullptr) return {};
  // A definition sent again by a later chunk replaces the earlier row (INSERT OR REPLACE).
  return db->Exec(std::string("CREATE UNIQUE INDEX ") + Table::kTable + "_key ON " +
                  Table::kTable + " (process_id, " + Table::kKey + ")");
}

}  // namespace

const std::string& SqliteRowContext::String(uint32_t id) const {
  static const std::string* empty = new std::string;
  return strings != nullptr && id < strings->size() ? (*strings)[id] : *empty;
}

#define LIBPROF_SQLITE_COLUMNS(Type, columns, key)                              \
  const std::span<const SqliteColumn> SqliteTable<Type>::kColumns{columns};     \
  const char* const SqliteTable<Type>::kKey = key;
LIBPROF_SQLITE_COLUMNS(ApiCall, kApiCallColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(Kernel, kKernelColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(Memcpy, kMemcpyColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(Memset, kMemsetColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(Synchronization, kSynchronizationColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(NvtxEvent, kNvtxEventColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(MemoryOp, kMemoryOpColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(CudaEvent, kCudaEventColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(Overhead, kOverheadColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(GraphTrace, kGraphTraceColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(DropReport, kDropColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(StackModule, kStackModuleColumns, "id")
LIBPROF_SQLITE_COLUMNS(StackFrame, kStackFrameColumns, "id")
LIBPROF_SQLITE_COLUMNS(CallStack, kCallStackColumns, "id, depth")
LIBPROF_SQLITE_COLUMNS(DeviceInfo, kDeviceColumns, "id")
LIBPROF_SQLITE_COLUMNS(ContextInfo, kContextColumns, "context_id")
LIBPROF_SQLITE_COLUMNS(StreamInfo, kStreamColumns, "context_id, stream_id")
LIBPROF_SQLITE_COLUMNS(NvtxDomain, kNvtxDomainColumns, "id")
LIBPROF_SQLITE_COLUMNS(UnifiedMemoryCounter, kUnifiedMemoryColumns, nullptr)
LIBPROF_SQLITE_COLUMNS(NvtxPayloadSchema, kNvtxPayloadSchemaColumns, "domain_id, schema_id")
#undef LIBPROF_SQLITE_COLUMNS

void SqliteTable<ApiCall>::Bind(const ApiCall& r, const SqliteRowContext&, SqliteStatement* row) {
  row->Text(ToString(r.domain));
  row->Uint(r.callback_id);
  row->Uint(r.name_id);
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.correlation_id);
  row->Uint(r.thread_id);
  row->Int(r.return_value);
  row->Bool(r.nested);
  IdOrNull(r.stack_id, row);
  if (r.stream_id == kNoStream) {
    row->Null();
  } else {
    row->Uint(r.stream_id);
  }
}

void SqliteTable<Kernel>::Bind(const Kernel& r, const SqliteRowContext&, SqliteStatement* row) {
  const KernelShape& s = r.shape;
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.correlation_id);
  row->Uint(s.device_id);
  row->Uint(s.context_id);
  row->Uint(r.stream_id);
  row->Uint(s.name_id);
  row->Uint(s.demangled_name_id);
  for (uint32_t v : s.grid) row->Uint(v);
  for (uint32_t v : s.block) row->Uint(v);
  for (uint32_t v : s.cluster) row->Uint(v);
  row->Uint(s.registers_per_thread);
  row->Uint(s.static_shared_memory_bytes);
  row->Uint(s.dynamic_shared_memory_bytes);
  row->Uint(s.local_memory_per_thread_bytes);
  row->Uint(s.shared_memory_config_bytes);
  IdOrNull(r.graph_id, row);
  IdOrNull(r.graph_node_id, row);
  row->Bool(r.device_launched);
}

void SqliteTable<Memcpy>::Bind(const Memcpy& r, const SqliteRowContext&, SqliteStatement* row) {
  row->Text(ToString(r.copy_kind));
  row->Text(ToString(r.src_kind));
  row->Text(ToString(r.dst_kind));
  row->Uint(r.bytes);
  row->Bool(r.async);
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.correlation_id);
  row->Uint(r.device_id);
  row->Uint(r.context_id);
  row->Uint(r.stream_id);
  IdOrNull(r.graph_id, row);
  IdOrNull(r.graph_node_id, row);
  const bool peer = r.copy_kind == CopyKind::kPtoP;
  if (peer) {
    row->Uint(r.src_device_id);
    row->Uint(r.dst_device_id);
  } else {
    row->Null();
    row->Null();
  }
  IdOrNull(r.cupti_end_ns, row);
}

void SqliteTable<Memset>::Bind(const Memset& r, const SqliteRowContext&, SqliteStatement* row) {
  row->Text(ToString(r.memory_kind));
  row->Uint(r.bytes);
  row->Uint(r.value);
  row->Bool(r.async);
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.correlation_id);
  row->Uint(r.device_id);
  row->Uint(r.context_id);
  row->Uint(r.stream_id);
  IdOrNull(r.graph_id, row);
  IdOrNull(r.cupti_end_ns, row);
}

void SqliteTable<Synchronization>::Bind(const Synchronization& r, const SqliteRowContext&,
                                        SqliteStatement* row) {
  row->Text(ToString(r.type));
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.correlation_id);
  row->Uint(r.context_id);
  if (r.stream_id == kNoStream) {
    row->Null();
  } else {
    row->Uint(r.stream_id);
  }
  IdOrNull(r.event_id, row);
  IdOrNull(r.event_sync_id, row);
  row->Int(r.return_value);
}

void SqliteTable<NvtxEvent>::Bind(const NvtxEvent& r, const SqliteRowContext&,
                                  SqliteStatement* row) {
  row->Text(ToString(r.kind));
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.thread_id);
  if (r.kind == NvtxKind::kStartEnd) {
    row->Uint(r.end_thread_id);
  } else {
    row->Null();
  }
  row->Uint(r.domain_id);
  row->Uint(r.message_id);
  row->Uint(r.category);
  if (r.has_color) {
    row->Uint(r.color_argb);
  } else {
    row->Null();
  }
  row->Uint(r.depth);
  row->Bool(r.open);
  IdOrNull(r.range_id, row);
}

void SqliteTable<MemoryOp>::Bind(const MemoryOp& r, const SqliteRowContext&,
                                 SqliteStatement* row) {
  row->Text(ToString(r.operation));
  row->Text(ToString(r.memory_kind));
  row->Uint(r.address);
  row->Uint(r.bytes);
  row->Uint(r.time_ns);
  row->Uint(r.correlation_id);
  row->Uint(r.device_id);
  row->Uint(r.context_id);
  row->Uint(r.stream_id);
  row->Bool(r.async);
  IdOrNull(r.pool_address, row);
  row->Uint(r.pool_type);
  row->Uint(r.pool_release_threshold);
  row->Uint(r.pool_bytes);
  row->Uint(r.pool_used_bytes);
}

void SqliteTable<CudaEvent>::Bind(const CudaEvent& r, const SqliteRowContext&,
                                  SqliteStatement* row) {
  row->Uint(r.event_id);
  row->Uint(r.sync_id);
  row->Uint(r.correlation_id);
  row->Uint(r.context_id);
  row->Uint(r.stream_id);
  row->Uint(r.device_id);
  IdOrNull(r.device_timestamp_ns, row);
}

void SqliteTable<Overhead>::Bind(const Overhead& r, const SqliteRowContext& c,
                                 SqliteStatement* row) {
  row->Uint(r.overhead_kind);
  row->Text(c.String(r.name_id));
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.thread_id);
}

void SqliteTable<GraphTrace>::Bind(const GraphTrace& r, const SqliteRowContext&,
                                   SqliteStatement* row) {
  row->Uint(r.graph_id);
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.correlation_id);
  row->Uint(r.device_id);
  row->Uint(r.stream_id);
}

void SqliteTable<DropReport>::Bind(const DropReport& r, const SqliteRowContext&,
                                   SqliteStatement* row) {
  row->Text(r.source);
  row->Uint(r.count);
  row->Uint(r.at_ns);
}

void SqliteTable<StackModule>::Bind(const StackModule& r, const SqliteRowContext& c,
                                    SqliteStatement* row) {
  row->Uint(r.id);
  row->Text(c.String(r.path_id));
  row->Text(r.build_id);
  row->Bool(r.executable);
}

void SqliteTable<StackFrame>::Bind(const StackFrame& r, const SqliteRowContext& c,
                                   SqliteStatement* row) {
  row->Uint(r.id);
  row->Uint(r.address);
  IdOrNull(r.module_id, row);
  row->Uint(r.module_offset);
  row->Text(c.String(r.function_id));
  row->Uint(r.function_offset);
}

void SqliteTable<CallStack>::Bind(const CallStack& r, size_t depth, const SqliteRowContext&,
                                  SqliteStatement* row) {
  row->Uint(r.id);
  row->Uint(depth);
  row->Uint(r.frame_ids[depth]);
}

void SqliteTable<DeviceInfo>::Bind(const DeviceInfo& r, const SqliteRowContext&,
                                   SqliteStatement* row) {
  row->Uint(r.id);
  row->Text(r.name);
  row->TextCopy(Hex(r.uuid));
  row->Uint(r.sm_count);
  row->Uint(r.global_memory_bytes);
  row->Uint(r.compute_capability_major);
  row->Uint(r.compute_capability_minor);
  row->Text(r.pci_bus_id);
  row->Uint(r.core_clock_khz);
  row->Uint(r.memory_clock_khz);
  row->Uint(r.memory_bus_width_bits);
  row->Uint(r.max_threads_per_block);
  row->Uint(r.l2_cache_bytes);
}

void SqliteTable<ContextInfo>::Bind(const ContextInfo& r, const SqliteRowContext&,
                                    SqliteStatement* row) {
  row->Uint(r.context_id);
  row->Uint(r.device_id);
  row->Uint(r.null_stream_id);
  row->Uint(r.compute_api);
  row->Uint(r.created_ns);
  row->Uint(r.created_thread_id);
}

void SqliteTable<StreamInfo>::Bind(const StreamInfo& r, const SqliteRowContext&,
                                   SqliteStatement* row) {
  row->Uint(r.stream_id);
  row->Uint(r.context_id);
  row->Uint(r.device_id);
  row->Text(ToString(r.type));
  row->Int(r.priority);
  IdOrNull(r.correlation_id, row);
}

void SqliteTable<NvtxDomain>::Bind(const NvtxDomain& r, const SqliteRowContext& c,
                                   SqliteStatement* row) {
  row->Uint(r.id);
  row->Text(c.String(r.name_id));
}

void SqliteTable<UnifiedMemoryCounter>::Bind(const UnifiedMemoryCounter& r,
                                             const SqliteRowContext&, SqliteStatement* row) {
  row->Text(ToString(r.counter_kind));
  row->Uint(static_cast<uint32_t>(r.counter_kind));
  row->Uint(r.value);
  row->Uint(r.start_ns);
  row->Uint(r.end_ns);
  row->Uint(r.address);
  row->Uint(r.src_device_id);
  row->Uint(r.dst_device_id);
  row->Uint(r.flags);
}

void SqliteTable<NvtxPayloadSchema>::Bind(const NvtxPayloadSchema& r, const SqliteRowContext& c,
                                          SqliteStatement* row) {
  row->Uint(r.domain_id);
  row->Uint(r.schema_id);
  row->Text(c.String(r.name_id));
  row->Uint(r.schema_type);
  row->Uint(r.flags);
  row->Uint(r.static_size_bytes);
  row->Bool(r.is_enum);
  row->Uint(r.is_enum ? r.enum_values.size() : r.entries.size());
}

std::string SqliteInsertSql(std::string_view table, size_t columns, bool replace, size_t rows) {
  std::string sql = replace ? "INSERT OR REPLACE INTO " : "INSERT INTO ";
  sql += table;
  sql += " VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "(?" : ", (?";
    for (size_t i = 0; i < columns; ++i) sql += ", ?";
    sql += ")";
  }
  return sql;
}

std::expected<void, std::string> CreateSqliteSchema(SqliteDb* db) {
  std::expected<void, std::string> done;
#define LIBPROF_CREATE_TABLE(Type, list, field, role) \
  if (done) done = CreateRecordTable<Type>(db);
  LIBPROF_RECORD_KINDS(LIBPROF_CREATE_TABLE)
#undef LIBPROF_CREATE_TABLE
  if (!done) return done;
  for (const SqliteObject& table : kExportTables) {
    if (auto created = db->Exec(table.sql); !created) return created;
  }
  for (const SqliteObject& view : kViews) {
    if (auto created = db->Exec(view.sql); !created) return created;
  }
  return db->Exec("INSERT INTO schema_version VALUES (" + std::to_string(kSqliteSchemaVersion) +
                  ")");
}

std::expected<void, std::string> CreateSqliteIndexes(SqliteDb* db) {
  std::expected<void, std::string> done;
  // Every kind with a correlation id: the API <-> device join is one indexed JOIN.
#define LIBPROF_CORRELATION_INDEX(Type, list, field, role)                                   \
  if constexpr (kHasCorrelation<Type>) {                                                     \
    if (done) {                                                                              \
      const std::string table = SqliteTable<Type>::kTable;                                   \
      done = db->Exec("CREATE INDEX " + table + "_correlation ON " + table +                 \
                      " (process_id, correlation_id)");                                      \
    }                                                                                        \
  }
  LIBPROF_RECORD_KINDS(LIBPROF_CORRELATION_INDEX)
#undef LIBPROF_CORRELATION_INDEX
  if (!done) return done;
  for (const char* sql : kIndexes) {
    if (auto created = db->Exec(sql); !created) return created;
  }
  return {};
}

}  // namespace libprof::analysis
