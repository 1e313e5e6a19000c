// The statements of statements.h that answer Source's catalog, time-zone and LSN questions,
// each run on a given connection and read into the engine's types. Failures of the ODBC
// calls throw OdbcFailure, for the caller to classify and retry (odbc_source.cc); answers
// the server shapes wrongly (a missing column, an LSN that is not 10 bytes) throw
// SourceError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lsn.h"
#include "core/time.h"
#include "source/odbc/connection.h"
#include "source/source.h"

namespace mssql_cdc::odbc {

// sys.sp_cdc_help_change_data_capture, ordered as the sim backend orders them: by table,
// then by age.
std::vector<CaptureInstanceInfo> QueryCaptureInstances(OdbcConnection& connection);
// The same procedure for one table (@source_schema, @source_name).
std::vector<CaptureInstanceInfo> QueryTableInstances(OdbcConnection& connection,
                                                     const std::string& source_schema,
                                                     const std::string& source_table);
// sys.sp_cdc_get_captured_columns of the instance named exactly `capture_instance`, in
// ordinal order.
std::vector<CapturedColumn> QueryCapturedColumns(OdbcConnection& connection,
                                                 const std::string& capture_instance);
// sys.sp_cdc_get_ddl_history, in LSN order.
std::vector<DdlEvent> QueryDdlHistory(OdbcConnection& connection,
                                      const std::string& capture_instance);
// The names of the columns of `object` ("[schema].[table]") now; empty when it is gone.
std::vector<std::string> QueryTableColumns(OdbcConnection& connection, const std::string& object);
// CURRENT_TIMEZONE_ID(); nullopt when the server has no such function (before SQL Server
// 2022 and outside Azure SQL).
std::optional<std::string> QueryTimeZone(OdbcConnection& connection);
// Milliseconds SELECT 1 took, sent and fetched.
double TimeRoundTrip(OdbcConnection& connection);
// USER_NAME(): the database user a GRANT names.
std::optional<std::string> QueryUserName(OdbcConnection& connection);

// sys.fn_cdc_get_min_lsn(ci) (zero for an unknown instance), sys.fn_cdc_get_max_lsn()
// (nullopt when lsn_time_mapping is empty), and the n-th commit after `after` (nullopt when
// none follows).
Lsn QueryMinLsn(OdbcConnection& connection, const std::string& capture_instance);
std::optional<Lsn> QueryMaxLsn(OdbcConnection& connection);
std::optional<Lsn> QueryNthCommitAfter(OdbcConnection& connection, const Lsn& after, std::int64_t n);
// sys.fn_cdc_map_time_to_lsn('largest less than or equal', time); nullopt when none.
std::optional<Lsn> QueryTimeToLsn(OdbcConnection& connection, LocalMicros time);
// The one datetime `sql` (one binary(10) parameter, `lsn`) returns; nullopt when none.
std::optional<LocalMicros> QueryCommitTime(OdbcConnection& connection, std::string_view sql,
                                           const Lsn& lsn);
// The SplitPoints statement over [from, to] in `tiles` tiles.
std::vector<SplitPoint> QuerySplitPoints(OdbcConnection& connection,
                                         const std::string& capture_instance, const Lsn& from,
                                         const Lsn& to, int tiles);

}  // namespace mssql_cdc::odbc
