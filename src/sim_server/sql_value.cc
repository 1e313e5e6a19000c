#include "sim_server/sql_value.h"

#include <charconv>
#include <cmath>

#include "sim_server/server_errors.h"

namespace mssql_cdc::sim_server {

SqlValue SqlValue::FromParam(const tds::ParamValue& param) {
  SqlValue value;
  value.type_name = param.type.name;
  switch (param.kind) {
    case tds::ParamValue::Kind::kNull:
      value.kind = Kind::kNull;
      break;
    case tds::ParamValue::Kind::kInt:
      value.kind = Kind::kInt;
      value.int_value = param.int_value;
      break;
    case tds::ParamValue::Kind::kFloat:
      value.kind = Kind::kFloat;
      value.float_value = param.float_value;
      break;
    case tds::ParamValue::Kind::kText:
      value.kind = Kind::kText;
      value.bytes = param.text;
      break;
    case tds::ParamValue::Kind::kBinary:
      value.kind = Kind::kBinary;
      value.bytes = param.text;
      break;
    case tds::ParamValue::Kind::kOther:
      value.kind = Kind::kOther;
      value.bytes = param.text;
      break;
  }
  return value;
}

std::optional<Lsn> AsLsn(const SqlValue& value) {
  if (value.is_null()) return std::nullopt;
  if (value.kind != SqlValue::Kind::kBinary) {
    throw SqlError(errors::ImplicitConversion(value.type_name, "binary"));
  }
  if (value.bytes.size() > Lsn::kSize) {
    throw SqlError(errors::ConversionFailed("0x...", value.type_name, "binary(10)"));
  }
  std::string padded = value.bytes;
  padded.resize(Lsn::kSize, '\0');
  return Lsn::FromBytes(padded.data(), padded.size());
}

std::optional<std::string> AsText(const SqlValue& value) {
  switch (value.kind) {
    case SqlValue::Kind::kNull:
      return std::nullopt;
    case SqlValue::Kind::kText:
    case SqlValue::Kind::kBinary:
      return value.bytes;
    case SqlValue::Kind::kInt:
      return std::to_string(value.int_value);
    default:
      throw SqlError(errors::ImplicitConversion(value.type_name, "nvarchar"));
  }
}

std::optional<std::int64_t> AsInteger(const SqlValue& value) {
  switch (value.kind) {
    case SqlValue::Kind::kNull:
      return std::nullopt;
    case SqlValue::Kind::kInt:
      return value.int_value;
    case SqlValue::Kind::kFloat:
      return static_cast<std::int64_t>(std::trunc(value.float_value));
    case SqlValue::Kind::kText: {
      std::int64_t n = 0;
      const char* end = value.bytes.data() + value.bytes.size();
      auto [ptr, ec] = std::from_chars(value.bytes.data(), end, n);
      if (ec != std::errc() || ptr != end) {
        throw SqlError(errors::ConversionFailed(value.bytes, value.type_name, "bigint"));
      }
      return n;
    }
    default:
      throw SqlError(errors::ImplicitConversion(value.type_name, "bigint"));
  }
}

}  // namespace mssql_cdc::sim_server
