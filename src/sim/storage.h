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
//   sim_logins                           logins, passwords and grants of the TDS front end
// Data tables:
//   "<schema>.<table>"                   current rows of a source table, one column per live
//                                        column, its primary key as the SQLite primary key
//   "cdc.<capture_instance>_CT"          a change table: __$start_lsn, __$end_lsn, __$seqval,
//                                        __$operation, __$update_mask, the captured columns in
//                                        column_ordinal order, __$command_id; indexed on
//                                        (__$start_lsn, __$command_id, __$seqval, __$operation)
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
// LSNs, seqvals, tran ids and update masks are BLOBs of their SQL Server byte lengths (10 for
// LSNs and seqvals). Commit times (tran_begin_time, tran_end_time) are TEXT
// "YYYY-MM-DD HH:MM:SS.fff" in the server's local clock (SQL Server's datetime), the zone
// being sim_meta 'time_zone' (a Windows time-zone name).
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

// Quotes an identifier for SQLite ("a""b").
std::string QuoteIdent(std::string_view name);
// Storage names of data tables.
std::string SourceTableStorageName(std::string_view schema, std::string_view table);
std::string ChangeTableStorageName(std::string_view capture_instance);

}  // namespace mssql_cdc::sim
