#include "sim/sqlite.h"

#include <sqlite3.h>

#include "core/errors.h"

namespace mssql_cdc::sim {
namespace {

// Long enough for a bulk transaction of another process to finish.
constexpr int kBusyTimeoutMs = 60'000;

}  // namespace

SqliteDb::SqliteDb(const std::string& path, bool create) : path_(path) {
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) |
                    SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw SourceError("cannot open simulated database " + path + ": " + message +
                      (create ? "" : " (create one with `mssql-cdc sim create`)"));
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

void SqliteDb::EnableWal() {
  // WAL lets readers in other processes read while one process writes; NORMAL sync keeps
  // commits cheap and the file consistent after a crash of the process.
  Exec("PRAGMA journal_mode=WAL");
  Exec("PRAGMA synchronous=NORMAL");
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

void SqliteDb::Exec(std::string_view sql) {
  std::string text(sql);
  char* error = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw SourceError("simulated database " + path_ + ": " + message);
  }
}

std::int64_t SqliteDb::Changes() const { return sqlite3_changes64(db_); }

void SqliteDb::Fail(std::string_view what) const {
  throw SourceError("simulated database " + path_ + ": " + std::string(what) + ": " +
                    sqlite3_errmsg(db_));
}

Statement::Statement(SqliteDb& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_,
                         nullptr) != SQLITE_OK) {
    db.Fail("cannot prepare `" + std::string(sql.substr(0, 200)) + "`");
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int index, const Value& value) {
  if (value.is_null()) return BindNull(index);
  if (value.is_int()) return BindInt(index, value.as_int());
  if (value.is_double()) {
    sqlite3_bind_double(stmt_, index, value.as_double());
    return *this;
  }
  if (value.is_string()) return BindText(index, value.as_string());
  return BindBlob(index, value.as_bytes().data.data(), value.as_bytes().data.size());
}

Statement& Statement::BindInt(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::BindText(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Statement& Statement::BindBlob(int index, const void* data, std::size_t size) {
  // A zero-length blob must stay a blob, not become NULL.
  static const char kEmpty = 0;
  sqlite3_bind_blob64(stmt_, index, size ? data : &kEmpty, size, SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

bool Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.Fail("statement failed");
}

void Statement::Run() {
  while (Step()) {
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::Text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (!text) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Statement::Blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  if (!data) return {};
  return std::string(static_cast<const char*>(data),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

Value Statement::Get(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_INTEGER:
      return Value(Int(column));
    case SQLITE_FLOAT:
      return Value(Double(column));
    case SQLITE_TEXT:
      return Value(Text(column));
    case SQLITE_BLOB:
      return Value(Bytes{Blob(column)});
    default:
      return Value();
  }
}

WriteTransaction::WriteTransaction(SqliteDb& db) : db_(db) { db_.Exec("BEGIN IMMEDIATE"); }

WriteTransaction::~WriteTransaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTransaction::Commit() {
  db_.Exec("COMMIT");
  done_ = true;
}

ReadTransaction::ReadTransaction(SqliteDb& db) : db_(db) { db_.Exec("BEGIN"); }

ReadTransaction::~ReadTransaction() {
  sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr);
}

}  // namespace mssql_cdc::sim
