// A thin RAII layer over SQLite's C API, shared by the simulator (which writes a simulated
// database) and the sim backend of Source (which reads one while a simulator writes it).
//
// SqliteDb is one connection, opened in one of three modes:
//   kCreate    read-write, creating the file when it is missing (`mssql-cdc sim create`);
//   kReadWrite read-write, on a file that must exist;
//   kReadOnly  read-only (SQLITE_OPEN_READONLY) on a file that must exist: nothing is created
//              or changed on disk, and reads go through a memory map.
// A missing path or one that is not a regular file is refused with a SourceError before
// SQLite sees it, so that no mode but kCreate ever creates a file. Every connection has a
// busy timeout, so a writer and readers in other processes work at once, and no mutex
// (SQLITE_OPEN_NOMUTEX): that is what makes the unprotected values of sqlite3_column_value
// safe to read directly, which the column decoders of the reader do.
//
// Statement is one prepared statement: bind, step, read columns. It either borrows its
// connection (the caller keeps the SqliteDb alive longer) or shares ownership of it through
// a std::shared_ptr, so that a reader handed out by a Source outlives the Source.
//
// WriteTransaction and ReadTransaction scope a transaction on a connection.
//
// Every SQLite failure becomes a SourceError naming the file and what was being done.
// None of the classes is thread-safe; a connection and its statements belong to one thread at
// a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/lsn.h"
#include "sim/value.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mssql_cdc::sim {

class SqliteDb {
 public:
  enum class Mode { kCreate, kReadWrite, kReadOnly };

  // Opens `path` in `mode` and sets the busy timeout. Throws SourceError when the file cannot
  // be opened, and, in the modes other than kCreate, when it does not exist or is not a file.
  SqliteDb(const std::string& path, Mode mode);
  // A kReadOnly connection that statements can share (see Statement).
  static std::shared_ptr<SqliteDb> OpenReadOnly(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Switches to WAL; called once the file is known to be a simulated database, so that
  // opening some other SQLite file changes nothing in it.
  void EnableWal();

  // Runs statements that return no rows.
  void Exec(std::string_view sql);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  std::int64_t Changes() const;
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  // Throws SourceError "<what> in sim database '<path>': <SQLite's message>".
  [[noreturn]] void Fail(std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  // Prepares `sql` on a connection that the caller keeps alive as long as the statement.
  Statement(SqliteDb& db, std::string_view sql);
  // Prepares `sql` and keeps the connection alive as long as the statement lives.
  Statement(std::shared_ptr<SqliteDb> db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds are 1-based, like SQLite's. Text and blobs are copied; a zero-length blob stays a
  // blob, not NULL.
  Statement& Bind(int index, const Value& value);
  Statement& BindInt(int index, std::int64_t value);
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindBlob(int index, const void* data, std::size_t size);
  // An LSN or seqval, as the binary(10) blob the file stores.
  Statement& BindLsn(int index, const Lsn& lsn) { return BindBlob(index, lsn.data(), Lsn::kSize); }
  Statement& BindNull(int index);

  // Steps once: true when a row is available, false when done.
  bool Step();
  // Steps to the end, for statements without rows.
  void Run();
  // Rewinds for another run and clears the bindings.
  void Reset();

  // Columns are 0-based.
  int ColumnCount() const;
  bool IsNull(int column) const;
  std::int64_t Int(int column) const;
  double Double(int column) const;
  // The text without a copy; valid until the next Step, Reset or the statement's end.
  std::string_view TextView(int column) const;
  std::string Text(int column) const { return std::string(TextView(column)); }
  std::string Blob(int column) const;
  // A binary(10) LSN or seqval; throws SourceError naming `what` when it is not 10 bytes.
  Lsn LsnAt(int column, std::string_view what) const;
  // The column as stored: null, integer, real, text or bytes.
  Value Get(int column) const;

  // For readers that take values straight from the current row (sqlite3_column_value).
  sqlite3_stmt* raw() const { return stmt_; }

 private:
  std::shared_ptr<SqliteDb> owner_;  // empty when the connection is borrowed
  SqliteDb* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE on construction (takes the write lock at once, waiting up to the busy
// timeout), ROLLBACK on destruction unless Commit() ran.
class WriteTransaction {
 public:
  explicit WriteTransaction(SqliteDb& db);
  ~WriteTransaction();
  void Commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

// BEGIN DEFERRED: a consistent read snapshot across several statements.
class ReadTransaction {
 public:
  explicit ReadTransaction(SqliteDb& db);
  ~ReadTransaction();

 private:
  SqliteDb& db_;
};

}  // namespace mssql_cdc::sim
