// Tests of `profview export --format sqlite` (analysis/reports/sqlite_export.h): every record kind
// lands in its table with its values, names are resolved, files become processes, nothing is left
// under the output's name on failure, existing files are kept without --force, unknown chunk
// fields are named in a warning, and USAGE.md documents every table and column the database has.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/model/kernel_names.h"
#include "analysis/reports/sqlite_export.h"
#include "analysis/reports/sqlite_tables.h"
#include "proto/trace_reader.h"
#include "proto/trace_writer.h"
#include "tests/proto/trace_test_util.h"

namespace libprof::analysis {
namespace {

using libprof::testing::ReadFile;
using libprof::testing::SampleHeader;
using libprof::testing::SampleRecords;
using libprof::testing::ScratchDir;
using libprof::testing::WriteFile;
using Rows = std::vector<std::vector<std::string>>;

// Runs `sql` on the database at `path`; NULL reads as "NULL". Fails the test on an SQL error.
Rows Query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  Rows rows;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << path << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  } else {
    while (sqlite3_step(statement) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(statement); ++c) {
        const unsigned char* text = sqlite3_column_text(statement, c);
        row.push_back(text ? reinterpret_cast<const char*>(text) : "NULL");
      }
      rows.push_back(row);
    }
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

std::string One(const std::string& path, const std::string& sql) {
  Rows rows = Query(path, sql);
  if (rows.size() != 1 || rows[0].size() != 1) {
    ADD_FAILURE() << sql << ": " << rows.size() << " rows";
    return "";
  }
  return rows[0][0];
}

// Writes SampleRecords(salt) for each salt with the real writer, in chunks of `chunk_bytes` (small
// chunks spread definitions and uses over several), returning what was written.
TraceRecords WriteSampleTrace(const std::string& path, std::vector<uint32_t> salts,
                              size_t chunk_bytes = 1 << 20, uint32_t pid = 4242) {
  std::string error;
  auto sink = FileSink::Create(path, /*overwrite=*/true, &error);
  EXPECT_NE(sink, nullptr) << error;
  TraceWriter writer(sink.get(), {.chunk_bytes = chunk_bytes});
  TraceHeader header = SampleHeader();
  header.pid = pid;
  EXPECT_TRUE(writer.WriteHeader(header));
  TraceRecords all;
  for (uint32_t salt : salts) {
    TraceRecords records = SampleRecords(writer.strings(), salt);
    writer.AddAll(records);
    AppendRecords(records, &all);
  }
  EXPECT_TRUE(writer.Finish({.end_time_ns = 99, .reason = "exit", .records_written = 7}));
  return all;
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// Every kind of proto/record_kinds.h has its table, and every record its row: a new kind without
// a table does not compile, one whose rows go missing fails here.
TEST(SqliteExportTest, EveryRecordKindLandsInItsTable) {
  ScratchDir dir;
  const std::string trace = dir.Path("t.pb");
  const TraceRecords written = WriteSampleTrace(trace, {0}, /*chunk_bytes=*/256);
  const std::string db = dir.Path("t.sqlite");
  std::vector<std::string> warnings;
  auto stats = ExportSqlite({trace}, db, {}, &warnings);
  ASSERT_TRUE(stats.has_value()) << stats.error();
  EXPECT_TRUE(warnings.empty());
  uint64_t expected_rows = SampleHeader().devices.size();
  ForEachList(written, [&]<typename T>(const std::vector<T>& list) {
    ASSERT_FALSE(list.empty()) << RecordKind<T>::kList;
    uint64_t rows = list.size();
    if constexpr (std::is_same_v<T, CallStack>) {
      rows = 0;
      uint64_t python = 0;
      for (const CallStack& s : list) {
        rows += s.frame_ids.size();
        python += s.python_frames.size();
      }
      ASSERT_GT(python, 0u) << "the sample has Python frames";
      EXPECT_EQ(One(db, "SELECT count(*) FROM python_frames"), std::to_string(python));
      expected_rows += python;
    }
    expected_rows += rows;
    const std::string count =
        One(db, std::string("SELECT count(*) FROM ") + SqliteTable<T>::kTable);
    if constexpr (std::is_same_v<T, DeviceInfo>) {
      // The sample's device is the header's too: one row, replaced by the chunk's copy.
      EXPECT_EQ(count, "1");
    } else {
      EXPECT_EQ(count, std::to_string(rows)) << SqliteTable<T>::kTable;
    }
  });
  EXPECT_EQ(stats->rows, expected_rows);
  EXPECT_EQ(stats->processes, 1u);
  EXPECT_EQ(One(db, "SELECT version FROM schema_version"), std::to_string(kSqliteSchemaVersion));
}

// Values arrive as recorded, and names are resolved in the views: API names, profview's readable
// kernel names beside the mangled ones, NVTX messages; ids for "none" read as NULL.
TEST(SqliteExportTest, ValuesAndNamesAreResolved) {
  ScratchDir dir;
  const std::string trace = dir.Path("t.pb");
  const TraceRecords written = WriteSampleTrace(trace, {0, 1});
  const std::string db = dir.Path("t.sqlite");
  std::vector<std::string> warnings;
  ASSERT_TRUE(ExportSqlite({trace}, db, {}, &warnings).has_value());
  auto reader = TraceReader::Open(trace);
  ASSERT_TRUE(reader.has_value());
  TraceRecords chunk;
  while ((*reader)->Next(&chunk)) {}

  const ApiCall& a = written.api_calls.front();
  EXPECT_EQ(Query(db, "SELECT name, start_ns, end_ns, thread_id, correlation_id, domain FROM "
                      "api_calls WHERE correlation_id = " + std::to_string(a.correlation_id) +
                      " ORDER BY start_ns LIMIT 1"),
            (Rows{{(*reader)->String(a.name_id), std::to_string(a.start_ns),
                   std::to_string(a.end_ns), std::to_string(a.thread_id),
                   std::to_string(a.correlation_id), ToString(a.domain)}}));

  const Kernel& k = written.kernels.front();
  EXPECT_EQ(Query(db, "SELECT name, mangled_name, grid_x, block_x, stream_id FROM kernels WHERE "
                      "correlation_id = " + std::to_string(k.correlation_id) + " LIMIT 1"),
            (Rows{{KernelDisplayName((*reader)->String(k.shape.name_id),
                                     (*reader)->String(k.shape.demangled_name_id)),
                   (*reader)->String(k.shape.name_id), std::to_string(k.shape.grid[0]),
                   std::to_string(k.shape.block[0]), std::to_string(k.stream_id)}}));

  const Memcpy& m = written.memcpys.front();
  EXPECT_EQ(Query(db, "SELECT copy_kind, src_kind, dst_kind, bytes FROM memcpys WHERE "
                      "correlation_id = " + std::to_string(m.correlation_id) + " LIMIT 1"),
            (Rows{{ToString(m.copy_kind), ToString(m.src_kind), ToString(m.dst_kind),
                   std::to_string(m.bytes)}}));

  const NvtxEvent& n = written.nvtx_events.front();
  EXPECT_EQ(One(db, "SELECT message FROM nvtx_events WHERE start_ns = " +
                        std::to_string(n.start_ns) + " LIMIT 1"),
            (*reader)->String(n.message_id));

  // Python frames: one row per frame of the stack that has them, names resolved.
  for (const CallStack& s : written.call_stacks) {
    for (size_t depth = 0; depth < s.python_frames.size(); ++depth) {
      const PythonFrame& f = s.python_frames[depth];
      EXPECT_EQ(Query(db, "SELECT file, line, function FROM python_frames WHERE stack_id = " +
                              std::to_string(s.id) + " AND depth = " + std::to_string(depth)),
                (Rows{{(*reader)->String(f.file_id), std::to_string(f.line),
                       (*reader)->String(f.function_id)}}));
    }
  }

  // The header: pid, start and RunEnd figures on the process row.
  EXPECT_EQ(Query(db, "SELECT pid, start_time_ns, end_reason, records_written FROM processes"),
            (Rows{{"4242", std::to_string(SampleHeader().start_time_ns), "exit", "7"}}));
  EXPECT_EQ(One(db, "SELECT count(*) FROM settings"),
            std::to_string(SampleHeader().settings.size()));
  // Every API call joins its string: no NULL names.
  EXPECT_EQ(One(db, "SELECT count(*) FROM api_calls WHERE name IS NULL"), "0");
  EXPECT_EQ(One(db, "SELECT count(*) FROM kernels WHERE name IS NULL OR mangled_name IS NULL"),
            "0");
}

// Several files are several processes of one database, each row tagged with its process.
TEST(SqliteExportTest, SeveralFilesBecomeProcesses) {
  ScratchDir dir;
  const TraceRecords a = WriteSampleTrace(dir.Path("a.pb"), {0}, 1 << 20, 100);
  const TraceRecords b = WriteSampleTrace(dir.Path("b.pb"), {1, 2}, 1 << 20, 200);
  const std::string db = dir.Path("ab.sqlite");
  std::vector<std::string> warnings;
  auto stats = ExportSqlite({dir.Path("a.pb"), dir.Path("b.pb")}, db, {}, &warnings);
  ASSERT_TRUE(stats.has_value()) << stats.error();
  EXPECT_EQ(stats->files, 2u);
  EXPECT_EQ(Query(db, "SELECT id, pid FROM processes ORDER BY id"),
            (Rows{{"1", "100"}, {"2", "200"}}));
  EXPECT_EQ(Query(db, "SELECT process_id, count(*) FROM api_calls GROUP BY process_id"),
            (Rows{{"1", std::to_string(a.api_calls.size())},
                  {"2", std::to_string(b.api_calls.size())}}));
  EXPECT_EQ(One(db, "SELECT count(*) FROM api_calls WHERE name IS NULL"), "0");
}

TEST(SqliteExportTest, KeepsAnExistingFileWithoutForce) {
  ScratchDir dir;
  WriteSampleTrace(dir.Path("t.pb"), {0});
  const std::string db = dir.Path("t.sqlite");
  WriteFile(db, "precious");
  std::vector<std::string> warnings;
  auto refused = ExportSqlite({dir.Path("t.pb")}, db, {}, &warnings);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().find("exists already (--force replaces it)"), std::string::npos);
  EXPECT_EQ(ReadFile(db), "precious");
  auto forced = ExportSqlite({dir.Path("t.pb")}, db, {.overwrite = true}, &warnings);
  ASSERT_TRUE(forced.has_value()) << forced.error();
  EXPECT_EQ(One(db, "SELECT count(*) FROM processes"), "1");
  // Never an input, even with --force.
  auto input = ExportSqlite({dir.Path("t.pb")}, dir.Path("t.pb"), {.overwrite = true}, &warnings);
  ASSERT_FALSE(input.has_value());
  EXPECT_NE(input.error().find("is one of the input traces"), std::string::npos);
  EXPECT_EQ(FilesIn(dir.Path("")).size(), 2u);  // t.pb and t.sqlite, no temporary left
}

// A truncated or corrupt trace is an error naming the file, and no database (nor temporary file)
// remains, even where one existed and --force was given: the old one is kept.
TEST(SqliteExportTest, BadTraceLeavesNothingUnderTheName) {
  ScratchDir dir;
  WriteSampleTrace(dir.Path("t.pb"), {0, 1, 2}, /*chunk_bytes=*/256);
  const std::string whole = ReadFile(dir.Path("t.pb"));
  WriteFile(dir.Path("cut.pb"), whole.substr(0, whole.size() - 40));
  std::string corrupt = whole;
  for (size_t i = whole.size() / 2; i < whole.size() / 2 + 64; ++i) corrupt[i] = '\xff';
  WriteFile(dir.Path("corrupt.pb"), corrupt);
  std::vector<std::string> warnings;

  auto cut = ExportSqlite({dir.Path("cut.pb")}, dir.Path("cut.sqlite"), {}, &warnings);
  ASSERT_FALSE(cut.has_value());
  EXPECT_NE(cut.error().find(dir.Path("cut.pb") + ": the file ends inside a chunk"),
            std::string::npos)
      << cut.error();
  EXPECT_FALSE(std::filesystem::exists(dir.Path("cut.sqlite")));

  WriteFile(dir.Path("old.sqlite"), "old");
  auto bad = ExportSqlite({dir.Path("t.pb"), dir.Path("corrupt.pb")}, dir.Path("old.sqlite"),
                          {.overwrite = true}, &warnings);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find(dir.Path("corrupt.pb") + ": "), std::string::npos) << bad.error();
  EXPECT_EQ(ReadFile(dir.Path("old.sqlite")), "old");
  std::set<std::string> files;
  for (const std::string& f : FilesIn(dir.Path(""))) files.insert(f);
  EXPECT_EQ(files, (std::set<std::string>{"t.pb", "cut.pb", "corrupt.pb", "old.sqlite"}));
}

