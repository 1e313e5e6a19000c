// The catalog procedures Microsoft's JDBC driver calls for DatabaseMetaData: sp_tables,
// sp_columns_100, sp_pkeys and sp_statistics_100, over the simulated database's source tables;
// and the table variable getColumns declares and fills with sp_columns_100. The driver
// renames their columns by position, so the columns come in the documented order. A table's
// primary key is its clustered index, named PK_<table> as the simulator names it in
// cdc.change_tables.index_name.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "core/ascii.h"
#include "sim/storage.h"
#include "sim_server/answers.h"
#include "sim_server/like_pattern.h"
#include "sim_server/odbc_column_info.h"
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

// sp_columns_100 with @ODBCVer = 3: one row per column of the matching tables, 29 columns in the
// order getColumns' table variable takes them (odbc_column_info.h for the type's values). The
// simulator has no defaults, identity, computed, sparse or CLR columns.
void Columns(Session& session, const CatalogProcedureCall& call, tds::ReplyWriter& reply) {
  const SqlType varchar254 = SqlType::Parse("varchar(254)");
  const SqlType nvarchar128 = types::Nvarchar(128);
  tds::ResultSet& rows = reply.BeginResult(
      {Column("TABLE_QUALIFIER", types::Sysname()), Column("TABLE_OWNER", types::Sysname()),
       Column("TABLE_NAME", types::Sysname()), Column("COLUMN_NAME", types::Sysname()),
       Column("DATA_TYPE", types::Smallint()), Column("TYPE_NAME", types::Sysname()),
       Column("PRECISION", types::Int()), Column("LENGTH", types::Int()), Column("SCALE", types::Smallint()),
       Column("RADIX", types::Smallint()), Column("NULLABLE", types::Smallint()), Column("REMARKS", varchar254),
       Column("COLUMN_DEF", types::Nvarchar(4000)), Column("SQL_DATA_TYPE", types::Smallint()),
       Column("SQL_DATETIME_SUB", types::Smallint()), Column("CHAR_OCTET_LENGTH", types::Int()),
       Column("ORDINAL_POSITION", types::Int()), Column("IS_NULLABLE", varchar254),
       Column("SS_IS_SPARSE", types::Smallint()), Column("SS_IS_COLUMN_SET", types::Smallint()),
       Column("SS_IS_COMPUTED", types::Smallint()), Column("SS_IS_IDENTITY", types::Smallint()),
       Column("SS_UDT_CATALOG_NAME", nvarchar128), Column("SS_UDT_SCHEMA_NAME", nvarchar128),
       Column("SS_UDT_ASSEMBLY_TYPE_NAME", types::NvarcharMax()),
       Column("SS_XML_SCHEMACOLLECTION_CATALOG_NAME", nvarchar128),
       Column("SS_XML_SCHEMACOLLECTION_SCHEMA_NAME", nvarchar128),
       Column("SS_XML_SCHEMACOLLECTION_NAME", nvarchar128), Column("SS_DATA_TYPE", types::Tinyint())});
  if (!QualifierIsThisDatabase(session, Argument(call, 2))) return;
  const bool use_pattern = !call.arguments[6].is_null() ? AsInteger(call.arguments[6]).value_or(1) != 0 : true;
  const auto column_pattern = Argument(call, 3);
  auto optional_int = [&](const auto& value) {
    if (value) {
      rows.Int(*value);
    } else {
      rows.Null();
    }
  };
  for (const auto& table : MatchingTables(session, Argument(call, 1), Argument(call, 0), use_pattern)) {
    int ordinal = 0;
    for (const auto& column : table.columns) {
      ++ordinal;
      if (!Matches(column_pattern, column.name, use_pattern)) continue;
      const OdbcColumnInfo info = OdbcColumnInfoOf(column.type, column.nullable);
      rows.Text(session.database_name());
      rows.Text(table.name.schema);
      rows.Text(table.name.name);
      rows.Text(column.name);
      rows.Int(info.data_type);
      rows.Text(info.type_name);
      optional_int(info.precision);
      optional_int(info.length);
      optional_int(info.scale);
      optional_int(info.radix);
      rows.Int(column.nullable ? 1 : 0);
      rows.Null();  // REMARKS
      rows.Null();  // COLUMN_DEF: no defaults are simulated
      rows.Int(info.sql_data_type);
      optional_int(info.datetime_sub);
      optional_int(info.octet_length);
      rows.Int(ordinal);
      rows.Text(column.nullable ? "YES" : "NO");
      for (int i = 0; i < 4; ++i) rows.Int(0);     // sparse, column set, computed, identity
      for (int i = 0; i < 6; ++i) rows.Null();     // CLR type and XML schema collection
      optional_int(info.ss_data_type);
      rows.EndRow();
    }
  }
}

// The rows of a procedure, inserted into a table variable by position instead of sent.
class RowsIntoTableVariable : public tds::ReplyWriter, public tds::ResultSet {
 public:
  RowsIntoTableVariable(sim::SqliteDb& db, const TableVariable& variable) : db_(db), variable_(variable) {}

  tds::ResultSet& BeginResult(const std::vector<tds::ResultColumn>& columns) override {
    if (columns.size() != variable_.columns.size()) {
      throw SqlError(tds::ServerError{213, 7, 16,
                                      "Column name or number of supplied values does not match table "
                                      "definition."});
    }
    std::string sql = "INSERT INTO temp." + variable_.storage + " VALUES(";
    for (std::size_t i = 0; i < columns.size(); ++i) sql += i ? ", ?" : "?";
    insert_ = std::make_unique<sim::Statement>(db_, sql + ")");
    return *this;
  }
  void Info(std::int32_t, const std::string&) override {}
  void Fail(const tds::ServerError& error) override { throw SqlError(error); }

  void Null() override { insert_->BindNull(++bound_); }
  void Int(std::int64_t value) override { insert_->BindInt(++bound_, value); }
  void Float(double value) override { insert_->BindDouble(++bound_, value); }
  void Text(std::string_view value) override { insert_->BindText(++bound_, value); }
  void Binary(std::string_view value) override { insert_->BindBlob(++bound_, value.data(), value.size()); }
  bool TakesEncodedValues() const override { return false; }
  void EncodedValues(std::string_view, std::size_t) override {}
  void EndRow() override {
    insert_->Run();
    insert_->Reset();
    bound_ = 0;
  }

 private:
  sim::SqliteDb& db_;
  const TableVariable& variable_;
  std::unique_ptr<sim::Statement> insert_;
  int bound_ = 0;
};

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
    case CatalogProcedureCall::Procedure::kColumns:
      return Columns(session, call, reply);
    case CatalogProcedureCall::Procedure::kPrimaryKeys:
      return PrimaryKeys(session, call, reply);
    case CatalogProcedureCall::Procedure::kStatistics:
      return Statistics(session, call, reply);
  }
}

}  // namespace mssql_cdc::sim_server

namespace mssql_cdc::sim_server {

void Answer(Session& session, const DeclareTableVariable& query, tds::ReplyWriter&) {
  session.table_variables().Declare(query.name, query.columns);
}

void Answer(Session& session, const InsertExecute& query, tds::ReplyWriter&) {
  const TableVariable* variable = session.table_variables().Find(query.variable);
  if (variable == nullptr) {
    throw SqlError(tds::ServerError{1087, 1, 15, "Must declare the table variable \"" + query.variable + "\"."});
  }
  RowsIntoTableVariable into(session.db(), *variable);
  Answer(session, query.call, into);
}

}  // namespace mssql_cdc::sim_server
