#include "analysis/reports/sqlite_db.h"

#include <sqlite3.h>

namespace libprof::analysis {

SqliteStatement::SqliteStatement(sqlite3_stmt* statement, sqlite3* db)
    : statement_(statement), db_(db), parameter_count_(sqlite3_bind_parameter_count(statement)) {}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

void SqliteStatement::Int(int64_t value) { sqlite3_bind_int64(statement_, ++bound_, value); }

void SqliteStatement::Text(std::string_view text) {
  sqlite3_bind_text(statement_, ++bound_, text.data(), static_cast<int>(text.size()),
                    SQLITE_STATIC);
}

void SqliteStatement::TextCopy(std::string_view text) {
  sqlite3_bind_text(statement_, ++bound_, text.data(), static_cast<int>(text.size()),
                    SQLITE_TRANSIENT);
}

void SqliteStatement::Null() { sqlite3_bind_null(statement_, ++bound_); }

bool SqliteStatement::Step() {
  if (bound_ != parameter_count_) {
    error_ = "internal error: " + std::to_string(bound_) + " values bound for " +
             std::to_string(parameter_count_) + " columns in: " + sqlite3_sql(statement_);
    bound_ = 0;
    return false;
  }
  bound_ = 0;
  const int rc = sqlite3_step(statement_);
  sqlite3_reset(statement_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    error_ = sqlite3_errmsg(db_);
    return false;
  }
  return true;
}

std::expected<std::unique_ptr<SqliteDb>, std::string> SqliteDb::Open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    std::string error = path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return std::unexpected(error);
  }
  return std::unique_ptr<SqliteDb>(new SqliteDb(db));
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

std::expected<void, std::string> SqliteDb::Exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string error = std::string(message ? message : sqlite3_errmsg(db_)) + " (in: " +
                        sql.substr(0, 200) + ")";
    sqlite3_free(message);
    return std::unexpected(error);
  }
  return {};
}

std::expected<std::unique_ptr<SqliteStatement>, std::string> SqliteDb::Prepare(
    const std::string& sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &statement, nullptr) != SQLITE_OK) {
    return std::unexpected(std::string(sqlite3_errmsg(db_)) + " (in: " + sql.substr(0, 200) +
                           ")");
  }
  return std::unique_ptr<SqliteStatement>(new SqliteStatement(statement, db_));
}

std::expected<void, std::string> SqliteDb::Close() {
  if (db_ == nullptr) return {};
  const int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) return std::unexpected(std::string(sqlite3_errstr(rc)));
  db_ = nullptr;
  return {};
}

}  // namespace libprof::analysis