// A chunk field this profview does not know (a newer libprof's record kind): the known tables are
// filled and a warning names the field and how many entries were left out.
TEST(SqliteExportTest, UnknownChunkFieldsAreNamedInAWarning) {
  ScratchDir dir;
  const TraceRecords written = WriteSampleTrace(dir.Path("t.pb"), {0});
  // A Chunk (TraceFile field 2) holding three entries of a field numbered 60 (length-delimited).
  std::string chunk;
  for (int i = 0; i < 3; ++i) chunk += std::string("\xe2\x03\x02\x08\x01", 5);  // 60<<3|2, len 2
  std::string file = ReadFile(dir.Path("t.pb"));
  file += '\x12';
  file += static_cast<char>(chunk.size());
  file += chunk;
  WriteFile(dir.Path("t.pb"), file);
  std::vector<std::string> warnings;
  auto stats = ExportSqlite({dir.Path("t.pb")}, dir.Path("t.sqlite"), {}, &warnings);
  ASSERT_TRUE(stats.has_value()) << stats.error();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("3 entries of chunk field 60"), std::string::npos) << warnings[0];
  EXPECT_EQ(One(dir.Path("t.sqlite"), "SELECT count(*) FROM kernels"),
            std::to_string(written.kernels.size()));
}

// The documentation: viewer-cli/USAGE.md has a "#### `name`" section with a "| `column` |" row
// for exactly the columns of every table and view of an exported database.
TEST(SqliteExportTest, UsageDocumentsEveryTableAndColumn) {
  ScratchDir dir;
  WriteSampleTrace(dir.Path("t.pb"), {0});
  const std::string db = dir.Path("t.sqlite");
  std::vector<std::string> warnings;
  ASSERT_TRUE(ExportSqlite({dir.Path("t.pb")}, db, {}, &warnings).has_value());
  std::map<std::string, std::vector<std::string>> actual;
  for (const auto& row : Query(db, "SELECT name FROM sqlite_master WHERE type IN ('table', "
                                   "'view') AND name NOT LIKE 'sqlite_%' ORDER BY name")) {
    for (const auto& column : Query(db, "SELECT name FROM pragma_table_info('" + row[0] + "')")) {
      actual[row[0]].push_back(column[0]);
    }
  }
  // A view's storage table (`kernels_ids` under `kernels`) is documented by the view, which has
  // its columns first.
  for (auto it = actual.begin(); it != actual.end();) {
    const std::string& name = it->first;
    if (name.ends_with("_ids") && actual.count(name.substr(0, name.size() - 4))) {
      const auto& view = actual[name.substr(0, name.size() - 4)];
      EXPECT_TRUE(std::equal(it->second.begin(), it->second.end(), view.begin())) << name;
      it = actual.erase(it);
    } else {
      ++it;
    }
  }
  std::map<std::string, std::vector<std::string>> documented;
  std::ifstream usage(LIBPROF_USAGE_MD);
  ASSERT_TRUE(usage) << LIBPROF_USAGE_MD;
  std::string line, section;
  bool in_schema = false;
  while (std::getline(usage, line)) {
    if (line.starts_with("## ") || line.starts_with("### ")) {
      in_schema = line.find("SQLite tables") != std::string::npos;
      section.clear();
      continue;
    }
    if (!in_schema) continue;
    if (line.starts_with("#### `")) {
      section = line.substr(6, line.find('`', 6) - 6);  // "#### `kernels` (view over ...)"
      documented[section];
    } else if (!section.empty() && line.starts_with("| `")) {
      documented[section].push_back(line.substr(3, line.find('`', 3) - 3));
    }
  }
  EXPECT_EQ(documented, actual);
}

}  // namespace
}  // namespace libprof::analysis
