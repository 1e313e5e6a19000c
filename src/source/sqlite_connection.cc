#include "source/sqlite_connection.h"

#include <filesystem>
#include <system_error>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

// Long enough to ride out a simulator's write transaction or checkpoint.
constexpr int kBusyTimeoutMillis = 10'000;
// Reads the file through a memory map instead of copying every page with read(2): change
// reads scan large tables once. Address space only; the OS pages it in as read.
constexpr const char* kMmapPragma = "PRAGMA mmap_size = 1073741824";

}  // namespace

std::shared_ptr<SqliteConnection> SqliteConnection::OpenReadOnly(const std::string& path) {
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
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw SourceError("cannot open sim database '" + path + "': " + message);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMillis);
  // A failure here only costs speed, and it cannot be a missing or foreign file (those are
  // found by the first query), so it is not an error.
  sqlite3_exec(db, kMmapPragma, nullptr, nullptr, nullptr);
  return std::shared_ptr<SqliteConnection>(new SqliteConnection(db, path));
}

SqliteConnection::~SqliteConnection() { sqlite3_close_v2(db_); }

void SqliteConnection::Fail(std::string_view what) const {
  throw SourceError(std::string(what) + " in sim database '" + path_ + "': " +
                    sqlite3_errmsg(db_));
}

SqliteStatement::SqliteStatement(std::shared_ptr<SqliteConnection> db, std::string_view sql)
    : db_(std::move(db)) {
  if (sqlite3_prepare_v3(db_->handle(), sql.data(), static_cast<int>(sql.size()),
                         0, &stmt_, nullptr) != SQLITE_OK) {
    db_->Fail("cannot prepare '" + std::string(sql.substr(0, 120)) + "'");
  }
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

void SqliteStatement::BindInt64(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_->Fail("cannot bind a parameter");
}

void SqliteStatement::BindDouble(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_->Fail("cannot bind a parameter");
}

void SqliteStatement::BindText(int index, std::string_view value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    db_->Fail("cannot bind a parameter");
  }
}

void SqliteStatement::BindBlob(int index, const void* data, std::size_t size) {
  if (sqlite3_bind_blob(stmt_, index, data, static_cast<int>(size), SQLITE_TRANSIENT) !=
      SQLITE_OK) {
    db_->Fail("cannot bind a parameter");
  }
}

bool SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->Fail("cannot read '" + std::string(sqlite3_sql(stmt_)).substr(0, 120) + "'");
}

std::string_view SqliteStatement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return std::string_view(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

Lsn SqliteStatement::LsnAt(int column, std::string_view what) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (sqlite3_column_type(stmt_, column) != SQLITE_BLOB || size != static_cast<int>(Lsn::kSize)) {
    throw SourceError(std::string(what) + " in sim database '" + db_->path() +
                      "' is not a 10-byte binary value");
  }
  return Lsn::FromBytes(blob, Lsn::kSize);
}

}  // namespace mssql_cdc
