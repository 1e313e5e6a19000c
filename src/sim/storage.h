// The on-disk layout of a simulated SQL Server CDC database: one SQLite file.
//
// The simulator (SimDatabase) writes it and the sim backend of Source reads it; both take the
// table names and the value encodings from here, so the two stay one format.
//
// Catalog tables (names stand for the SQL Server objects they simulate):
//   sim_meta(key, value)                 format marker and settings, see kMeta* below
//   sim_tables                           source tables (sys.tables)
//   sim_columns                          their columns with SQL Server types (sys.columns)
//   cdc_change_tables                    capture instances (cdc.change_tables)
//   cdc_captured_columns                 captured columns per instance (cdc.captured_columns)
//   cdc_index_columns                    key columns per instance (cdc.index_columns)
//   cdc_lsn_time_mapping                 commits and idle entries (cdc.lsn_time_mapping)
//   cdc_ddl_history                      DDL on tracked tables (cdc.ddl_history)
//   sim_logins                           logins and passwords of the TDS front end
//   sim_grants                           SELECT grants of those logins
// Data tables:
//   "<schema>.<table>"                   current rows of a source table, one column per live
//                                        column, its primary key as the SQLite primary key
//   "cdc.<capture_instance>_CT"          a change table: __$start_lsn, __$end_lsn, __$seqval,
//                                        __$operation, __$update_mask, the captured columns in
//                                        column_ordinal order, __$command_id; clustered on
//                                        (__$start_lsn, __$command_id, __$seqval, __$operation)
//                                        (a WITHOUT ROWID table with that primary key) when its
//                                        rows are narrow; otherwise, and in files made before,
//                                        a rowid table with an index on those columns
//   "cdc.<capture_instance>_CT_wire"     the same change rows as the TDS front end sends
//                                        them, when sim_meta 'wire_rows' is '1'
//                                        (sim/wire_rows.h)
//
// Value encodings in data tables (SQLite storage class per SQL Server type):
//   bit, tinyint, smallint, int, bigint             INTEGER
//   real, float                                      REAL
//   decimal, numeric, money, smallmoney              TEXT, plain decimal with exactly `scale`
//                                                    fraction digits ("-12.3400"); no exponent
//   date                                             TEXT "YYYY-MM-DD"
//   time(n)                                          TEXT "HH:MM:SS.fffffff" (7 digits)
//   datetime, smalldatetime, datetime2(n)            TEXT "YYYY-MM-DD HH:MM:SS.fffffff"
//   datetimeoffset(n)                                TEXT "YYYY-MM-DD HH:MM:SS.fffffff +HH:MM"
//                                                    (local time and its offset, as SQL Server
//                                                    prints it)
//   char, varchar, nchar, nvarchar, text, ntext, xml TEXT (UTF-8)
//   uniqueidentifier                                 TEXT, uppercase 8-4-4-4-12
//   binary, varbinary, image, timestamp/rowversion   BLOB
//   NULL                                             NULL
//
// Catalog columns (the DDL is kCatalogSchema below; names follow the SQL Server objects):
//   sim_tables(object_id, schema_name, table_name, create_date, next_column_id)
//       next_column_id: the column_id the next ADD COLUMN gets (ids are never reused).
//   sim_columns(object_id, column_id, name, type, is_nullable, is_computed, key_ordinal)
//       live columns only (a dropped column's row is deleted); type is SqlType::ToString();
//       key_ordinal is 1.. in primary-key order, 0 for a non-key column.
//   cdc_change_tables(object_id, capture_instance, source_object_id, source_schema,
//       source_table, start_lsn, end_lsn, supports_net_changes, has_drop_pending, role_name,
//       index_name, filegroup_name, create_date, partition_switch)
//       object_id identifies the instance; start_lsn is its min LSN (fn_cdc_get_min_lsn),
//       raised by cleanup; end_lsn is always NULL.
//   cdc_captured_columns(object_id, column_name, column_id, column_type, column_ordinal,
//       is_computed)
//       object_id is the instance's; column_id is the source column's sim_columns.column_id
//       (a column dropped from the source keeps its row here); column_ordinal is the bit of
//       __$update_mask and the position among the change table's captured columns.
//   cdc_index_columns(object_id, column_name, index_ordinal, column_id)
//   cdc_lsn_time_mapping(start_lsn, tran_begin_time, tran_end_time, tran_id)
//       one row per commit that touched a tracked table or CDC metadata (enable, DDL), plus
//       idle entries whose tran_id is ten zero bytes; start_lsn is the primary key.
//   cdc_ddl_history(source_object_id, object_id, required_column_update, ddl_command,
//       ddl_lsn, ddl_time)   one row per DDL per capture instance of the table.
//   sim_logins(login_name, password, is_db_owner)   for the TDS front end (issue 5).
//       A db owner reads everything; another login reads the catalog functions and
//       procedures, and a change or source table only with a grant.
//   sim_grants(login_name, object_name)   SELECT on one object for one login; object_name is
//       "cdc.<capture_instance>_CT" or "<schema>.<table>" as the catalog spells them; both
//       compare ignoring case. Files made before this table existed lack it until the first
//       grant creates it (kGrantsSchema); a reader takes a missing table as no grants.
//   sim_login_tokens(token_sha256, login_name)   the access tokens a token login (an Entra ID
//       login's stand-in, with an empty password in sim_logins) is known by, as SHA-256
//       digests; created on the first token login like sim_grants (kLoginTokensSchema).
//
// Change table columns carry SQLite affinities matching the encodings below (INTEGER, REAL,
// TEXT, BLOB), so SQLite never converts a stored value. __$update_mask is big-endian like
// SQL Server's: column_ordinal 1 is the lowest bit of the LAST byte; its length is
// ceil(max column_ordinal / 8) bytes. __$seqval orders the changes of one transaction, the
// before (3) and after (4) image of an update share it and their __$command_id;
// __$command_id counts 1..n per transaction and capture instance. A change table that is not
// clustered has its index named "cdc.<capture_instance>_CT_order".
//
// LSNs, seqvals, tran ids and update masks are BLOBs of their SQL Server byte lengths (10 for
// LSNs and seqvals). Commit times (tran_begin_time, tran_end_time) are TEXT
// "YYYY-MM-DD HH:MM:SS.fff" in the server's local clock (SQL Server's datetime), the zone
// being sim_meta 'time_zone' (a Windows time-zone name), rounded to 1/300 s as SQL Server's
// datetime is (so milliseconds end in 0, 3 or 7). create_date and ddl_time use the same form.
// tran_id is 10 bytes, never all zero for a real transaction.
#pragma once

