// What drivers send on their own, USER_NAME() and the server's time zone.
#include <fmt/format.h>

#include "sim/storage.h"
#include "sim_server/answers.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/sql_tokens.h"

namespace mssql_cdc::sim_server {
namespace {

std::string ProductMajorVersion(Session& session) {
  return session.catalog().GetMeta(sim::kMetaProductMajorVersion).value_or("16");
}

std::string ProductVersion(Session& session) {
  return ProductMajorVersion(session) + ".0.1000.6";
}

// One row of one unnamed text column.
void TextScalar(tds::ReplyWriter& reply, const SqlType& type, std::string_view value) {
  tds::ResultSet& rows = reply.BeginResult({Column("", type)});
  rows.Text(value);
  rows.EndRow();
}

void IntScalar(tds::ReplyWriter& reply, const SqlType& type, std::int64_t value) {
  tds::ResultSet& rows = reply.BeginResult({Column("", type)});
  rows.Int(value);
  rows.EndRow();
}

}  // namespace

namespace {

bool Holds(const ControlStep& step, int count) {
  const std::string& c = step.compare;
  if (c == "=") return count == step.count;
  if (c == "<>" || c == "!=") return count != step.count;
  if (c == "<") return count < step.count;
  if (c == "<=") return count <= step.count;
  if (c == ">") return count > step.count;
  return count >= step.count;
}

void Run(SessionTransactions& transactions, const std::vector<ControlStep>& steps) {
  using Kind = ControlStep::Kind;
  for (const ControlStep& step : steps) {
    switch (step.kind) {
      case Kind::kSetOption:
        // Lock timeouts, isolation levels and the like have no meaning over a WAL snapshot.
        break;
      case Kind::kImplicitTransactions:
        transactions.SetImplicit(step.on);
        break;
      case Kind::kBeginTransaction:
        transactions.Begin(step.name);
        break;
      case Kind::kCommit:
        transactions.Commit();
        break;
      case Kind::kRollback:
        transactions.Rollback(step.name);
        break;
      case Kind::kSave:
        transactions.Save(step.name);
        break;
      case Kind::kIfTransactionCount:
        Run(transactions, Holds(step, transactions.count()) ? step.then : step.otherwise);
        break;
      case Kind::kBlock:
        Run(transactions, step.then);
        break;
    }
  }
}

}  // namespace

void Answer(Session& session, const ControlStatements& query, tds::ReplyWriter&) {
  Run(session.transactions(), query.steps);
}

void Answer(Session& session, const UseDatabase& query, tds::ReplyWriter& reply) {
  if (!EqualsIgnoringCase(query.name, session.database_name())) {
    throw SqlError(errors::DatabaseDoesNotExist(query.name));
  }
  reply.Info(5701, fmt::format("Changed database context to '{}'.", session.database_name()));
}

void Answer(Session& session, const SessionQuery& query, tds::ReplyWriter& reply) {
  switch (query.kind) {
    case SessionQuery::Kind::kSpid:
      return IntScalar(reply, types::Smallint(), session.spid());
    case SessionQuery::Kind::kSelectOne:
      return IntScalar(reply, types::Int(), 1);
    case SessionQuery::Kind::kVersion:
      return TextScalar(reply, types::Nvarchar(300),
                        fmt::format("Microsoft SQL Server (mssql-cdc simulator) - {} (X64)",
                                    ProductVersion(session)));
    case SessionQuery::Kind::kDatabaseName:
      return TextScalar(reply, types::Sysname(), session.database_name());
    case SessionQuery::Kind::kServerName:
      return TextScalar(reply, types::Sysname(), kSimServerName);
    case SessionQuery::Kind::kTransactionCount:
      return IntScalar(reply, types::Int(), session.transactions().count());
  }
}

void Answer(Session& session, const ServerPropertyQuery& query, tds::ReplyWriter& reply) {
  const std::string& p = query.property;
  auto is = [&](std::string_view name) { return EqualsIgnoringCase(p, name); };
  if (is("EngineEdition")) return IntScalar(reply, types::Int(), 3);
  if (is("IsIntegratedSecurityOnly")) return IntScalar(reply, types::Int(), 0);
  std::optional<std::string> value;
  if (is("ProductVersion")) value = ProductVersion(session);
  if (is("ProductMajorVersion")) value = ProductMajorVersion(session);
  if (is("ProductMinorVersion")) value = "0";
  if (is("ProductLevel")) value = "RTM";
  if (is("Edition")) value = "Developer Edition (64-bit)";
  if (is("ServerName") || is("MachineName")) value = std::string(kSimServerName);
  if (is("Collation")) value = "SQL_Latin1_General_CP1_CI_AS";
  // Unknown properties are NULL, as SERVERPROPERTY answers them.
  tds::ResultSet& rows = reply.BeginResult({Column("", types::Nvarchar(128))});
  if (value) {
    rows.Text(*value);
  } else {
    rows.Null();
  }
  rows.EndRow();
}

void Answer(Session&, const DatatypeInfoQuery&, tds::ReplyWriter& reply) {
  // The columns of sp_datatype_info_100 without rows: drivers ask for them, and ask again
  // per type when they need one.
  const SqlType varchar32 = SqlType::Parse("varchar(32)");
  reply.BeginResult({Column("TYPE_NAME", types::Sysname(), false),
                     Column("DATA_TYPE", types::Smallint(), false),
                     Column("PRECISION", types::Int()),
                     Column("LITERAL_PREFIX", varchar32),
                     Column("LITERAL_SUFFIX", varchar32),
                     Column("CREATE_PARAMS", varchar32),
                     Column("NULLABLE", types::Smallint(), false),
                     Column("CASE_SENSITIVE", types::Smallint(), false),
                     Column("SEARCHABLE", types::Smallint(), false),
                     Column("UNSIGNED_ATTRIBUTE", types::Smallint()),
                     Column("MONEY", types::Smallint(), false),
                     Column("AUTO_INCREMENT", types::Smallint()),
                     Column("LOCAL_TYPE_NAME", types::Sysname()),
                     Column("MINIMUM_SCALE", types::Smallint()),
                     Column("MAXIMUM_SCALE", types::Smallint()),
                     Column("SQL_DATA_TYPE", types::Smallint(), false),
                     Column("SQL_DATETIME_SUB", types::Smallint()),
                     Column("NUM_PREC_RADIX", types::Int()),
                     Column("INTERVAL_PRECISION", types::Smallint()),
                     Column("USERTYPE", types::Smallint())});
}

void Answer(Session& session, const TimeZoneSupportQuery&, tds::ReplyWriter& reply) {
  // CURRENT_TIMEZONE_ID() exists from SQL Server 2022 (major version 16) on.
  int major = 0;
  try {
    major = std::stoi(ProductMajorVersion(session));
  } catch (const std::exception&) {
  }
  IntScalar(reply, types::Int(), major >= 16 ? 1 : 0);
}

void Answer(Session& session, const TimeZoneIdQuery&, tds::ReplyWriter& reply) {
  TextScalar(reply, types::Nvarchar(256), session.source().ServerTimeZone());
}

void Answer(Session& session, const UserNameQuery&, tds::ReplyWriter& reply) {
  TextScalar(reply, types::Sysname(), session.login().name);
}

void Answer(Session&, const NetworkWaitQuery&, tds::ReplyWriter& reply) {
  // The session has not waited on its client: no ASYNC_NETWORK_IO row.
  reply.BeginResult({Column("wait_time_ms", types::Bigint(), false)});
}

}  // namespace mssql_cdc::sim_server
