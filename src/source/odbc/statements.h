// Every T-SQL statement the odbc backend sends, in one place (reference-design 3.6, adapted:
// LSNs travel as binary(10) parameters and come back as binary(10); commit times come back as
// the server's datetime and are converted by the engine's SourceClock).
//
// The text is fixed except for names, which are validated and quoted here and nowhere else,
// and counts, which are integers. Values (LSNs, instance names) are always parameters (`?`).
// `mssql-cdc sim serve` recognises exactly these shapes; a test keeps the two in step.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/sql_type.h"

namespace mssql_cdc::odbc_sql {

// A capture instance name as sys.sp_cdc_enable_table accepts it: 1 to 100 characters, no
// brackets, quotes or control characters. Throws ConfigError saying which rule it breaks.
void CheckCaptureInstanceName(std::string_view name);
// [name], for a schema, table or column name read from the server's catalog: 1 to 128
// characters without control characters; a `]` is doubled. Throws ConfigError otherwise.
std::string QuoteName(std::string_view name);

// `sql` with its `?` markers numbered as sp_executesql names parameters (@P1, @P2, ...), for
// the engine's TDS reader; a `?` inside a [name] or a 'string' is left alone.
std::string NamedParameters(std::string_view sql);

// 1. Time zone: whether CURRENT_TIMEZONE_ID() exists (SQL Server 2022+, Azure SQL), then it.
inline constexpr std::string_view kHasTimeZoneId =
    "SELECT CASE WHEN CAST(SERVERPROPERTY('ProductMajorVersion') AS int) >= 16 OR "
    "CAST(SERVERPROPERTY('EngineEdition') AS int) IN (5, 8) THEN 1 ELSE 0 END";
inline constexpr std::string_view kTimeZoneId = "SELECT CURRENT_TIMEZONE_ID()";

// 2. LSN bounds. Min LSN: ? = capture instance (nvarchar).
inline constexpr std::string_view kMaxLsn = "SELECT sys.fn_cdc_get_max_lsn()";
inline constexpr std::string_view kMinLsn = "SELECT sys.fn_cdc_get_min_lsn(?)";

// 3. cdc.lsn_time_mapping. Nth commit: ? = n (bigint), after (binary(10)).
inline constexpr std::string_view kNthCommitAfter =
    "SELECT MAX(start_lsn) FROM (SELECT TOP (?) start_lsn FROM cdc.lsn_time_mapping "
    "WHERE start_lsn > ? ORDER BY start_lsn) t";
inline constexpr std::string_view kCommitTime =
    "SELECT tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn = ?";
// sys.fn_cdc_map_time_to_lsn: ? = the time as ISO 8601 text ("YYYY-MM-DDTHH:MM:SS.mmm"), which
// converts to datetime whatever the session's DATEFORMAT.
inline constexpr std::string_view kTimeToLsn =
    "SELECT sys.fn_cdc_map_time_to_lsn('largest less than or equal', ?)";
inline constexpr std::string_view kCommitTimeAtOrBefore =
    "SELECT TOP (1) tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn <= ? "
    "ORDER BY start_lsn DESC";

// 4. Catalog procedures. ? = capture instance (nvarchar).
inline constexpr std::string_view kListCaptureInstances =
    "EXEC sys.sp_cdc_help_change_data_capture";
// The instances of one table: ? = source schema, ? = source table (nvarchar).
inline constexpr std::string_view kListTableInstances =
    "EXEC sys.sp_cdc_help_change_data_capture @source_schema = ?, @source_name = ?";
inline constexpr std::string_view kCapturedColumns =
    "EXEC sys.sp_cdc_get_captured_columns @capture_instance = ?";
inline constexpr std::string_view kDdlHistory =
    "EXEC sys.sp_cdc_get_ddl_history @capture_instance = ?";
// The columns of a source table: ? = "[schema].[table]".
inline constexpr std::string_view kSourceColumns =
    "SELECT name FROM sys.columns WHERE object_id = OBJECT_ID(?)";
// The round trip the facts' source_rtt_ms times.
inline constexpr std::string_view kSelectOne = "SELECT 1";
// The database user, for the GRANT a permission error names.
inline constexpr std::string_view kUserName = "SELECT USER_NAME()";

// 5. Split points: NTILE(n) tiles of the change rows of [?, ?] (binary(10) each), per tile
// its last commit LSN, the LSN after it and its row count.
std::string SplitPoints(std::string_view capture_instance, int tiles);

// 6. Change rows of [?, ?] joined to their commit times: __$start_lsn, __$seqval,
// __$operation, [__$command_id,] tran_end_time, then `columns` in the given order.
std::string ChangeRows(std::string_view capture_instance,
                       const std::vector<std::string>& columns, bool include_command_id);

// 7. Current rows of a source table in key order. A column with present == false is gone
// from the table and reads as a typed NULL. Isolation snapshot and a lock timeout prefix the
// SELECT with SET statements (lock timeout first); lock_timeout_ms < 0 means none.
struct SnapshotColumn {
  std::string name;
  SqlType type;
  bool present = true;
};
std::string SnapshotRows(std::string_view schema, std::string_view table,
                         const std::vector<SnapshotColumn>& columns,
                         const std::vector<std::string>& key_columns, bool snapshot_isolation,
                         long long lock_timeout_ms);

// 8. Key ranges of a source table, for reading a snapshot in ranges (docs/snapshots.md).
// A range lo <= key < hi over a key of n columns is cut into pieces, each an equality on a
// prefix of the key and a range on the next column, so that each is one index seek; the
// pieces are joined with UNION ALL. Bound parts travel as nvarchar parameters CAST to the key
// column's type on the server (CONVERT style 1 for binary types): the comparison keeps the
// column's type and collation, and the seek its index.
struct KeyColumn {
  std::string name;
  SqlType type;
};
// Which part of which bound each `?` of a range statement takes, in order.
struct BoundParameter {
  enum class Bound { kLo, kHi };
  Bound bound = Bound::kLo;
  std::size_t part = 0;
};
struct RangeStatement {
  std::string sql;
  std::vector<BoundParameter> parameters;
};
// The snapshot rows of lo <= key < hi (has_lo/has_hi false: an open end), as SnapshotRows
// reads them; in key order when the statement is one piece (no bounds, or a one-column key),
// else in no promised order.
RangeStatement SnapshotRangeRows(std::string_view schema, std::string_view table,
                                 const std::vector<SnapshotColumn>& columns,
                                 const std::vector<KeyColumn>& key, bool has_lo, bool has_hi,
                                 bool snapshot_isolation, long long lock_timeout_ms);
// The key `offset` rows past `from` (inclusive; has_from false: the first key): the bound
// parameters of `from` (as kLo), then the offset (bigint). One row of the key's text, or none.
RangeStatement KeyAt(std::string_view schema, std::string_view table,
                     const std::vector<KeyColumn>& key, bool has_from, bool snapshot_isolation,
                     long long lock_timeout_ms);
// The largest key, as text: one row, or none for an empty table.
std::string LastKey(std::string_view schema, std::string_view table,
                    const std::vector<KeyColumn>& key, bool snapshot_isolation,
                    long long lock_timeout_ms);
// Rows per slice of a grid over a one-column integer key, or a date key as day numbers since
// 1970-01-01 (Source::CountKeySlices): ? = start,
// width, start, end (bigint each). One row per slice holding rows: [slice], [rows], [key_sum]
// (decimal(38,0)).
std::string KeySlices(std::string_view schema, std::string_view table, const KeyColumn& key,
                      bool snapshot_isolation, long long lock_timeout_ms);
// The table's row count from its metadata: ? = "[schema].[table]"; the count is the `rows`
// column (text).
inline constexpr std::string_view kSpaceUsed = "EXEC sys.sp_spaceused @objname = ?";

}  // namespace mssql_cdc::odbc_sql
