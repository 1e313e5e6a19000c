#include "tds/rpc_runner.h"

#include <spdlog/spdlog.h>

#include "tds/packet.h"
#include "tds/statement_reply.h"

namespace mssql_cdc::tds {
namespace {

// SQL Server's numbers for these errors.
constexpr std::int32_t kMissingStatement = 214;
constexpr std::int32_t kProcedureNotFound = 2812;
constexpr std::int32_t kPreparedNotFound = 8179;
constexpr std::int32_t kGenericError = 50000;

std::vector<ParamValue> ValuesFrom(const RpcCall& call, std::size_t first) {
  std::vector<ParamValue> values;
  for (std::size_t i = first; i < call.params.size(); ++i) values.push_back(call.params[i].value);
  return values;
}

bool IsText(const RpcCall& call, std::size_t index) {
  return index < call.params.size() && call.params[index].value.kind == ParamValue::Kind::kText;
}

bool HandleAt(const RpcCall& call, std::size_t index, std::int32_t* handle) {
  if (index >= call.params.size() || call.params[index].value.kind != ParamValue::Kind::kInt) {
    return false;
  }
  *handle = static_cast<std::int32_t>(call.params[index].value.int_value);
  return true;
}

}  // namespace

void RpcRunner::Run(const RpcCall& call, QueryHandler& handler) {
  if (call.no_exec) {
    return Reject(kGenericError, "The call of " + call.proc_name +
                                     " was not executed: the client flagged it NoExec.");
  }
  switch (call.proc_id) {
    case proc::kExecuteSql: {
      if (!IsText(call, 0)) {
        return Reject(kMissingStatement,
                      "Procedure expects parameter '@statement' of type 'ntext/nchar/nvarchar'.");
      }
      Statement statement{call.params[0].value.text, ValuesFrom(call, 2), true};
      if (log_requests_) spdlog::info("tds: sp_executesql: {}", statement.sql);
      return EndProcedure(Execute(statement, handler), nullptr, 0);
    }
    case proc::kPrepExec:
    case proc::kPrepare: {
      if (!IsText(call, 2)) {
        return Reject(kMissingStatement,
                      "Procedure expects parameter '@stmt' of type 'ntext/nchar/nvarchar'.");
      }
      const std::int32_t handle = next_handle_++;
      const std::string declaration = IsText(call, 1) ? call.params[1].value.text : "";
      prepared_[handle] = Prepared{call.params[2].value.text, declaration};
      if (log_requests_) {
        spdlog::info("tds: {} handle {}: {}", call.proc_name, handle, call.params[2].value.text);
      }
      bool failed = false;
      if (call.proc_id == proc::kPrepExec) {
        Statement statement{call.params[2].value.text, ValuesFrom(call, 3), true};
        failed = Execute(statement, handler);
      }
      return EndProcedure(failed, &call.params[0], handle);
    }
    case proc::kExecute: {
      std::int32_t handle = 0;
      if (!HandleAt(call, 0, &handle) || !prepared_.contains(handle)) {
        return Reject(kPreparedNotFound, "Could not find prepared statement with handle " +
                                             std::to_string(handle) + ".");
      }
      Statement statement{prepared_[handle].sql, ValuesFrom(call, 1), true};
      if (log_requests_) spdlog::info("tds: sp_execute handle {}: {}", handle, statement.sql);
      return EndProcedure(Execute(statement, handler), nullptr, 0);
    }
    case proc::kUnprepare: {
      std::int32_t handle = 0;
      if (HandleAt(call, 0, &handle)) prepared_.erase(handle);
      return EndProcedure(false, nullptr, 0);
    }
    default:
      return Reject(kProcedureNotFound,
                    "Could not find stored procedure '" + call.proc_name + "'.");
  }
}

bool RpcRunner::Execute(const Statement& statement, QueryHandler& handler) {
  StatementReply reply(stream_, StatementReply::Framing::kRpc, use_nbcrow_, server_name_);
  try {
    handler.Execute(statement, reply);
    reply.Finish();
  } catch (const std::exception& e) {
    spdlog::warn("tds: statement failed: {}", e.what());
    reply.FailWithException(e.what());
  }
  return reply.failed();
}

void RpcRunner::Reject(std::int32_t number, const std::string& message) {
  StatementReply reply(stream_, StatementReply::Framing::kRpc, use_nbcrow_, server_name_);
  reply.Fail(ServerError{number, 1, 16, message});
  EndProcedure(true, nullptr, 0);
}

void RpcRunner::EndProcedure(bool failed, const RpcParameter* handle_param, std::int32_t handle) {
  WriteReturnStatus(stream_.Next(), 0);
  if (handle_param != nullptr) {
    WriteReturnValueInt(stream_.Next(), 0, handle_param->value.name, handle);
  }
  stream_.Done(DoneToken{token::kDoneProc, failed ? done::kError : done::kFinal, 0, 0});
}

}  // namespace mssql_cdc::tds
