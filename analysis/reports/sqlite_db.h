// A thin owner of a SQLite database and its prepared statements (Debian's libsqlite3), for the
// SQLite export: errors come back as one sentence, nothing throws, handles close themselves.
//
// Layer: analysis/reports/. Knows SQLite, nothing of traces.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace libprof::analysis {

// One prepared statement, reused row after row: bind the parameters in order, then Step().
class SqliteStatement {
 public:
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Bind the next parameter. Text() keeps a pointer to `text`, which must outlive Step();
  // TextCopy() copies it. Unsigned values are stored as SQLite's signed 64-bit integers (the same
  // bits: values of 2^63 and above read back negative).
  void Int(int64_t value);
  void Uint(uint64_t value) { Int(static_cast<int64_t>(value)); }
  void Bool(bool value) { Int(value ? 1 : 0); }
  void Text(std::string_view text);
  void TextCopy(std::string_view text);
  void Null();

  // Runs the statement with the parameters bound since the last Step, then resets it. False when
  // SQLite failed or when the number of parameters bound differs from the statement's (a table
  // description out of step with its binder); error() then says why.
  bool Step();
  const std::string& error() const { return error_; }
  int parameter_count() const { return parameter_count_; }

 private:
  friend class SqliteDb;
  SqliteStatement(sqlite3_stmt* statement, sqlite3* db);
  sqlite3_stmt* statement_;
  sqlite3* db_;
  int parameter_count_ = 0;
  int bound_ = 0;
  std::string error_;
};

class SqliteDb {
 public:
  // Opens (creating) the database file at `path`.
  static std::expected<std::unique_ptr<SqliteDb>, std::string> Open(const std::string& path);
  ~SqliteDb();  // closes it, finalizing nothing left open: statements must be gone first
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements without results. Error: SQLite's message and the statement.
  std::expected<void, std::string> Exec(const std::string& sql);
  std::expected<std::unique_ptr<SqliteStatement>, std::string> Prepare(const std::string& sql);
  // Closes the database, reporting a failure to write its last pages (disk full).
  std::expected<void, std::string> Close();

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace libprof::analysis
