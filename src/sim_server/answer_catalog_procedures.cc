// The catalog procedures Microsoft's JDBC driver calls for DatabaseMetaData: sp_tables,
// sp_pkeys and sp_statistics_100, over the simulated database's source tables. The driver
// renames their columns by position, so the columns come in the documented order. A table's
// primary key is its clustered index, named PK_<table> as the simulator names it in
// cdc.change_tables.index_name.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/ascii.h"
#include "sim/storage.h"
#include "sim_server/answers.h"
#include "sim_server/like_pattern.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/statement_cache.h"

namespace mssql_cdc::sim_server {
namespace {

std::optional<std::string> Argument(const CatalogProcedureCall& call, std::size_t i) {
  return i < call.arguments.size() ? AsText(call.arguments[i]) : std::nullopt;
}

// Whether the call's @table_qualifier names this database; error 15250 when it names another.
bool QualifierIsThisDatabase(Session& session, const std::optional<std::string>& qualifier) {
  if (!qualifier) return true;
  if (qualifier->empty()) return false;
  if (!EqualsIgnoringCase(*qualifier, session.database_name())) {
    throw SqlError(tds::ServerError{15250, 1, 16,
                                    "The database name component of the object qualifier must be the "
                                    "name of the current database."});
  }
  return true;
}

// A name matching a pattern argument: NULL and '%' match all.
bool Matches(const std::optional<std::string>& pattern, std::string_view name, bool use_pattern = true) {
  if (!pattern || *pattern == "%") return true;
  return use_pattern ? LikeMatches(*pattern, name) : EqualsIgnoringCase(*pattern, name);
}

// The source tables the login may read whose schema and name match, in schema then name order.
std::vector<sim::TableInfo> MatchingTables(Session& session, const std::optional<std::string>& owner,
                                           const std::optional<std::string>& name, bool use_pattern) {
  std::vector<sim::TableInfo> tables;
  for (const sim::TableName& table : session.catalog().ListTables()) {
    if (!Matches(owner, table.schema, use_pattern) || !Matches(name, table.name, use_pattern)) continue;
    if (!session.access().CanReadTable(table)) continue;
    tables.push_back(session.catalog().LoadTable(table));
  }
  std::sort(tables.begin(), tables.end(), [](const sim::TableInfo& a, const sim::TableInfo& b) {
    const std::string left = AsciiLower(a.name.schema + "." + a.name.name);
    const std::string right = AsciiLower(b.name.schema + "." + b.name.name);
    return left < right;
  });
  return tables;
}

void Tables(Session& session, const CatalogProcedureCall& call, tds::ReplyWriter& reply) {
  tds::ResultSet& rows = reply.BeginResult({Column("TABLE_QUALIFIER", types::Sysname()),
                                            Column("TABLE_OWNER", types::Sysname()),
                                            Column("TABLE_NAME", types::Sysname()),
                                            Column("TABLE_TYPE", SqlType::Parse("varchar(32)")),
                                            Column("REMARKS", SqlType::Parse("varchar(254)"))});
  if (!QualifierIsThisDatabase(session, Argument(call, 2))) return;
  // @table_type lists quoted types ('TABLE','VIEW'); the simulator has tables only.
  const auto types = Argument(call, 3);
  if (types && types->find("'TABLE'") == std::string::npos) return;
  const bool use_pattern = !call.arguments[4].is_null() ? AsInteger(call.arguments[4]).value_or(1) != 0 : true;
  for (const auto& table : MatchingTables(session, Argument(call, 1), Argument(call, 0), use_pattern)) {
    rows.Text(session.database_name());
    rows.Text(table.name.schema);
    rows.Text(table.name.name);
    rows.Text("TABLE");
    rows.Null();
    rows.EndRow();
  }
}

// sp_pkeys and sp_statistics take exact names (no patterns); the owner defaults to dbo.
std::optional<sim::TableInfo> NamedTable(Session& session, const CatalogProcedureCall& call) {
  const auto name = Argument(call, 0);
  if (!name || !QualifierIsThisDatabase(session, Argument(call, 2))) return std::nullopt;
  const auto owner = Argument(call, 1);
  const auto tables = MatchingTables(session, owner.value_or("dbo"), *name, false);
  if (tables.empty()) return std::nullopt;
  return tables.front();
}

std::string KeyName(const sim::TableInfo& table) { return "PK_" + table.name.name; }

void PrimaryKeys(Session& session, const CatalogProcedureCall& call, tds::ReplyWriter& reply) {
  tds::ResultSet& rows = reply.BeginResult({Column("TABLE_QUALIFIER", types::Sysname()),
                                            Column("TABLE_OWNER", types::Sysname()),
                                            Column("TABLE_NAME", types::Sysname()),
                                            Column("COLUMN_NAME", types::Sysname()),
                                            Column("KEY_SEQ", types::Smallint()),
                                            Column("PK_NAME", types::Sysname())});
  const auto table = NamedTable(session, call);
  if (!table) return;
  for (std::size_t i = 0; i < table->key.size(); ++i) {
    rows.Text(session.database_name());
    rows.Text(table->name.schema);
    rows.Text(table->name.name);
    rows.Text(table->key[i]);
    rows.Int(static_cast<std::int64_t>(i + 1));
    rows.Text(KeyName(*table));
    rows.EndRow();
  }
}

void Statistics(Session& session, const CatalogProcedureCall& call, tds::ReplyWriter& reply) {
  tds::ResultSet& rows = reply.BeginResult({Column("TABLE_QUALIFIER", types::Sysname()),
                                            Column("TABLE_OWNER", types::Sysname()),
                                            Column("TABLE_NAME", types::Sysname()),
                                            Column("NON_UNIQUE", types::Smallint()),
                                            Column("INDEX_QUALIFIER", types::Sysname()),
                                            Column("INDEX_NAME", types::Sysname()),
                                            Column("TYPE", types::Smallint()),
                                            Column("SEQ_IN_INDEX", types::Smallint()),
                                            Column("COLUMN_NAME", types::Sysname()),
                                            Column("COLLATION", SqlType::Parse("char(1)")),
                                            Column("CARDINALITY", types::Int()),
                                            Column("PAGES", types::Int()),
                                            Column("FILTER_CONDITION", SqlType::Parse("varchar(128)"))});
  const auto table = NamedTable(session, call);
  if (!table) return;
  StatementLease count = session.statements().Prepare(
      "SELECT count(*) FROM " + sim::QuoteIdent(sim::SourceTableStorageName(table->name.schema, table->name.name)));
  count->Step();
  const std::int64_t cardinality = count->Int(0);
  auto head = [&] {
    rows.Text(session.database_name());
    rows.Text(table->name.schema);
    rows.Text(table->name.name);
  };
  // The table's own statistics row (TYPE 0); pages are not simulated.
  head();
  for (int i = 0; i < 3; ++i) rows.Null();  // NON_UNIQUE, INDEX_QUALIFIER, INDEX_NAME
  rows.Int(0);
  for (int i = 0; i < 3; ++i) rows.Null();  // SEQ_IN_INDEX, COLUMN_NAME, COLLATION
  rows.Int(cardinality);
  rows.Null();
  rows.Null();
  rows.EndRow();
  // The primary key, the one index a simulated table has: unique and clustered.
  const auto index_name = Argument(call, 3);
  if (!Matches(index_name, KeyName(*table))) return;
  for (std::size_t i = 0; i < table->key.size(); ++i) {
    head();
    rows.Int(0);
    rows.Text(table->name.name);
    rows.Text(KeyName(*table));
    rows.Int(1);
    rows.Int(static_cast<std::int64_t>(i + 1));
    rows.Text(table->key[i]);
    rows.Text("A");
    rows.Int(cardinality);
    rows.Null();
    rows.Null();
    rows.EndRow();
  }
}

}  // namespace

void Answer(Session& session, const CatalogProcedureCall& call, tds::ReplyWriter& reply) {
  switch (call.procedure) {
    case CatalogProcedureCall::Procedure::kTables:
      return Tables(session, call, reply);
    case CatalogProcedureCall::Procedure::kPrimaryKeys:
      return PrimaryKeys(session, call, reply);
    case CatalogProcedureCall::Procedure::kStatistics:
      return Statistics(session, call, reply);
  }
}

}  // namespace mssql_cdc::sim_server
