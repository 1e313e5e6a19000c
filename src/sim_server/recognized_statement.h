// What a statement sent to `mssql-cdc sim serve` was recognised as: one of the statements of
// the odbc backend (source/odbc/statements.h), a query drivers send on their own, or nothing
// known. Names are given unquoted, values resolved from the parameters or literals.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/sql_type.h"
#include "sim_server/sql_value.h"

namespace mssql_cdc::sim_server {

// ---- what drivers send ----
struct SetOption {};  // SET ...: answered with nothing
struct UseDatabase {
  std::string name;
};
struct SessionQuery {
  enum class Kind { kSpid, kSelectOne, kVersion, kDatabaseName, kServerName };
  Kind kind;
};
struct ServerPropertyQuery {
  std::string property;
};
struct DatatypeInfoQuery {};

// ---- statements.h, in its order ----
struct TimeZoneSupportQuery {};  // kHasTimeZoneId
struct TimeZoneIdQuery {};       // kTimeZoneId
struct MaxLsnQuery {};
struct MinLsnQuery {
  SqlValue capture_instance;
};
struct NthCommitAfterQuery {
  SqlValue count;
  SqlValue after;
};
struct TimeToLsnQuery {  // kTimeToLsn
  SqlValue time;
};
struct CommitTimeQuery {
  SqlValue lsn;
  bool at_or_before = false;  // kCommitTimeAtOrBefore; else kCommitTime
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
};
struct ChangeRowsQuery {
  std::string change_table;
  std::vector<std::string> columns;
  bool include_command_id = false;
  SqlValue from;
  SqlValue to;
};
struct SnapshotColumnRef {
  std::string name;
  bool present = true;
  SqlType cast_type;  // the CAST(NULL AS type) of an absent column
};
// One condition of a piece of a key range: [column] op CAST(? AS type), or
// CONVERT(type, ?, 1) for a binary type.
struct KeyCondition {
  std::string column;
  std::string op;  // "=", ">=", ">", "<"
  SqlType cast_type;
  SqlValue value;
};
// The conditions of one UNION ALL branch, all to hold; none: every row.
using KeyPiece = std::vector<KeyCondition>;
struct SnapshotRowsQuery {
  std::string schema;
  std::string table;
  std::vector<SnapshotColumnRef> columns;
  std::vector<std::string> key_columns;  // ORDER BY; empty: none
  std::vector<KeyPiece> pieces;          // at least one
};
// A key column as the text that CASTs back to it: CAST([c] AS type) or CONVERT(type, [c], n).
struct KeyText {
  std::string column;
  SqlType type;
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
};
struct AllChangesQuery {  // SELECT * FROM cdc.fn_cdc_get_all_changes_<ci>(?, ?, N'all')
  std::string capture_instance;
  SqlValue from;
  SqlValue to;
  SqlValue row_filter;
};

// Matches no known shape: answered with 102 near `near`, or 208 when `object` (the first
// object after FROM, "schema.name" as written) does not exist.
struct UnknownStatement {
  std::string near;
  std::string object;
};

using RecognizedStatement =
    std::variant<SetOption, UseDatabase, SessionQuery, ServerPropertyQuery, DatatypeInfoQuery,
                 TimeZoneSupportQuery, TimeZoneIdQuery, MaxLsnQuery, MinLsnQuery,
                 NthCommitAfterQuery, TimeToLsnQuery, CommitTimeQuery, ListCaptureInstancesQuery,
                 CapturedColumnsQuery, DdlHistoryQuery, SourceColumnsQuery, UserNameQuery,
                 SplitPointsQuery, ChangeRowsQuery, SnapshotRowsQuery, KeyAtQuery,
                 LastKeyQuery, KeySlicesQuery, SpaceUsedQuery, LsnStepQuery,
                 AllChangesQuery, UnknownStatement>;

}  // namespace mssql_cdc::sim_server
