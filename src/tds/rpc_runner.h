// Runs the procedure calls of a connection's RPC messages: sp_executesql, sp_prepare,
// sp_prepexec, sp_execute and sp_unprepare, keeping the connection's prepared statements
// (handle -> statement text and parameter declaration).
//
// Each call's statement goes to the QueryHandler; the reply of a call is its result sets
// (closed by DONEINPROC), RETURNSTATUS 0, for sp_prepexec and sp_prepare a RETURNVALUE with
// the handle, and DONEPROC. A procedure by any other name is answered with SQL Server's
// error 2812; an unknown handle with 8179.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "tds/query_handler.h"
#include "tds/rpc_request.h"
#include "tds/token_stream.h"

namespace mssql_cdc::tds {

class RpcRunner {
 public:
  RpcRunner(TokenStream& stream, bool use_nbcrow, const std::string& server_name,
            bool log_requests)
      : stream_(stream),
        use_nbcrow_(use_nbcrow),
        server_name_(server_name),
        log_requests_(log_requests) {}

  // Writes the call's whole reply, its DONEPROC held so that a following call sets
  // DONE_MORE. ReplyAborted passes through.
  void Run(const RpcCall& call, QueryHandler& handler);

  std::size_t prepared_count() const { return prepared_.size(); }

 private:
  struct Prepared {
    std::string sql;
    std::string declaration;
  };

  // Runs `statement`; true when it failed (an error was sent).
  bool Execute(const Statement& statement, QueryHandler& handler);
  // An error for the whole call, before anything ran: ERROR, then the call's end.
  void Reject(std::int32_t number, const std::string& message);
  void EndProcedure(bool failed, const RpcParameter* handle_param, std::int32_t handle);

  TokenStream& stream_;
  const bool use_nbcrow_;
  const std::string& server_name_;
  const bool log_requests_;
  std::unordered_map<std::int32_t, Prepared> prepared_;
  std::int32_t next_handle_ = 1;
};

}  // namespace mssql_cdc::tds
