// `profview export --format sqlite`: trace files into one SQLite database, a table per record kind
// (analysis/reports/sqlite_tables.h; columns in viewer-cli/USAGE.md), for questions profview does
// not answer itself: SQL in the sqlite3 shell, or DataFrames through the Python package.
//
// Streams: chunk by chunk through TraceReader, one transaction per chunk with prepared statements,
// so memory holds one chunk plus SQLite's page cache (kSqliteCacheKiB) whatever the trace size.
// The database is written under a temporary name next to the output and renamed only once
// complete: a failure leaves nothing under the output's name.
//
// Layer: analysis/reports/ (reads traces through proto/'s reader; kernel names through model/).
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace libprof::analysis {

struct SqliteExportOptions {
  bool overwrite = false;  // replace an existing output (never an input)
};

struct SqliteExportStats {
  uint64_t rows = 0;     // rows written to the record tables (a call stack is a row per frame)
  uint64_t strings = 0;  // rows of the strings table
  size_t processes = 0;
  size_t files = 0;
};

// Exports `files` (trace files, as given: directories already expanded) into the database
// `output`. Errors (one sentence naming the file): an unreadable, corrupt or truncated trace (a
// truncated one is refused: its database would look complete), an existing output without
// `overwrite`, an output that is one of the inputs, SQLite failing (disk full). Warnings: what a
// trace held that this profview does not know (a newer libprof's record kinds), left out.
std::expected<SqliteExportStats, std::string> ExportSqlite(const std::vector<std::string>& files,
                                                           const std::string& output,
                                                           const SqliteExportOptions& options,
                                                           std::vector<std::string>* warnings);

// SQLite's page cache for the export, in KiB: the bound on its memory beyond one chunk. The rows
// are appended (rowid order), so the cache mostly holds the pages being filled; 54 MiB peak RSS at
// 1M and 10M records with it (bench/README.md). Larger caches were not measured.
inline constexpr int kSqliteCacheKiB = 16 * 1024;

}  // namespace libprof::analysis
