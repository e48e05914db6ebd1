#include "analysis/reports/sqlite_export.h"

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_set>

#include "analysis/model/kernel_names.h"
#include "analysis/reports/output_file.h"
#include "analysis/reports/sqlite_db.h"
#include "analysis/reports/sqlite_tables.h"
#include "proto/trace_reader.h"

namespace libprof::analysis {
namespace {

using Statement = std::unique_ptr<SqliteStatement>;

const char* ToString(Timebase timebase) {
  switch (timebase) {
    case Timebase::kClockMonotonic:
      return "monotonic";
    case Timebase::kClockRealtime:
      return "realtime";
    case Timebase::kUnspecified:
      break;
  }
  return "unspecified";
}

std::string JoinArgs(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

// Writes one database: the statements prepared once, then file after file, chunk after chunk.
class SqliteExporter {
 public:
  explicit SqliteExporter(SqliteDb* db, std::vector<std::string>* warnings)
      : db_(db), warnings_(warnings) {}

  std::expected<void, std::string> Prepare() {
    std::expected<void, std::string> done;
    auto prepare = [&](Statement* target, const std::string& sql) {
      if (!done) return;
      auto statement = db_->Prepare(sql);
      if (!statement) {
        done = std::unexpected(statement.error());
        return;
      }
      *target = std::move(*statement);
    };
#define LIBPROF_PREPARE_INSERT(Type, list, field, role)                   \
  prepare(&inserts_[RecordKind<Type>::kIndex], SqliteInsertSql<Type>()); \
  prepare(&batch_inserts_[RecordKind<Type>::kIndex], SqliteInsertSql<Type>(kRowsPerInsert));
    LIBPROF_RECORD_KINDS(LIBPROF_PREPARE_INSERT)
#undef LIBPROF_PREPARE_INSERT
    prepare(&insert_process_,
            "INSERT INTO processes (id, file, process_index, pid, parent_pid, hostname, rank, "
            "rank_source, command_line, libprof_version, schema_version, timebase, "
            "start_time_ns, start_wall_time_ns, wall_clock_offset_ns, cuda_driver_version, "
            "cuda_runtime_version, cupti_version, cupti_path, capture_status) VALUES (?, ?, ?, "
            "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    prepare(&finish_process_,
            "UPDATE processes SET cuda_runtime_version = coalesce(?, cuda_runtime_version), "
            "end_time_ns = ?, end_reason = ?, records_written = ?, records_dropped = ?, "
            "chunks_written = ?, chunks_read = ? WHERE id = ?");
    prepare(&insert_setting_, "INSERT INTO settings VALUES (?, ?, ?)");
    prepare(&insert_string_, "INSERT INTO strings VALUES (?, ?, ?)");
    prepare(&insert_kernel_name_, "INSERT INTO kernel_names VALUES (?, ?, ?, ?)");
    prepare(&insert_python_frame_, "INSERT OR REPLACE INTO python_frames VALUES (?, ?, ?, ?, ?, ?)");
    return done;
  }

  std::expected<void, std::string> AddFile(const std::string& path) {
    auto opened = TraceReader::Open(path);
    if (!opened) return std::unexpected(opened.error());
    TraceReader& reader = **opened;
    const int64_t first_id = next_process_id_;
    processes_.clear();
    processes_.resize(reader.headers().size());
    if (auto done = Transaction([&] { return AddHeaders(reader, path, first_id); }); !done) {
      return done;
    }
    next_process_id_ += static_cast<int64_t>(reader.headers().size());
    ++stats_.files;
    stats_.processes += reader.headers().size();

    TraceRecords records;
    while (reader.Next(&records)) {
      auto done = Transaction([&] {
        return AddChunk(reader, records, first_id + records.process_index);
      });
      if (!done) return std::unexpected(path + ": " + done.error());
    }
    if (!reader.error().empty()) return std::unexpected(reader.error());
    if (reader.truncated()) {
      return std::unexpected(
          path + ": the file ends inside a chunk (the process did not finish writing it); "
                 "nothing exported, since the database would look complete (profview merge "
                 "--allow-truncated copies its complete chunks into a file that can be "
                 "exported)");
    }
    if (auto done = Transaction([&] { return FinishProcesses(first_id); }); !done) {
      return done;
    }
    for (const auto& [field, count] : reader.unknown_chunk_fields()) {
      warnings_->push_back(path + ": " + std::to_string(count) + " entries of chunk field " +
                           std::to_string(field) +
                           " are not known to this profview (a newer libprof's record kind?) "
                           "and were not exported; every known table was");
    }
    return {};
  }

  const SqliteExportStats& stats() const { return stats_; }

 private:
  struct ProcessState {
    size_t strings_written = 1;  // id 0 ("") is implicit
    std::unordered_set<uint64_t> kernel_names;  // mangled id << 32 | demangled id
    std::optional<RunEnd> run_end;
    uint32_t cuda_runtime_version = 0;
    uint64_t chunks = 0;
  };

  template <typename F>
  std::expected<void, std::string> Transaction(F&& body) {
    if (auto begun = db_->Exec("BEGIN"); !begun) return begun;
    auto done = body();
    if (!done) {
      (void)db_->Exec("ROLLBACK");
      return done;
    }
    return db_->Exec("COMMIT");
  }

  static std::expected<void, std::string> Step(SqliteStatement* statement) {
    if (statement->Step()) return {};
    return std::unexpected("cannot write the database: " + statement->error());
  }

  std::expected<void, std::string> AddHeaders(const TraceReader& reader, const std::string& path,
                                              int64_t first_id) {
    for (size_t i = 0; i < reader.headers().size(); ++i) {
      const TraceHeader& h = reader.headers()[i];
      const int64_t id = first_id + static_cast<int64_t>(i);
      SqliteStatement* p = insert_process_.get();
      p->Int(id);
      p->Text(path);
      p->Uint(i);
      p->Uint(h.pid);
      p->Uint(h.parent_pid);
      p->Text(h.hostname);
      if (h.rank) {
        p->Uint(*h.rank);
      } else {
        p->Null();
      }
      p->Text(h.rank_source);
      p->TextCopy(JoinArgs(h.command_line));
      p->Text(h.libprof_version);
      p->Uint(h.schema_version);
      p->Text(ToString(h.timebase));
      p->Uint(h.start_time_ns);
      p->Uint(h.start_wall_time_ns);
      p->Int(h.wall_clock_offset_ns);
      p->Uint(h.cuda_driver_version);
      p->Uint(h.cuda_runtime_version);
      p->Uint(h.cupti_version);
      p->Text(h.cupti_path);
      p->Text(h.capture_status);
      if (auto done = Step(p); !done) return done;
      for (const auto& [name, value] : h.settings) {
        insert_setting_->Int(id);
        insert_setting_->Text(name);
        insert_setting_->Text(value);
        if (auto done = Step(insert_setting_.get()); !done) return done;
      }
      const SqliteRowContext context{.process_id = id, .strings = &reader.strings(i)};
      for (const DeviceInfo& d : h.devices) {
        if (auto done = Insert(d, context); !done) return done;
      }
    }
    return {};
  }

  template <typename T>
  std::expected<void, std::string> Insert(const T& record, const SqliteRowContext& context) {
    SqliteStatement* row = inserts_[RecordKind<T>::kIndex].get();
    if constexpr (std::is_same_v<T, CallStack>) {
      for (size_t depth = 0; depth < record.frame_ids.size(); ++depth) {
        row->Int(context.process_id);
        SqliteTable<T>::Bind(record, depth, context, row);
        if (auto done = Step(row); !done) return done;
        ++stats_.rows;
      }
      for (size_t depth = 0; depth < record.python_frames.size(); ++depth) {
        const PythonFrame& f = record.python_frames[depth];
        SqliteStatement* p = insert_python_frame_.get();
        p->Int(context.process_id);
        p->Uint(record.id);
        p->Uint(depth);
        p->Text(context.String(f.file_id));
        p->Uint(f.line);
        p->Text(context.String(f.function_id));
        if (auto done = Step(p); !done) return done;
        ++stats_.rows;
      }
    } else {
      row->Int(context.process_id);
      SqliteTable<T>::Bind(record, context, row);
      if (auto done = Step(row); !done) return done;
      ++stats_.rows;
    }
    return {};
  }

  std::expected<void, std::string> AddChunk(const TraceReader& reader,
                                            const TraceRecords& records, int64_t process_id) {
    ProcessState& state = processes_[records.process_index];
    ++state.chunks;
    if (records.run_end) state.run_end = records.run_end;
    if (records.cuda_runtime_version != 0) state.cuda_runtime_version = records.cuda_runtime_version;
    const std::vector<std::string>& strings = reader.strings(records.process_index);
    for (; state.strings_written < strings.size(); ++state.strings_written) {
      insert_string_->Int(process_id);
      insert_string_->Uint(state.strings_written);
      insert_string_->Text(strings[state.strings_written]);
      if (auto done = Step(insert_string_.get()); !done) return done;
      ++stats_.strings;
    }
    // profview's readable name of each distinct (mangled, demangled) pair, once.
    for (const Kernel& k : records.kernels) {
      const uint64_t key = uint64_t{k.shape.name_id} << 32 | k.shape.demangled_name_id;
      if (!state.kernel_names.insert(key).second) continue;
      const std::string name = KernelDisplayName(reader.String(k.shape.name_id, records.process_index),
                                                 reader.String(k.shape.demangled_name_id,
                                                               records.process_index));
      insert_kernel_name_->Int(process_id);
      insert_kernel_name_->Uint(k.shape.name_id);
      insert_kernel_name_->Uint(k.shape.demangled_name_id);
      insert_kernel_name_->Text(name);
      if (auto done = Step(insert_kernel_name_.get()); !done) return done;
    }
    const SqliteRowContext context{.process_id = process_id, .strings = &strings};
    std::expected<void, std::string> done;
    ForEachList(records, [&]<typename T>(const std::vector<T>& list) {
      if (done) done = InsertList(list, context);
    });
    return done;
  }

  // kRowsPerInsert rows per statement while there are that many, then one at a time.
  template <typename T>
  std::expected<void, std::string> InsertList(const std::vector<T>& list,
                                              const SqliteRowContext& context) {
    size_t i = 0;
    if constexpr (!std::is_same_v<T, CallStack>) {
      SqliteStatement* batch = batch_inserts_[RecordKind<T>::kIndex].get();
      while (list.size() - i >= kRowsPerInsert) {
        for (const size_t end = i + kRowsPerInsert; i < end; ++i) {
          batch->Int(context.process_id);
          SqliteTable<T>::Bind(list[i], context, batch);
        }
        if (auto done = Step(batch); !done) return done;
        stats_.rows += kRowsPerInsert;
      }
    }
    for (; i < list.size(); ++i) {
      if (auto done = Insert(list[i], context); !done) return done;
    }
    return {};
  }

  std::expected<void, std::string> FinishProcesses(int64_t first_id) {
    for (size_t i = 0; i < processes_.size(); ++i) {
      const ProcessState& state = processes_[i];
      SqliteStatement* u = finish_process_.get();
      if (state.cuda_runtime_version != 0) {
        u->Uint(state.cuda_runtime_version);
      } else {
        u->Null();
      }
      if (state.run_end) {  // a recording that finished cleanly
        u->Uint(state.run_end->end_time_ns);
        u->Text(state.run_end->reason);
        u->Uint(state.run_end->records_written);
        u->Uint(state.run_end->records_dropped);
        u->Uint(state.run_end->chunks_written);
      } else {
        for (int column = 0; column < 5; ++column) u->Null();
      }
      u->Uint(state.chunks);
      u->Int(first_id + static_cast<int64_t>(i));
      if (auto done = Step(u); !done) return done;
    }
    return {};
  }

  SqliteDb* db_;
  std::vector<std::string>* warnings_;
  // Rows per INSERT statement for the bulk of each list: fewer statement executions per row
  // (1.19 s to 0.81 s of CPU per million rows; bench/README.md).
  static constexpr size_t kRowsPerInsert = 32;
  std::array<Statement, kRecordKindCount> inserts_, batch_inserts_;
  Statement insert_process_, finish_process_, insert_setting_, insert_string_, insert_python_frame_,
      insert_kernel_name_;
  std::vector<ProcessState> processes_;  // of the file being read
  int64_t next_process_id_ = 1;
  SqliteExportStats stats_;
};

// Settings for a database that nobody reads until it is complete and renamed: no journal (a
// failed export is deleted, never rolled back), no fsync per transaction, one writer.
constexpr const char* kBulkPragmas =
    "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; "
    "PRAGMA temp_store = FILE; PRAGMA page_size = 65536;";

std::expected<void, std::string> RefuseInputAsOutput(const std::vector<std::string>& files,
                                                     const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(output, ec)) return {};
  for (const std::string& f : files) {
    if (fs::equivalent(f, output, ec)) {
      return std::unexpected(output + ": is one of the input traces; not overwritten");
    }
  }
  return {};
}

}  // namespace

std::expected<SqliteExportStats, std::string> ExportSqlite(const std::vector<std::string>& files,
                                                           const std::string& output,
                                                           const SqliteExportOptions& options,
                                                           std::vector<std::string>* warnings) {
  if (files.empty()) return std::unexpected("no trace file given");
  if (output.empty() || output == "-") {
    return std::unexpected("--format sqlite writes a file: give its name with -o FILE");
  }
  if (auto refused = RefuseInputAsOutput(files, output); !refused) {
    return std::unexpected(refused.error());
  }
  auto file = OutputFile::Create(output, {.open_stream = false, .replace = options.overwrite});
  if (!file) return std::unexpected(file.error());
  auto db = SqliteDb::Open((*file)->temp_path());
  if (!db) return std::unexpected(output + ": " + db.error());
  const std::string pragmas =
      kBulkPragmas + std::string(" PRAGMA cache_size = -") + std::to_string(kSqliteCacheKiB) + ";";
  if (auto done = (*db)->Exec(pragmas); !done) return std::unexpected(output + ": " + done.error());
  if (auto done = CreateSqliteSchema(db->get()); !done) {
    return std::unexpected(output + ": " + done.error());
  }
  SqliteExportStats stats;
  {
    SqliteExporter exporter(db->get(), warnings);  // its statements go before the database
    if (auto done = exporter.Prepare(); !done) return std::unexpected(output + ": " + done.error());
    for (const std::string& path : files) {
      if (auto done = exporter.AddFile(path); !done) return std::unexpected(done.error());
    }
    stats = exporter.stats();
  }
  if (auto done = CreateSqliteIndexes(db->get()); !done) {
    return std::unexpected(output + ": " + done.error());
  }
  if (auto closed = (*db)->Close(); !closed) return std::unexpected(output + ": " + closed.error());
  if (auto committed = (*file)->Commit(); !committed) return std::unexpected(committed.error());
  return stats;
}

}  // namespace libprof::analysis
