#include "sim_server/sim_query_handler.h"

#include <spdlog/spdlog.h>

#include <variant>

#include "sim/sqlite.h"
#include "sim_server/answers.h"
#include "sim_server/server_errors.h"
#include "sim_server/statement_recognizer.h"

namespace mssql_cdc::sim_server {

void SimQueryHandler::Execute(const tds::Statement& statement, tds::ReplyWriter& reply) {
  try {
    for (const RecognizedStatement& recognized : RecognizeBatch(statement.sql, statement.params)) {
      sim::ReadTransaction snapshot(session_->db());
      std::visit([&](const auto& query) { Answer(*session_, query, reply); }, recognized);
    }
  } catch (const SqlError& e) {
    spdlog::debug("sim serve: login {}: error {}: {}", session_->login().name, e.error().number,
                  e.error().message);
    reply.Fail(e.error());
  }
}

}  // namespace mssql_cdc::sim_server
