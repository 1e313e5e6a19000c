#include "sim_server/sim_query_handler.h"

#include <spdlog/spdlog.h>

#include <type_traits>
#include <variant>

#include "sim/sqlite.h"
#include "sim_server/answers.h"
#include "sim_server/server_errors.h"
#include "sim_server/statement_recognizer.h"

namespace mssql_cdc::sim_server {
namespace {

template <typename T>
bool IsQueryOfNoTable(const T&) {
  return false;
}
bool IsQueryOfNoTable(const FrontEndQuery& statement) {
  for (const auto& select : statement.query.selects) {
    if (!select.from.empty()) return false;
  }
  return statement.query.with.empty();
}

// Whether a statement opens a transaction under IMPLICIT_TRANSACTIONS, as a SELECT from a table
// does; a SELECT of session values, of SERVERPROPERTY or of a CDC scalar function reads none.
bool StartsImplicitTransaction(const RecognizedStatement& statement) {
  return std::visit(
      [](const auto& query) {
        using T = std::decay_t<decltype(query)>;
        return !(std::is_same_v<T, ControlStatements> || std::is_same_v<T, UseDatabase> ||
                 std::is_same_v<T, DeclareTableVariable> ||
                 std::is_same_v<T, SessionQuery> || std::is_same_v<T, ServerPropertyQuery> ||
                 std::is_same_v<T, TimeZoneSupportQuery> || std::is_same_v<T, TimeZoneIdQuery> ||
                 std::is_same_v<T, MaxLsnQuery> || std::is_same_v<T, MinLsnQuery> ||
                 std::is_same_v<T, LsnStepQuery> || std::is_same_v<T, UserNameQuery> ||
                 std::is_same_v<T, UnknownStatement>) &&
               !IsQueryOfNoTable(query);
      },
      statement);
}

}  // namespace

void SimQueryHandler::Execute(const tds::Statement& statement, tds::ReplyWriter& reply) {
  // Table variables live as long as their batch.
  struct ClearTableVariables {
    Session& session;
    ~ClearTableVariables() {
      try {
        session.table_variables().Clear();
      } catch (const std::exception& e) {
        spdlog::warn("sim serve: dropping a batch's table variables: {}", e.what());
      }
    }
  } clear{*session_};
  try {
    for (const RecognizedStatement& recognized : RecognizeBatch(statement.sql, statement.params,
                                                                     session_->database_name())) {
      sim::ReadTransaction snapshot(session_->db());
      if (StartsImplicitTransaction(recognized)) {
        session_->transactions().BeforeTransactionalStatement();
      }
      std::visit([&](const auto& query) { Answer(*session_, query, reply); }, recognized);
    }
  } catch (const SqlError& e) {
    spdlog::debug("sim serve: login {}: error {}: {}", session_->login().name, e.error().number,
                  e.error().message);
    reply.Fail(e.error());
  }
}

}  // namespace mssql_cdc::sim_server
