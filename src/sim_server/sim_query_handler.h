// Answers the statements of one TDS connection from a sim database: recognises each statement
// of a request (statement_recognizer.h) and answers it (answers.h) under one read snapshot of
// the file per statement, so that a simulator writing the file meanwhile is seen commit by
// commit and never half. SQL Server errors go to the client as they are; anything else
// thrown goes to the server, which answers it as error 50000.
#pragma once

#include <memory>

#include "sim_server/session.h"
#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

class SimQueryHandler final : public tds::QueryHandler {
 public:
  explicit SimQueryHandler(std::unique_ptr<Session> session) : session_(std::move(session)) {}

  void Execute(const tds::Statement& statement, tds::ReplyWriter& reply) override;

 private:
  std::unique_ptr<Session> session_;
};

}  // namespace mssql_cdc::sim_server
