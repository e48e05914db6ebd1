// The tables of `profview export --format sqlite`: one per record kind of proto/record_kinds.h
// (SqliteTable<T>), named after the kind's list in the trace, plus the tables of the export itself
// (processes, settings, strings, kernel_names, schema_version) and the views that resolve names.
// Each table's columns are documented in viewer-cli/USAGE.md ("profview export --format
// sqlite"); sqlite_tables_test.cc holds the two to each other.
//
// Every record table starts with `process_id` (processes.id: several files and merged traces go
// into one database). Times are nanoseconds on the trace's timebase, as recorded; subtract
// processes.start_time_ns for time since the recording started. Enums are profview's words
// ("HtoD", "pageable"); booleans 0/1.
//
// The kinds that carry many repeated names (API calls, kernels, NVTX events) store string ids in
// a table named `<list>_ids` and are read through a view named `<list>` that joins the names
// (strings, kernel_names): ids keep a 10M-record database small and fast to write. The other
// tables hold their text directly.
//
// Layer: analysis/reports/. Adding a record kind: a SqliteTable specialization here (its Bind in
// sqlite_tables.cc) and its section in USAGE.md; the export does not compile without the first
// and the test fails without the second.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/reports/sqlite_db.h"
#include "proto/trace_model.h"

namespace libprof::analysis {

// Version of the database layout, in its schema_version table: bumped when a column changes
// meaning or goes away (adding tables or columns does not bump it).
inline constexpr int kSqliteSchemaVersion = 1;

struct SqliteColumn {
  const char* name;
  const char* type;  // "INTEGER" or "TEXT"
};

// What binding a row may look up: the process's id in the database and its string table as the
// reader has read it so far (a string is defined before the first record that uses it).
struct SqliteRowContext {
  int64_t process_id = 0;
  const std::vector<std::string>* strings = nullptr;
  const std::string& String(uint32_t id) const;
};

// The table of record kind T: kTable, kColumns (after process_id), Bind (binds them in order),
// and optionally kKey (the columns after process_id that identify a row: a unique index, and
// rows repeated by later chunks replace earlier ones).
template <typename T>
struct SqliteTable {
  static_assert(sizeof(T) == 0,
                "a record kind of proto/record_kinds.h has no SQLite table: add its "
                "SqliteTable<T> in analysis/reports/sqlite_tables.h (Bind in sqlite_tables.cc) "
                "and its columns in viewer-cli/USAGE.md");
};

#define LIBPROF_SQLITE_TABLE(Type, table)                                            \
  template <>                                                                        \
  struct SqliteTable<Type> {                                                         \
    static constexpr const char* kTable = table;                                     \
    static const std::span<const SqliteColumn> kColumns;                             \
    static const char* const kKey;                                                   \
    static void Bind(const Type& r, const SqliteRowContext& c, SqliteStatement* row); \
  };
LIBPROF_SQLITE_TABLE(ApiCall, "api_calls_ids")
LIBPROF_SQLITE_TABLE(Kernel, "kernels_ids")
LIBPROF_SQLITE_TABLE(Memcpy, "memcpys")
LIBPROF_SQLITE_TABLE(Memset, "memsets")
LIBPROF_SQLITE_TABLE(Synchronization, "synchronizations")
LIBPROF_SQLITE_TABLE(NvtxEvent, "nvtx_events_ids")
LIBPROF_SQLITE_TABLE(MemoryOp, "memory_ops")
LIBPROF_SQLITE_TABLE(CudaEvent, "cuda_events")
LIBPROF_SQLITE_TABLE(Overhead, "overheads")
LIBPROF_SQLITE_TABLE(GraphTrace, "graph_traces")
LIBPROF_SQLITE_TABLE(DropReport, "drops")
LIBPROF_SQLITE_TABLE(StackModule, "stack_modules")
LIBPROF_SQLITE_TABLE(StackFrame, "stack_frames")
LIBPROF_SQLITE_TABLE(DeviceInfo, "devices")
LIBPROF_SQLITE_TABLE(ContextInfo, "contexts")
LIBPROF_SQLITE_TABLE(StreamInfo, "streams")
LIBPROF_SQLITE_TABLE(NvtxDomain, "nvtx_domains")
#undef LIBPROF_SQLITE_TABLE
// One row per frame of the stack: Bind binds the frame at `depth` (0 = innermost).
template <>
struct SqliteTable<CallStack> {
  static constexpr const char* kTable = "call_stacks";
  static const std::span<const SqliteColumn> kColumns;
  static const char* const kKey;
  static void Bind(const CallStack& r, size_t depth, const SqliteRowContext& c,
                   SqliteStatement* row);
};

// The schema: the record tables (with the unique indexes of their keys), the export's own tables
// (processes, settings, strings, kernel_names, schema_version with its row) and the views.
std::expected<void, std::string> CreateSqliteSchema(SqliteDb* db);
// The indexes on the join keys (correlation ids, string and stack ids), created once the rows are
// in: building them at the end is faster than keeping them up to date row by row.
std::expected<void, std::string> CreateSqliteIndexes(SqliteDb* db);

// "INSERT [OR REPLACE] INTO <table> VALUES (?, ...), ..." for `rows` rows of process_id and
// `columns` more; OR REPLACE for the tables with a key.
std::string SqliteInsertSql(std::string_view table, size_t columns, bool replace, size_t rows);
template <typename T>
std::string SqliteInsertSql(size_t rows = 1) {
  return SqliteInsertSql(SqliteTable<T>::kTable, SqliteTable<T>::kColumns.size(),
                         SqliteTable<T>::kKey != nullptr, rows);
}

}  // namespace libprof::analysis
