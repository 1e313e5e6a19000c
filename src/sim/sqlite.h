// A thin RAII layer over SQLite's C API for the simulator: a connection in WAL mode with a
// busy timeout (so a workload writer and readers in other processes work at once), prepared
// statements with typed binds, and a write transaction that rolls back unless committed.
// Every SQLite failure becomes a SourceError naming the file and SQLite's message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/value.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mssql_cdc::sim {

class SqliteDb {
 public:
  // Opens (creating when `create` is set) the file and sets the busy timeout.
  SqliteDb(const std::string& path, bool create);
  // Switches to WAL; called once the file is known to be a simulated database, so that
  // opening some other SQLite file changes nothing in it.
  void EnableWal();
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs statements that return no rows.
  void Exec(std::string_view sql);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  std::int64_t Changes() const;
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void Fail(std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(SqliteDb& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds are 1-based, like SQLite's.
  Statement& Bind(int index, const Value& value);
  Statement& BindInt(int index, std::int64_t value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindBlob(int index, const void* data, std::size_t size);
  Statement& BindNull(int index);

  // Steps once: true when a row is available.
  bool Step();
  // Steps to the end, for statements without rows.
  void Run();
  void Reset();

  int ColumnCount() const;
  bool IsNull(int column) const;
  std::int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  std::string Blob(int column) const;
  // The column as stored: null, integer, real, text or bytes.
  Value Get(int column) const;

 private:
  SqliteDb& db_;
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
