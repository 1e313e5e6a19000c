#include "sim_server/statement_recognizer.h"

#include <optional>
#include <utility>

#include "sim_server/control_statements.h"
#include "sim_server/server_errors.h"
#include "sim_server/shapes.h"
#include "sim_server/token_cursor.h"

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

RecognizedStatement RecognizeOne(const std::vector<SqlToken>& tokens, std::size_t begin,
                                 std::size_t end, const std::vector<SqlValue>& values) {
  std::size_t furthest = begin;
  for (std::span<const Shape> shapes : {ClientShapes(), DriverShapes(), ReferenceShapes()}) {
    for (Shape shape : shapes) {
      TokenCursor cursor(tokens, begin, end, values, &furthest);
      RecognizedStatement statement;
      if (shape(cursor, &statement)) return statement;
    }
  }
  const std::size_t at = furthest < end ? furthest : end - 1;
  return UnknownStatement{tokens[at].Display(), FirstObject(tokens, begin, end)};
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
                                                const std::vector<tds::ParamValue>& params) {
  TokenizeResult tokenized = Tokenize(sql);
  if (tokenized.unclosed) throw SqlError(errors::UnclosedQuotation(*tokenized.unclosed));
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
