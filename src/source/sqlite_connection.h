// A read-only SQLite connection and its prepared statements, for the sim backend.
//
// SqliteConnection opens an existing file read-only (never creating it) with a busy timeout,
// so a reader sits next to a simulator writing the same file in WAL mode. The connection has
// no mutex (SQLITE_OPEN_NOMUTEX): that is what makes the values of sqlite3_column_value safe
// to read directly, which the column decoders do. SqliteStatement is
// one prepared statement: bind, step, read columns. Every SQLite failure becomes a
// SourceError naming the file and what was being done.
//
// Neither class is thread-safe; a connection and its statements belong to one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/lsn.h"

namespace mssql_cdc {

class SqliteConnection {
 public:
  // Throws SourceError when `path` does not exist, is not a file, or SQLite cannot open it.
  static std::shared_ptr<SqliteConnection> OpenReadOnly(const std::string& path);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  // Throws SourceError "<what> in <path>: <sqlite message>".
  [[noreturn]] void Fail(std::string_view what) const;

 private:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

class SqliteStatement {
 public:
  // Prepares `sql`; keeps the connection alive as long as the statement lives.
  SqliteStatement(std::shared_ptr<SqliteConnection> db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Parameters are 1-based, as in SQLite. Text and blobs are copied by SQLite.
  void BindInt64(int index, std::int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, std::string_view value);
  void BindBlob(int index, const void* data, std::size_t size);
  void BindLsn(int index, const Lsn& lsn) { BindBlob(index, lsn.data(), Lsn::kSize); }

  // Advances to the next row: true when there is one, false when done. Throws SourceError.
  bool Step();

  // Columns are 0-based. Text views stay valid until the next Step.
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::int64_t Int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::string_view Text(int column) const;
  std::string String(int column) const { return std::string(Text(column)); }
  // A binary(10) LSN or seqval; throws SourceError naming `what` when it is not 10 bytes.
  Lsn LsnAt(int column, std::string_view what) const;

  // For readers that take values straight from the current row.
  sqlite3_stmt* raw() const { return stmt_; }

 private:
  std::shared_ptr<SqliteConnection> db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace mssql_cdc
