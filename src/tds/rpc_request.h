// RPC requests (MS-TDS 2.2.6.6): one or more procedure calls in a message, each by
// well-known id (sp_executesql = 10, ...) or by name, with typed parameters.
//
// Parameters become ParamValues: integers and bit as kInt, real and float as kFloat, char
// types (varchar, nvarchar, text, ntext, xml, incl. PLP (max) values) as kText in UTF-8,
// binary types as kBinary, and everything else (decimal, money, date and time types,
// uniqueidentifier) as kOther holding the value's wire bytes. Each keeps its declared type,
// e.g. binary(10), nvarchar(4000), decimal(18,4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tds/query_handler.h"

namespace mssql_cdc::tds {

class WireReader;

// The special procedures' ids; a call by one of these names gets its id too.
namespace proc {
inline constexpr std::uint16_t kExecuteSql = 10;
inline constexpr std::uint16_t kPrepare = 11;
inline constexpr std::uint16_t kExecute = 12;
inline constexpr std::uint16_t kPrepExec = 13;
inline constexpr std::uint16_t kUnprepare = 15;
}  // namespace proc

struct RpcParameter {
  ParamValue value;
  bool output = false;  // passed by reference (OUTPUT)
};

struct RpcCall {
  std::uint16_t proc_id = 0;  // 0: a procedure by name with no well-known id
  std::string proc_name;      // as sent, or "sp_executesql"... for a call by id
  bool no_exec = false;       // the client flagged it not to be executed
  std::vector<RpcParameter> params;
};

// Every call of an RPC message (ALL_HEADERS included). Throws SourceError when the message
// is malformed or a parameter has a type this server does not read (sql_variant, UDT, TVP).
std::vector<RpcCall> ParseRpcRequest(std::string_view payload);

// One parameter's TYPE_INFO and value from `reader` into `out` (name and kind included).
void ReadParameterValue(WireReader& reader, ParamValue* out);

}  // namespace mssql_cdc::tds
