#include "sim/value.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace mssql_cdc::sim {
namespace {

std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "0x";
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

}  // namespace

std::string Value::DebugString() const {
  if (is_null()) return "NULL";
  if (is_int()) return std::to_string(as_int());
  if (is_double()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", as_double());
    return buf;
  }
  if (is_string()) return "'" + as_string() + "'";
  return Hex(as_bytes().data);
}

Value Value::FromJson(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Value();
    case nlohmann::json::value_t::boolean:
      return Value(static_cast<std::int64_t>(j.get<bool>() ? 1 : 0));
    case nlohmann::json::value_t::number_integer:
      return Value(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) {
        throw ConfigError("the number " + j.dump() + " is out of the range of bigint");
      }
      return Value(static_cast<std::int64_t>(u));
    }
    case nlohmann::json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::json::value_t::string:
      return Value(j.get<std::string>());
    default:
      throw ConfigError("a column value must be null, a boolean, a number or a string, not " +
                        j.dump());
  }
}

nlohmann::json Value::ToJson() const {
  if (is_null()) return nullptr;
  if (is_int()) return as_int();
  if (is_double()) return as_double();
  if (is_string()) return as_string();
  return Hex(as_bytes().data);
}

}  // namespace mssql_cdc::sim
