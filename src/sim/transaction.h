// A transaction of DML on a simulated database: inserts, updates and deletes by primary key,
// one row or many at a time, applied together at Commit or not at all.
//
// Values are checked against the columns' types when a statement is added (so a bad value
// fails at once, naming the column), and the statements run in order at Commit inside one
// SQLite transaction that also writes the change rows of every capture instance of the
// touched tables and the commit's lsn_time_mapping entry. A statement that finds no row to
// update or delete, or a key that exists already, fails the Commit and leaves nothing.
//
// The begin time is the clock's reading at Begin(); the commit LSN and end time are taken at
// Commit(), so a transaction held open while others commit gets a later LSN than theirs, as
// in SQL Server. __$seqval values are assigned at Commit too, in statement order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/lsn.h"
#include "core/time.h"
#include "sim/schema.h"
#include "sim/value.h"

namespace mssql_cdc::sim {

class SimDatabase;

struct RowUpdate {
  Row key;  // every primary-key column
  Row set;  // new values of non-key columns
};

struct CommitResult {
  // The commit LSN; nullopt when no statement touched a table with CDC (nothing reaches
  // lsn_time_mapping then, as in SQL Server).
  std::optional<Lsn> commit_lsn;
  std::int64_t rows_affected = 0;
  std::int64_t change_rows = 0;
};

// Commit found a row that another transaction committed first: an insert of a key that
// exists (SQL Server's error 2627), an update or delete of a key that is gone. Nothing was
// committed; a client that chose the rows itself may read the table again and retry.
class DuplicateKeyError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};
class MissingRowError : public NotFoundError {
 public:
  using NotFoundError::NotFoundError;
};

class Transaction {
 public:
  Transaction(SimDatabase& db, UtcMicros begin_time);
  // Rolls back when neither Commit nor Rollback ran.
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void Insert(const TableName& table, Row row);
  void InsertMany(const TableName& table, std::vector<Row> rows);
  // Sets the columns of `set` in the row with primary key `key`. Key columns cannot be set.
  void Update(const TableName& table, Row key, Row set);
  void UpdateMany(const TableName& table, std::vector<RowUpdate> updates);
  void Delete(const TableName& table, Row key);
  void DeleteMany(const TableName& table, std::vector<Row> keys);
  // A change as the transaction log records it, for a database driven change by change
  // (mssql_cdc.fake): operation 2 inserts `image` (replacing a row of its key), 1 deletes the
  // row of its key, and 3 then 4 update the row of their key from the first image to the
  // second (inserting it when absent). Each change row carries the image given, columns not
  // given NULL, whatever the table held: a test writes the change rows it needs, and the
  // table follows as far as it can. Commit refuses a 3 not followed by a 4 of the same key.
  void LogChange(const TableName& table, int operation, Row image);

  CommitResult Commit();
  // Forgets every statement; the database is unchanged.
  void Rollback();

  bool is_open() const { return open_; }
  std::size_t statement_count() const { return statements_.size(); }
  UtcMicros begin_time() const { return begin_time_; }

 private:
  enum class Op { kInsert, kUpdate, kDelete, kLog };
  struct Statement {
    Op op;
    TableName table;
    std::vector<Row> rows;  // inserted rows, or keys of updates and deletes, or logged images
    std::vector<Row> sets;  // for updates, parallel to rows
    int operation = 0;      // for a logged change, its __$operation
  };
  void Add(Statement statement);
  void CheckOpen() const;

  SimDatabase& db_;
  UtcMicros begin_time_;
  std::vector<Statement> statements_;
  bool open_ = true;
};

}  // namespace mssql_cdc::sim
