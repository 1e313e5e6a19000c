// A translated expression: its SQLite text, its SQL Server type, and the column name SQL
// Server would give it in a result (empty for an expression that is no column).
#pragma once

#include <string>

#include "core/sql_type.h"

namespace mssql_cdc::sim_server::tsql {

struct Typed {
  std::string sql;
  SqlType type;
  std::string name;
  bool nullable = true;
};

inline bool IsCharacter(const SqlType& type) { return type.family() == SqlTypeFamily::kCharacter; }
inline bool IsBinary(const SqlType& type) {
  return type.family() == SqlTypeFamily::kBinary || type.family() == SqlTypeFamily::kRowVersion;
}
inline bool IsNumber(const SqlType& type) {
  const auto family = type.family();
  return family == SqlTypeFamily::kInteger || family == SqlTypeFamily::kFloatingPoint ||
         family == SqlTypeFamily::kDecimal;
}

}  // namespace mssql_cdc::sim_server::tsql
