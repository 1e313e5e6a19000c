#include "catalog/key_sql.h"

#include "core/table_ref.h"
#include "core/time.h"

namespace mssql_cdc::catalog {

std::string KeyLiteralSql(std::int64_t value, KeyUnit unit) {
  switch (unit) {
    case KeyUnit::kInteger: return "CAST(" + std::to_string(value) + " AS BIGINT)";
    case KeyUnit::kDay: return "DATE " + SqlStringLiteral(FormatDate(value));
    case KeyUnit::kMicros: return "CAST(" + SqlStringLiteral(FormatDateTime(value, 6)) + " AS TIMESTAMP_NTZ)";
  }
  return "";
}

}  // namespace mssql_cdc::catalog
