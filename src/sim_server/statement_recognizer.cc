#include "sim_server/statement_recognizer.h"

#include <optional>
#include <utility>

#include "sim_server/control_statements.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/shapes.h"
#include "sim_server/token_cursor.h"
#include "sim_server/tsql/parser.h"

namespace mssql_cdc::sim_server {
namespace {

// "schema.name" of the first object after FROM, as written; empty when there is none.
std::string FirstObject(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i + 1 < end; ++i) {
    if (!tokens[i].IsName("from") || !tokens[i + 1].IsName()) continue;
    std::string name = tokens[i + 1].text;
    if (i + 3 < end && tokens[i + 2].IsPunct(".") && tokens[i + 3].IsName()) {
      name += "." + tokens[i + 3].text;
    }
    return name;
  }
  return {};
}

// Whether a statement taken by a shape of source-table reads names a system schema or a table
// variable instead: such a read of a catalog view, a change table or a variable goes to the
// front end, which knows those.
bool ReadsNoSourceTable(const RecognizedStatement& statement) {
  const std::string* schema = nullptr;
  const std::string* table = nullptr;
  if (const auto* rows = std::get_if<SnapshotRowsQuery>(&statement)) schema = &rows->schema, table = &rows->table;
  if (const auto* at = std::get_if<KeyAtQuery>(&statement)) schema = &at->schema, table = &at->table;
  if (const auto* last = std::get_if<LastKeyQuery>(&statement)) schema = &last->schema, table = &last->table;
  if (const auto* slices = std::get_if<KeySlicesQuery>(&statement)) schema = &slices->schema, table = &slices->table;
  if (schema == nullptr) return false;
  return EqualsIgnoringCase(*schema, "sys") || EqualsIgnoringCase(*schema, "cdc") ||
         EqualsIgnoringCase(*schema, "INFORMATION_SCHEMA") || table->starts_with('@');
}

RecognizedStatement RecognizeOne(const std::vector<SqlToken>& tokens, std::size_t begin,
                                 std::size_t end, const std::vector<SqlValue>& values);

// DECLARE @t TABLE(...), and INSERT [INTO] @t EXEC of a catalog procedure; nullopt for any
// other statement.
std::optional<RecognizedStatement> RecognizeTableVariable(const std::vector<SqlToken>& tokens,
                                                          std::size_t begin, std::size_t end,
                                                          const std::vector<SqlValue>& values) {
  if (tokens[begin].IsName("declare") && begin + 2 < end && tokens[begin + 2].IsName("table")) {
    tsql::TableDeclaration declaration = tsql::ParseTableDeclaration(tokens, begin, end);
    DeclareTableVariable declare{declaration.name, {}};
    for (auto& [name, type] : declaration.columns) {
      declare.columns.push_back(Column(name, type.name == "sysname" ? types::Sysname() : type));
    }
    return declare;
  }
  if (!tokens[begin].IsName("insert")) return std::nullopt;
  std::size_t at = begin + 1;
  if (at < end && tokens[at].IsName("into")) ++at;
  if (at >= end || tokens[at].kind != SqlToken::Kind::kWord || !tokens[at].text.starts_with('@')) {
    return std::nullopt;
  }
  RecognizedStatement procedure = RecognizeOne(tokens, at + 1, end, values);
  auto* call = std::get_if<CatalogProcedureCall>(&procedure);
  if (call == nullptr) return std::nullopt;
  return InsertExecute{tokens[at].text, std::move(*call)};
}

RecognizedStatement RecognizeOne(const std::vector<SqlToken>& tokens, std::size_t begin,
                                 std::size_t end, const std::vector<SqlValue>& values) {
  if (auto table_variable = RecognizeTableVariable(tokens, begin, end, values)) return std::move(*table_variable);
  std::size_t furthest = begin;
  for (std::span<const Shape> shapes : {ClientShapes(), DriverShapes(), ReferenceShapes()}) {
    for (Shape shape : shapes) {
      TokenCursor cursor(tokens, begin, end, values, &furthest);
      RecognizedStatement statement;
      if (shape(cursor, &statement) && !ReadsNoSourceTable(statement)) return statement;
    }
  }
  if (tsql::StartsQuery(tokens, begin, end)) {
    try {
      return FrontEndQuery{tsql::ParseQuery(tokens, begin, end, values)};
    } catch (const SqlError&) {
      // Beyond the front end's grammar too: answered as a statement of no known shape.
    }
  }
  const std::size_t at = furthest < end ? furthest : end - 1;
  return UnknownStatement{tokens[at].Display(), FirstObject(tokens, begin, end)};
}

// Drops the database's own name from three-part names (`[sim].sys.fn_cdc_get_max_lsn()`,
// `sim.cdc.lsn_time_mapping`, `sim..orders`), which then read as the two-part names the shapes
// know. A four-part name, or one naming another database, is left as written.
void DropDatabaseQualifiers(std::vector<SqlToken>& tokens, std::string_view database) {
  if (database.empty()) return;
  std::vector<SqlToken> kept;
  kept.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const bool qualifies = tokens[i].IsName(database) && i + 3 < tokens.size() &&
                           tokens[i + 1].IsPunct(".") && (i == 0 || !tokens[i - 1].IsPunct("."));
    if (qualifies && tokens[i + 2].IsName() && tokens[i + 3].IsPunct(".")) {
      ++i;  // the name and its dot; the schema follows
      continue;
    }
    if (qualifies && tokens[i + 2].IsPunct(".") && tokens[i + 3].IsName()) {
      i += 2;  // db..name: the default schema
      continue;
    }
    kept.push_back(std::move(tokens[i]));
  }
  tokens = std::move(kept);
}

