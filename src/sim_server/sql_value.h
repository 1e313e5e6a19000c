// A value a statement takes: a parameter the client sent, or a literal written in the text.
// The As* conversions are the implicit ones SQL Server applies where a statement compares or
// passes the value, and fail with SQL Server's conversion errors (SqlError) where it does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/lsn.h"
#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

struct SqlValue {
  enum class Kind { kNull, kInt, kFloat, kText, kBinary, kOther };
  Kind kind = Kind::kNull;
  std::int64_t int_value = 0;
  double float_value = 0;
  std::string bytes;      // kText: UTF-8; kBinary: the bytes
  std::string type_name;  // the SQL Server type it arrived as, for messages: "nvarchar"

  static SqlValue FromParam(const tds::ParamValue& param);
  bool is_null() const { return kind == Kind::kNull; }
};

// An LSN compared with a binary(10) column; nullopt for NULL. Shorter binary values are
// padded with zeros on the right, as SQL Server pads binary operands.
std::optional<Lsn> AsLsn(const SqlValue& value);
// A name passed to a sysname parameter; nullopt for NULL.
std::optional<std::string> AsText(const SqlValue& value);
// A count (TOP, NTILE); nullopt for NULL.
std::optional<std::int64_t> AsInteger(const SqlValue& value);

}  // namespace mssql_cdc::sim_server
