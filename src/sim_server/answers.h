// The answer to each recognised statement, one overload per statement, in families:
//   answer_session.cc   what drivers send on their own (SET, transactions, session values),
//                       USER_NAME(), the server's time zone
//   answer_lsn.cc       LSN bounds, lsn_time_mapping lookups, split points
//   answer_catalog.cc   the CDC catalog procedures and sys.columns
//   answer_changes.cc   change rows (the odbc backend's join, cdc.fn_cdc_get_all_changes_*)
//   answer_snapshot.cc  current rows of a source table, in key ranges; keyset seeks, row counts
//   answer_key_stats.cc a key's extent, NTILE tiles and bucket counts (mssql-cdc-pyspark 0.8.0)
//   answer_catalog_procedures.cc  sp_tables, sp_columns_100, sp_pkeys, sp_statistics_100 (JDBC
//                       metadata), and the table variable getColumns fills with sp_columns_100
//   answer_query.cc     queries of no known shape, through the T-SQL front end (tsql/)
//   answer_unknown.cc   statements of no known shape the front end does not read either
// Each runs inside the read snapshot its caller opened on the session's connection and
// answers through `reply`: result sets, an INFO message, or a SqlError thrown with SQL
// Server's error.
#pragma once

#include "sim_server/recognized_statement.h"
#include "sim_server/session.h"
#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

void Answer(Session& session, const ControlStatements& query, tds::ReplyWriter& reply);
void Answer(Session& session, const UseDatabase& query, tds::ReplyWriter& reply);
void Answer(Session& session, const SessionQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const ServerPropertyQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const DatatypeInfoQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const TimeZoneSupportQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const TimeZoneIdQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const UserNameQuery& query, tds::ReplyWriter& reply);

void Answer(Session& session, const MaxLsnQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const MinLsnQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const LsnStepQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const NthCommitAfterQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const TimeToLsnQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const CommitTimeQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const SplitPointsQuery& query, tds::ReplyWriter& reply);

void Answer(Session& session, const ListCaptureInstancesQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const CapturedColumnsQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const DdlHistoryQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const SourceColumnsQuery& query, tds::ReplyWriter& reply);

void Answer(Session& session, const ChangeRowsQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const AllChangesQuery& query, tds::ReplyWriter& reply);

void Answer(Session& session, const SnapshotRowsQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const KeyAtQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const LastKeyQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const KeySlicesQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const SpaceUsedQuery& query, tds::ReplyWriter& reply);

void Answer(Session& session, const TableColumnsQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const KeyRangeQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const KeyTilesQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const KeyBucketsQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const NetworkWaitQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const RangeOffsetQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const FallBackDropsQuery& query, tds::ReplyWriter& reply);

void Answer(Session& session, const CatalogProcedureCall& query, tds::ReplyWriter& reply);
void Answer(Session& session, const DeclareTableVariable& query, tds::ReplyWriter& reply);
void Answer(Session& session, const InsertExecute& query, tds::ReplyWriter& reply);
void Answer(Session& session, const FrontEndQuery& query, tds::ReplyWriter& reply);
void Answer(Session& session, const UnknownStatement& query, tds::ReplyWriter& reply);

}  // namespace mssql_cdc::sim_server
