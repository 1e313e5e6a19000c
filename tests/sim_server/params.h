// Parameters as a client sends them with an RPC, and statement texts as it rewrites them
// (`?` to @P1, @P2, ...), for the tests of the statement engine. Header-only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/lsn.h"
#include "core/sql_type.h"
#include "tds/query_handler.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::testing {

inline tds::ParamValue LsnParam(const std::string& name, const Lsn& lsn) {
  tds::ParamValue p;
  p.name = name;
  p.type = SqlType::Parse("binary(10)");
  p.kind = tds::ParamValue::Kind::kBinary;
  p.text.assign(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize);
  return p;
}

inline tds::ParamValue TextParam(const std::string& name, const std::string& text) {
  tds::ParamValue p;
  p.name = name;
  p.type = SqlType::Parse("nvarchar(4000)");
  p.kind = tds::ParamValue::Kind::kText;
  p.text = text;
  return p;
}

inline tds::ParamValue IntParam(const std::string& name, std::int64_t value) {
  tds::ParamValue p;
  p.name = name;
  p.type = SqlType::Parse("bigint");
  p.kind = tds::ParamValue::Kind::kInt;
  p.int_value = value;
  return p;
}

inline tds::ParamValue NullParam(const std::string& name, const std::string& type) {
  tds::ParamValue p;
  p.name = name;
  p.type = SqlType::Parse(type);
  p.kind = tds::ParamValue::Kind::kNull;
  return p;
}

// `sql` with each `?` outside quotes and brackets rewritten to @P1, @P2, ..., as ODBC
// drivers and the engine's TDS reader send a parameterised statement through sp_executesql.
inline std::string ToRpcText(std::string_view sql) { return odbc_sql::NamedParameters(sql); }

}  // namespace mssql_cdc::testing
