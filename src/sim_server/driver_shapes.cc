// The shapes of what drivers send on their own (USE, session queries, type info; SET and
// transactions are control_statements.h's) and of
// the CDC functions a person types into a query tool.
#include <utility>

#include "sim_server/server_errors.h"
#include "sim_server/shapes.h"

namespace mssql_cdc::sim_server {
namespace {

// ---- beyond statements.h ----

bool LsnStep(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase increment("SELECT sys.fn_cdc_increment_lsn(?)");
  static const Phrase decrement("SELECT sys.fn_cdc_decrement_lsn(?)");
  std::vector<SqlValue> values;
  TokenCursor other = cursor;
  if (cursor.Match(increment, &values) && cursor.End()) {
    *out = LsnStepQuery{true, std::move(values[0])};
    return true;
  }
  values.clear();
  if (other.Match(decrement, &values) && other.End()) {
    *out = LsnStepQuery{false, std::move(values[0])};
    return true;
  }
  return false;
}

bool AllChanges(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head("SELECT * FROM cdc.");
  static const Phrase arguments("(?, ?, ?)");
  static constexpr std::string_view kPrefix = "fn_cdc_get_all_changes_";
  if (!cursor.Match(head)) return false;
  const SqlToken* name = cursor.Peek();
  if (name == nullptr || !name->IsName() || name->text.size() <= kPrefix.size() ||
      !EqualsIgnoringCase(std::string_view(name->text).substr(0, kPrefix.size()), kPrefix)) {
    return cursor.Reject();
  }
  const std::string function = name->text;
  cursor.Advance();
  std::vector<SqlValue> values;
  if (!cursor.Match(arguments, &values) || !cursor.End()) return false;
  *out = AllChangesQuery{function.substr(kPrefix.size()), std::move(values[0]),
                         std::move(values[1]), std::move(values[2])};
  return true;
}

// ---- what drivers send on their own ----

bool Use(TokenCursor& cursor, RecognizedStatement* out) {
  UseDatabase use;
  if (!cursor.Keyword("use") || !cursor.Name(&use.name) || !cursor.End()) return false;
  *out = std::move(use);
  return true;
}

bool SessionQueryShape(TokenCursor& cursor, RecognizedStatement* out) {
  static const std::pair<Phrase, SessionQuery::Kind> kQueries[] = {
      {Phrase("SELECT @@SPID"), SessionQuery::Kind::kSpid},
      {Phrase("SELECT 1"), SessionQuery::Kind::kSelectOne},
      {Phrase("SELECT @@VERSION"), SessionQuery::Kind::kVersion},
      {Phrase("SELECT DB_NAME()"), SessionQuery::Kind::kDatabaseName},
      {Phrase("SELECT @@SERVERNAME"), SessionQuery::Kind::kServerName},
      {Phrase("SELECT @@TRANCOUNT"), SessionQuery::Kind::kTransactionCount},
  };
  for (const auto& [phrase, kind] : kQueries) {
    TokenCursor attempt = cursor;
    if (attempt.Match(phrase) && attempt.End()) {
      *out = SessionQuery{kind};
      return true;
    }
  }
  return false;
}

bool ServerProperty(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase("SELECT SERVERPROPERTY(?)");
  std::vector<SqlValue> values;
  if (!cursor.Match(phrase, &values) || !cursor.End()) return false;
  if (values[0].kind != SqlValue::Kind::kText) return false;
  *out = ServerPropertyQuery{values[0].bytes};
  return true;
}

bool DatatypeInfo(TokenCursor& cursor, RecognizedStatement* out) {
  std::vector<ProcedureArgument> arguments;
  TokenCursor other = cursor;
  if (!ProcedureCall(cursor, "sp_datatype_info_100", &arguments) &&
      !ProcedureCall(other, "sp_datatype_info", &arguments)) {
    return false;
  }
  *out = DatatypeInfoQuery{};
  return true;
}

// sp_tables, sp_pkeys, sp_statistics[_100] with their parameters in signature order.
bool CatalogProcedure(TokenCursor& cursor, RecognizedStatement* out) {
  using Procedure = CatalogProcedureCall::Procedure;
  struct Signature {
    std::string_view name;
    Procedure procedure;
    std::vector<std::string_view> parameters;
  };
  static const Signature kSignatures[] = {
      {"sp_tables", Procedure::kTables,
       {"@table_name", "@table_owner", "@table_qualifier", "@table_type", "@fUsePattern"}},
      {"sp_columns_100", Procedure::kColumns,
       {"@table_name", "@table_owner", "@table_qualifier", "@column_name", "@NameScope", "@ODBCVer",
        "@fUsePattern"}},
      {"sp_pkeys", Procedure::kPrimaryKeys, {"@table_name", "@table_owner", "@table_qualifier"}},
      {"sp_statistics_100", Procedure::kStatistics,
       {"@table_name", "@table_owner", "@table_qualifier", "@index_name", "@is_unique", "@accuracy"}},
      {"sp_statistics", Procedure::kStatistics,
       {"@table_name", "@table_owner", "@table_qualifier", "@index_name", "@is_unique", "@accuracy"}},
  };
  for (const Signature& signature : kSignatures) {
    TokenCursor attempt = cursor;
    std::vector<ProcedureArgument> arguments;
    if (!ProcedureCall(attempt, signature.name, &arguments)) continue;
    CatalogProcedureCall call{signature.procedure, std::vector<SqlValue>(signature.parameters.size())};
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      std::size_t place = i;
      if (!arguments[i].name.empty()) {
        place = signature.parameters.size();
        for (std::size_t p = 0; p < signature.parameters.size(); ++p) {
          if (EqualsIgnoringCase(signature.parameters[p], arguments[i].name)) place = p;
        }
        if (place == signature.parameters.size()) {
          throw SqlError(tds::ServerError{8145, 2, 16, arguments[i].name + " is not a parameter for procedure " +
                                                           std::string(signature.name) + "."});
        }
      }
      if (place >= call.arguments.size()) {
        throw SqlError(tds::ServerError{8144, 2, 16, "Procedure or function " + std::string(signature.name) +
                                                         " has too many arguments specified."});
      }
      call.arguments[place] = std::move(arguments[i].value);
    }
    cursor = attempt;
    *out = std::move(call);
    return true;
  }
  return false;
}

constexpr Shape kDriverShapes[] = {LsnStep, AllChanges, Use, SessionQueryShape, ServerProperty, DatatypeInfo,
                                   CatalogProcedure};

}  // namespace

std::span<const Shape> DriverShapes() { return kDriverShapes; }

}  // namespace mssql_cdc::sim_server