#include <string>
#include <string_view>

namespace mssql_cdc::sim {

inline constexpr std::string_view kFormatName = "mssql-cdc-sim";
inline constexpr int kFormatVersion = 1;

// sim_meta keys.
inline constexpr std::string_view kMetaFormat = "format";                  // kFormatName
inline constexpr std::string_view kMetaFormatVersion = "format_version";   // kFormatVersion
inline constexpr std::string_view kMetaDatabaseName = "database_name";
inline constexpr std::string_view kMetaTimeZone = "time_zone";             // Windows zone name
inline constexpr std::string_view kMetaProductMajorVersion = "product_major_version";  // "16"
inline constexpr std::string_view kMetaLastLsn = "last_lsn";  // hex LSN last handed out
inline constexpr std::string_view kMetaLastTranId = "last_tran_id";  // integer, last tran_id
inline constexpr std::string_view kMetaNextObjectId = "next_object_id";  // integer
// "1" when the file keeps a wire table per change table (sim/wire_rows.h); absent in files
// made before those existed.
inline constexpr std::string_view kMetaWireRows = "wire_rows";
// The last rowversion handed out (integer); a timestamp/rowversion column stores the next
// one, as 8 big-endian bytes, on every insert and update of its row.
inline constexpr std::string_view kMetaLastRowversion = "last_rowversion";
// Seconds between the capture process's idle entries on a quiet database (a decimal number);
// absent in files made before it was kept, which use kDefaultIdleEntrySeconds.
inline constexpr std::string_view kMetaIdleEntrySeconds = "idle_entry_seconds";
// "real" (the machine's clock) or "manual" (kMetaManualClock, set and advanced explicitly).
inline constexpr std::string_view kMetaClockMode = "clock_mode";
// "pending_enable:<object_id>" = hex LSN: a capture instance enabled beside another one of its
// table whose enable the capture process has not reached yet; its start_lsn stays zero until
// then (Catalog::ProcessPendingEnables).
inline constexpr std::string_view kMetaPendingEnablePrefix = "pending_enable:";
// The manual clock's UTC instant, "YYYY-MM-DD HH:MM:SS.ffffff".
inline constexpr std::string_view kMetaManualClock = "manual_clock_utc";

// Creates every catalog table (not the sim_meta rows). Data tables are created per table.
inline constexpr std::string_view kCatalogSchema = R"sql(
CREATE TABLE sim_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sim_tables(
  object_id INTEGER PRIMARY KEY, schema_name TEXT NOT NULL, table_name TEXT NOT NULL,
  create_date TEXT NOT NULL, next_column_id INTEGER NOT NULL,
  UNIQUE(schema_name COLLATE NOCASE, table_name COLLATE NOCASE));
CREATE TABLE sim_columns(
  object_id INTEGER NOT NULL, column_id INTEGER NOT NULL, name TEXT NOT NULL,
  type TEXT NOT NULL, is_nullable INTEGER NOT NULL, is_computed INTEGER NOT NULL DEFAULT 0,
  key_ordinal INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(object_id, column_id), UNIQUE(object_id, name COLLATE NOCASE));
CREATE TABLE cdc_change_tables(
  object_id INTEGER PRIMARY KEY, capture_instance TEXT NOT NULL UNIQUE COLLATE NOCASE,
  source_object_id INTEGER NOT NULL, source_schema TEXT NOT NULL, source_table TEXT NOT NULL,
  start_lsn BLOB NOT NULL, end_lsn BLOB, supports_net_changes INTEGER NOT NULL,
  has_drop_pending INTEGER, role_name TEXT, index_name TEXT, filegroup_name TEXT,
  create_date TEXT NOT NULL, partition_switch INTEGER NOT NULL DEFAULT 0);
CREATE TABLE cdc_captured_columns(
  object_id INTEGER NOT NULL, column_name TEXT NOT NULL, column_id INTEGER NOT NULL,
  column_type TEXT NOT NULL, column_ordinal INTEGER NOT NULL,
  is_computed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(object_id, column_ordinal));
CREATE TABLE cdc_index_columns(
  object_id INTEGER NOT NULL, column_name TEXT NOT NULL, index_ordinal INTEGER NOT NULL,
  column_id INTEGER NOT NULL, PRIMARY KEY(object_id, index_ordinal));
CREATE TABLE cdc_lsn_time_mapping(
  start_lsn BLOB PRIMARY KEY, tran_begin_time TEXT NOT NULL, tran_end_time TEXT NOT NULL,
  tran_id BLOB NOT NULL);
CREATE TABLE cdc_ddl_history(
  source_object_id INTEGER NOT NULL, object_id INTEGER NOT NULL,
  required_column_update INTEGER NOT NULL, ddl_command TEXT NOT NULL, ddl_lsn BLOB NOT NULL,
  ddl_time TEXT NOT NULL);
CREATE TABLE sim_logins(
  login_name TEXT PRIMARY KEY COLLATE NOCASE, password TEXT NOT NULL,
  is_db_owner INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS sim_grants(
  login_name TEXT NOT NULL COLLATE NOCASE, object_name TEXT NOT NULL COLLATE NOCASE,
  PRIMARY KEY(login_name, object_name));
CREATE TABLE IF NOT EXISTS sim_login_tokens(
  token_sha256 TEXT PRIMARY KEY, login_name TEXT NOT NULL COLLATE NOCASE);
)sql";

// The sim_login_tokens statement of kCatalogSchema, for files made before it existed.
inline constexpr std::string_view kLoginTokensSchema = R"sql(CREATE TABLE IF NOT EXISTS sim_login_tokens(
  token_sha256 TEXT PRIMARY KEY, login_name TEXT NOT NULL COLLATE NOCASE);
)sql";

// The sim_grants statement of kCatalogSchema, run on its own before the first grant of a file
// made without it. A test keeps the two equal.
inline constexpr std::string_view kGrantsSchema = R"sql(CREATE TABLE IF NOT EXISTS sim_grants(
  login_name TEXT NOT NULL COLLATE NOCASE, object_name TEXT NOT NULL COLLATE NOCASE,
  PRIMARY KEY(login_name, object_name));
)sql";

// Quotes an identifier for SQLite ("a""b").
std::string QuoteIdent(std::string_view name);
// Storage names of data tables.
std::string SourceTableStorageName(std::string_view schema, std::string_view table);
std::string ChangeTableStorageName(std::string_view capture_instance);
// "cdc.<capture_instance>_CT_order".
std::string ChangeTableIndexName(std::string_view capture_instance);

}  // namespace mssql_cdc::sim
