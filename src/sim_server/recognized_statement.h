// What a statement sent to `mssql-cdc sim serve` was recognised as: one of the statements of
// the odbc backend (source/odbc/statements.h), a query drivers send on their own, one of
// mssql-cdc-pyspark 0.8.0's (reference_shapes.cc), or nothing known. Names are given
// unquoted, values resolved from the parameters or literals. 0.8.0 asks for the same things
// as statements.h in other forms, which the flags below say: LSNs returned as
// CONVERT(varchar(22), lsn, 1) ("0x" and 20 hex digits) rather than binary(10), commit times as
// CONVERT(varchar(23), time, 126).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/sql_type.h"
#include "sim_server/sql_value.h"
#include "sim_server/tsql/ast.h"

namespace mssql_cdc::sim_server {

// ---- what drivers send ----
// SET options, transaction statements, IF @@TRANCOUNT and BEGIN ... END around them: what
// drivers send to commit, roll back and keep savepoints (control_statements.h).
struct ControlStep {
  enum class Kind {
    kSetOption,             // SET of an option the simulator has no use for: nothing happens
    kImplicitTransactions,  // SET IMPLICIT_TRANSACTIONS ON|OFF
    kBeginTransaction,
    kCommit,
    kRollback,
    kSave,
    kIfTransactionCount,  // IF @@TRANCOUNT <compare> <count> <then> [ELSE <otherwise>]
    kBlock,               // BEGIN <then> END
  };
  Kind kind = Kind::kSetOption;
  std::string name;  // of the transaction or savepoint; may be empty but for kSave
  bool on = false;   // kImplicitTransactions
  std::string compare;  // "=", "<>", "!=", "<", "<=", ">", ">="
  std::int64_t count = 0;
  std::vector<ControlStep> then;
  std::vector<ControlStep> otherwise;
};
struct ControlStatements {
  std::vector<ControlStep> steps;
};
struct UseDatabase {
  std::string name;
};
struct SessionQuery {
  enum class Kind { kSpid, kSelectOne, kVersion, kDatabaseName, kServerName, kTransactionCount };
  Kind kind;
};
struct ServerPropertyQuery {
  std::string property;
};
struct DatatypeInfoQuery {};

// ---- statements.h, in its order ----
struct TimeZoneSupportQuery {};  // kHasTimeZoneId
struct TimeZoneIdQuery {};       // kTimeZoneId
struct MaxLsnQuery {
  bool lsn_text = false;
};
struct MinLsnQuery {
  SqlValue capture_instance;
  bool lsn_text = false;
};
struct NthCommitAfterQuery {
  SqlValue count;
  SqlValue after;
  bool lsn_text = false;
};
struct TimeToLsnQuery {  // kTimeToLsn
  SqlValue time;
  bool lsn_text = false;
  // 0.8.0 on a server in another zone than UTC: `time` is UTC, turned into the server's local
  // time as MIN(local(time), local(time2 + 1 hour) - 1 hour), the first reading of a repeated hour.
  std::optional<SqlValue> zone;
  SqlValue time2;
};
struct CommitTimeQuery {
  SqlValue lsn;
  bool at_or_before = false;  // kCommitTimeAtOrBefore; else kCommitTime
  bool iso_text = false;      // CONVERT(varchar(23), CAST(t AS datetime2(3)), 126)
  // The Windows zone 0.8.0's AT TIME ZONE conversion names: the answer is the commit time in
  // UTC, the repeated hour after a fall-back read in LSN order (UtcCommitTime, source/source_clock.h).
  std::optional<SqlValue> zone;
};
struct ListCaptureInstancesQuery {
  // Both NULL for every instance; else the instances of that source table.
  SqlValue source_schema;
  SqlValue source_name;
};
struct CapturedColumnsQuery {
  SqlValue capture_instance;
};
struct DdlHistoryQuery {
  SqlValue capture_instance;
};
struct SourceColumnsQuery {
  SqlValue object_name;  // "[schema].[table]"
};
struct UserNameQuery {};
struct SplitPointsQuery {
  std::string change_table;  // "<capture_instance>_CT" as written
  std::int64_t tiles = 0;
  SqlValue from;
  SqlValue to;
  bool lsn_text = false;
};
struct ChangeRowsQuery {
  std::string change_table;
  std::vector<std::string> columns;
  bool include_command_id = false;
  SqlValue from;
  SqlValue to;
  // 0.8.0's projection: _start_lsn and _seqval as text, _operation, _command_id, and
  // _commit_ts as CAST(tran_end_time AS datetime2(3)).
  bool reference_projection = false;
  // 0.8.0's CAST(DATEADD(minute, n, m.tran_end_time) AS datetime2(3)): a server on another zone
  // than UTC, whose offset is one over the range.
  std::int64_t commit_minutes_added = 0;
  // 0.8.0's per-row conversion on a server in `zone` whose offset changes in the range: AT TIME
  // ZONE, or the offset three hours later for a commit at or after one of `drops` (LSN, local
  // time: where the local time went back) less than three hours before it.
  struct ZonedCommitTimes {
    SqlValue zone;
    std::vector<std::pair<SqlValue, SqlValue>> drops;
  };
  std::optional<ZonedCommitTimes> zoned;
};
struct SnapshotColumnRef {
  std::string name;
  bool present = true;
  SqlType cast_type;  // the CAST(NULL AS type) of an absent column
};
// One condition of a piece of a key range: [column] op CAST(? AS type), or
// CONVERT(type, ?, 1) for a binary type, or [column] IS NULL; joined to the one before by
// AND or OR, inside the parentheses it opens and closes.
struct KeyCondition {
  std::string column;
  std::string op;  // "=", ">=", ">", "<", "IS NULL"
  SqlType cast_type;
  SqlValue value;
  bool literal = false;    // the value as written, no CAST: compared in the column's own type
  bool or_before = false;  // joined to the condition before by OR rather than AND
  int opens = 0;           // "(" before it
  int closes = 0;          // ")" after it
};
// The conditions of one UNION ALL branch, joined as they say (all to hold, when they say
// nothing more); none: every row.
using KeyPiece = std::vector<KeyCondition>;
struct SnapshotRowsQuery {
  std::string schema;
  std::string table;
  std::vector<SnapshotColumnRef> columns;
  std::vector<std::string> key_columns;  // ORDER BY; empty: none
  std::vector<KeyPiece> pieces;          // at least one
};
// A key column as the text that CASTs back to it: CAST([c] AS type) or CONVERT(type, [c], n);
// or, `raw`, the column itself.
struct KeyText {
  std::string column;
  SqlType type;
  bool raw = false;
};
struct KeyAtQuery {
  std::string schema;
  std::string table;
  std::vector<KeyText> select;
  std::vector<KeyPiece> pieces;
  std::vector<std::string> key_columns;  // ORDER BY
  SqlValue offset;
};
struct LastKeyQuery {
  std::string schema;
  std::string table;
  std::vector<KeyText> select;
  std::vector<std::string> key_columns;  // ORDER BY ... DESC
};
struct KeySlicesQuery {  // statements.h KeySlices
  std::string schema;
  std::string table;
  std::string column;
  bool day_number = false;  // the column is a date, counted as DATEDIFF(day, '19700101', it)
  SqlValue start;
  SqlValue width;
  SqlValue from;  // the same start, as the WHERE gives it
  SqlValue end;
};
struct SpaceUsedQuery {
  SqlValue object_name;  // "[schema].[table]"
};

// ---- beyond statements.h ----
struct LsnStepQuery {  // sys.fn_cdc_increment_lsn(?) / sys.fn_cdc_decrement_lsn(?)
  bool increment = true;
  SqlValue lsn;
  bool lsn_text = false;
};
struct AllChangesQuery {  // SELECT * FROM cdc.fn_cdc_get_all_changes_<ci>(?, ?, N'all')
  std::string capture_instance;
  SqlValue from;
  SqlValue to;
  SqlValue row_filter;
};

// ---- mssql-cdc-pyspark 0.8.0's, beyond what statements.h asks ----
// SELECT name, column_id, is_computed | name, collation_name FROM sys.columns WHERE object_id =
// OBJECT_ID(QUOTENAME(?) + '.' + QUOTENAME(?))
struct TableColumnsQuery {
  SqlValue schema;
  SqlValue table;
  bool collation = false;
};
// SELECT (SELECT MIN([k]) FROM t [WHERE [k] >= lo AND [k] < hi]) AS lo, (SELECT MAX ...) AS hi
struct KeyRangeQuery {
  std::string schema;
  std::string table;
  std::string column;
  bool bounded = false;
  SqlValue lo;
  SqlValue hi;
};
// The first key of each tile of NTILE(tiles) over the key but the first.
struct KeyTilesQuery {
  std::string schema;
  std::string table;
  std::vector<std::string> key_columns;
  std::int64_t tiles = 0;
};
// Rows and key sums per bucket [b * width, (b + 1) * width) of an integer or date key (a date
// as its day number); no column: one bucket 0 of every row.
struct KeyBucketsQuery {
  std::string schema;
  std::string table;
  std::string column;  // empty: no key
  bool day_number = false;
  std::int64_t width = 1;
  std::optional<SqlValue> lo;  // [k] >= lo, when given
  std::optional<SqlValue> hi;  // [k] < hi, when given
};
// sys.dm_exec_session_wait_stats for this session's ASYNC_NETWORK_IO.
struct NetworkWaitQuery {};
// 0.8.0's probe of a range of lsn_time_mapping on a server in `zone`: the zone's offset in
// minutes when the range's entries span under 7 days and the offset three hours before the
// first equals the offset three hours after the last; else NULL.
struct RangeOffsetQuery {
  SqlValue zone;
  SqlValue from, to;
};
// 0.8.0's list of the commits in a range on a server in `zone` whose local time went back more
// than a minute, into the hour repeated after a fall-back: (LSN text, local time in style 126)
// of each entry after the last one three hours before the range's first commit time, up to
// `upto`.
struct FallBackDropsQuery {
  SqlValue zone;
  SqlValue from, to, upto;
};

// The catalog procedures Microsoft's JDBC driver calls for DatabaseMetaData: sp_tables
// (getTables), sp_columns_100 (getColumns), sp_pkeys (getPrimaryKeys), sp_statistics_100
// (getIndexInfo). Arguments by their
// position in the procedure's signature, named ones put in their place; absent ones NULL.
struct CatalogProcedureCall {
  enum class Procedure { kTables, kColumns, kPrimaryKeys, kStatistics };
  Procedure procedure = Procedure::kTables;
  std::vector<SqlValue> arguments;
};

// DECLARE @name TABLE(...) and INSERT [INTO] @name EXEC <catalog procedure>: the table variable
// getColumns fills and reads in one batch (table_variables.h).
struct DeclareTableVariable {
  std::string name;
  std::vector<tds::ResultColumn> columns;
};
struct InsertExecute {
  std::string variable;
  CatalogProcedureCall call;
};

// A query of no known shape that the T-SQL front end reads (tsql/parser.h), answered through
// SQLite (tsql/translator.h).
struct FrontEndQuery {
  tsql::Query query;
};

// Matches no known shape: answered with 102 near `near`, or 208 when `object` (the first
// object after FROM, "schema.name" as written) does not exist.
struct UnknownStatement {
  std::string near;
  std::string object;
};

using RecognizedStatement =
    std::variant<ControlStatements, UseDatabase, SessionQuery, ServerPropertyQuery, DatatypeInfoQuery,
                 TimeZoneSupportQuery, TimeZoneIdQuery, MaxLsnQuery, MinLsnQuery,
                 NthCommitAfterQuery, TimeToLsnQuery, CommitTimeQuery, ListCaptureInstancesQuery,
                 CapturedColumnsQuery, DdlHistoryQuery, SourceColumnsQuery, UserNameQuery,
                 SplitPointsQuery, ChangeRowsQuery, SnapshotRowsQuery, KeyAtQuery,
                 LastKeyQuery, KeySlicesQuery, SpaceUsedQuery, LsnStepQuery,
                 AllChangesQuery, TableColumnsQuery, KeyRangeQuery, KeyTilesQuery, KeyBucketsQuery,
                 NetworkWaitQuery, RangeOffsetQuery, FallBackDropsQuery, CatalogProcedureCall, DeclareTableVariable, InsertExecute, FrontEndQuery,
                 UnknownStatement>;

}  // namespace mssql_cdc::sim_server
