#include "sim/sqlite.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>

#include "core/errors.h"

namespace mssql_cdc::sim {
namespace {

// A writer waits long enough for a bulk transaction of another process to finish; a reader
// long enough to ride out a simulator's write transaction or checkpoint.
constexpr int kWriterBusyTimeoutMs = 60'000;
constexpr int kReaderBusyTimeoutMs = 10'000;
// Reads copy pages with read(2) into SQLite's small page cache rather than mapping the file:
// a mapped page read once stays counted in the reading process's resident memory, so a
// change read of a big table would grow the engine by the size of the file it scanned. The
// copy costs nothing measurable (source_bench reads as fast either way: the file is in the
// OS page cache).
constexpr const char* kMmapPragma = "PRAGMA mmap_size = 0";
// How much of a statement's SQL an error message quotes.
constexpr std::size_t kQuotedSql = 120;

std::string Quoted(std::string_view sql) {
  return "'" + std::string(sql.substr(0, kQuotedSql)) + "'";
}

int OpenFlags(SqliteDb::Mode mode) {
  switch (mode) {
    case SqliteDb::Mode::kCreate:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    case SqliteDb::Mode::kReadWrite:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    case SqliteDb::Mode::kReadOnly:
      break;
  }
  return SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
}

}  // namespace

SqliteDb::SqliteDb(const std::string& path, Mode mode) : path_(path) {
  if (mode != Mode::kCreate) {
    // Checked here, not left to SQLite, so the message can say what is wrong; SQLite would not
    // create the file either, as it is opened without SQLITE_OPEN_CREATE.
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) {
      throw SourceError("sim database '" + path + "' does not exist");
    }
    if (!std::filesystem::is_regular_file(status)) {
      throw SourceError("sim database '" + path + "' is not a file");
    }
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db_, OpenFlags(mode), nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SourceError("cannot open sim database '" + path + "': " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  if (mode == Mode::kReadOnly) {
    sqlite3_busy_timeout(db_, kReaderBusyTimeoutMs);
    // A failure here only costs speed, and it cannot be a missing or foreign file (those are
    // found by the first query), so it is not an error.
    sqlite3_exec(db_, kMmapPragma, nullptr, nullptr, nullptr);
  } else {
    sqlite3_busy_timeout(db_, kWriterBusyTimeoutMs);
  }
}

std::shared_ptr<SqliteDb> SqliteDb::OpenReadOnly(const std::string& path) {
  return std::make_shared<SqliteDb>(path, Mode::kReadOnly);
}

void SqliteDb::EnableWal() {
  // WAL lets readers in other processes read while one process writes; NORMAL sync keeps
  // commits cheap and the file consistent after a crash of the process.
  Exec("PRAGMA journal_mode=WAL");
  Exec("PRAGMA synchronous=NORMAL");
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

void SqliteDb::Exec(std::string_view sql) {
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    Fail("cannot run " + Quoted(sql));
  }
}

std::int64_t SqliteDb::Changes() const { return sqlite3_changes64(db_); }

void SqliteDb::Fail(std::string_view what) const {
  throw SourceError(std::string(what) + " in sim database '" + path_ + "': " +
                    sqlite3_errmsg(db_));
}

Statement::Statement(SqliteDb& db, std::string_view sql) : db_(&db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_,
                         nullptr) != SQLITE_OK) {
    db.Fail("cannot prepare " + Quoted(sql));
  }
}

Statement::Statement(std::shared_ptr<SqliteDb> db, std::string_view sql) : Statement(*db, sql) {
  owner_ = std::move(db);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

namespace {

void CheckBind(int rc, const SqliteDb& db, int index) {
  if (rc != SQLITE_OK) db.Fail("cannot bind parameter " + std::to_string(index));
}

}  // namespace

Statement& Statement::Bind(int index, const Value& value) {
  if (value.is_null()) return BindNull(index);
  if (value.is_int()) return BindInt(index, value.as_int());
  if (value.is_double()) return BindDouble(index, value.as_double());
  if (value.is_string()) return BindText(index, value.as_string());
  return BindBlob(index, value.as_bytes().data.data(), value.as_bytes().data.size());
}

Statement& Statement::BindInt(int index, std::int64_t value) {
  CheckBind(sqlite3_bind_int64(stmt_, index, value), *db_, index);
  return *this;
}

Statement& Statement::BindDouble(int index, double value) {
  CheckBind(sqlite3_bind_double(stmt_, index, value), *db_, index);
  return *this;
}

Statement& Statement::BindText(int index, std::string_view value) {
  CheckBind(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                SQLITE_UTF8),
            *db_, index);
  return *this;
}

Statement& Statement::BindBlob(int index, const void* data, std::size_t size) {
  // A null pointer would bind NULL: a zero-length blob must stay a blob.
  static const char kEmpty = 0;
  CheckBind(sqlite3_bind_blob64(stmt_, index, size ? data : &kEmpty, size, SQLITE_TRANSIENT),
            *db_, index);
  return *this;
}

Statement& Statement::BindNull(int index) {
  CheckBind(sqlite3_bind_null(stmt_, index), *db_, index);
  return *this;
}

bool Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->Fail("cannot run " + Quoted(sqlite3_sql(stmt_)));
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

std::string_view Statement::TextView(int column) const {
  // The pointer first, then the length: SQLite's documented order for a stable answer.
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return std::string_view(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Statement::Blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  if (!data) return {};
  return std::string(static_cast<const char*>(data),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

Lsn Statement::LsnAt(int column, std::string_view what) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (sqlite3_column_type(stmt_, column) != SQLITE_BLOB || size != static_cast<int>(Lsn::kSize)) {
    throw SourceError(std::string(what) + " in sim database '" + db_->path() +
                      "' is not a 10-byte binary value");
  }
  return Lsn::FromBytes(blob, Lsn::kSize);
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
