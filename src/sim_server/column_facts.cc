#include "sim_server/column_facts.h"

#include <string_view>

namespace mssql_cdc::sim_server {
namespace {

bool IsOneOf(const std::string& name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

ColumnFacts FactsOf(const SqlType& type) {
  const std::string& n = type.name;
  ColumnFacts facts;
  if (IsOneOf(n, {"char", "varchar", "nchar", "nvarchar", "binary", "varbinary"})) {
    facts.character_maximum_length = type.max_length;
  } else if (n == "text" || n == "image") {
    facts.character_maximum_length = 2147483647;
  } else if (n == "ntext") {
    facts.character_maximum_length = 1073741823;
  } else if (n == "xml") {
    facts.character_maximum_length = -1;
  }
  auto exact = [&](int precision, int scale) {
    facts.numeric_precision = precision;
    facts.numeric_precision_radix = 10;
    facts.numeric_scale = scale;
  };
  if (n == "tinyint") exact(3, 0);
  if (n == "smallint") exact(5, 0);
  if (n == "int") exact(10, 0);
  if (n == "bigint") exact(19, 0);
  if (IsOneOf(n, {"decimal", "numeric", "money", "smallmoney"})) exact(type.precision, type.scale);
  if (n == "real" || n == "float") {
    facts.numeric_precision = n == "real" ? 24 : type.max_length;
    facts.numeric_precision_radix = 2;
  }
  if (IsOneOf(n, {"time", "datetime2", "datetimeoffset", "datetime"})) {
    facts.datetime_precision = type.scale;
  } else if (n == "date" || n == "smalldatetime") {
    facts.datetime_precision = 0;
  }
  return facts;
}

}  // namespace mssql_cdc::sim_server