// The value of each parameter marker, by token index.
std::vector<SqlValue> BindParameters(const std::vector<SqlToken>& tokens,
                                     const std::vector<tds::ParamValue>& params) {
  std::vector<SqlValue> values(tokens.size());
  std::size_t next_positional = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const SqlToken& token = tokens[i];
    if (token.kind != SqlToken::Kind::kParameter) continue;
    const tds::ParamValue* bound = nullptr;
    const int number = token.ParameterNumber();
    if (token.text == "?") {
      if (next_positional < params.size()) bound = &params[next_positional++];
      if (bound == nullptr) throw SqlError(errors::IncorrectSyntax("?"));
    } else {
      for (const auto& param : params) {
        if (EqualsIgnoringCase(param.name, token.text)) bound = &param;
      }
      // Unnamed values of a call with no declaration: @P1 is the first (ODBC numbers from 1).
      if (bound == nullptr && number >= 1 && static_cast<std::size_t>(number) <= params.size() &&
          params[number - 1].name.empty()) {
        bound = &params[number - 1];
      }
      if (bound == nullptr) throw SqlError(errors::MustDeclareVariable(token.text));
    }
    values[i] = SqlValue::FromParam(*bound);
  }
  return values;
}

}  // namespace

std::vector<RecognizedStatement> RecognizeBatch(std::string_view sql,
                                                const std::vector<tds::ParamValue>& params,
                                                std::string_view database) {
  TokenizeResult tokenized = Tokenize(sql);
  if (tokenized.unclosed) throw SqlError(errors::UnclosedQuotation(*tokenized.unclosed));
  DropDatabaseQualifiers(tokenized.tokens, database);
  const std::vector<SqlToken>& tokens = tokenized.tokens;
  const std::vector<SqlValue> values = BindParameters(tokens, params);
  std::vector<RecognizedStatement> statements;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    if (i < tokens.size() && !tokens[i].IsPunct(";")) continue;
    if (i > begin) {
      // Control statements may lead a statement with no `;` after them.
      std::size_t furthest = begin;
      TokenCursor cursor(tokens, begin, i, values, &furthest);
      ControlStatements control;
      if (ReadControlStatements(cursor, &control)) {
        statements.push_back(std::move(control));
        begin = i - (cursor.Remaining());
      }
      if (i > begin) statements.push_back(RecognizeOne(tokens, begin, i, values));
    }
    begin = i + 1;
  }
  return statements;
}

}  // namespace mssql_cdc::sim_server
