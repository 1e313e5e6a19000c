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

// The parameter names of a declaration ("@P0 varbinary(8000),@P1 decimal(18,2) OUTPUT"), in
// order.
std::vector<std::string> DeclaredNames(std::string_view declaration) {
  std::vector<std::string> names;
  int depth = 0;
  bool expect_name = true;
  for (std::size_t i = 0; i < declaration.size(); ++i) {
    const char c = declaration[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) expect_name = true;
    if (c == '@' && expect_name) {
      std::size_t end = i + 1;
      while (end < declaration.size() && declaration[end] != ' ' && declaration[end] != '\t' &&
             declaration[end] != ',' && declaration[end] != '\n' && declaration[end] != '\r') {
        ++end;
      }
      names.emplace_back(declaration.substr(i, end - i));
      expect_name = false;
      i = end - 1;
    }
  }
  return names;
}

// The values of the call from `first` on. A value sent without its name (mssql-jdbc sends
// them so) takes the name its place has in the declaration, as SQL Server binds them.
std::vector<ParamValue> ValuesFrom(const RpcCall& call, std::size_t first,
                                   std::string_view declaration) {
  const std::vector<std::string> declared = DeclaredNames(declaration);
  std::vector<ParamValue> values;
  for (std::size_t i = first; i < call.params.size(); ++i) {
    values.push_back(call.params[i].value);
    const std::size_t place = i - first;
    if (values.back().name.empty() && place < declared.size()) values.back().name = declared[place];
  }
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
      const std::string declaration = IsText(call, 1) ? call.params[1].value.text : "";
      Statement statement{call.params[0].value.text, ValuesFrom(call, 2, declaration), true};
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
        Statement statement{call.params[2].value.text, ValuesFrom(call, 3, declaration), true};
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
      Statement statement{prepared_[handle].sql,
                          ValuesFrom(call, 1, prepared_[handle].declaration), true};
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
