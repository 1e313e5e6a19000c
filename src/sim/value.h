// A value of a simulated column, as a caller gives it and as SQLite stores it: null, a 64-bit
// integer, a double, a UTF-8 string or raw bytes. Which forms a column accepts, and how they
// are checked and stored, depends on its SQL Server type (sim/value_codec.h).
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <variant>

#include <nlohmann/json_fwd.hpp>

namespace mssql_cdc::sim {

// Raw bytes (binary, varbinary, image), kept apart from text.
struct Bytes {
  std::string data;
  friend bool operator==(const Bytes&, const Bytes&) = default;
};

class Value {
 public:
  Value() = default;  // NULL
  Value(std::nullptr_t) {}
  Value(std::int64_t v) : v_(v) {}
  Value(int v) : v_(static_cast<std::int64_t>(v)) {}
  Value(double v) : v_(v) {}
  Value(std::string v) : v_(std::move(v)) {}
  Value(const char* v) : v_(std::string(v)) {}
  Value(Bytes v) : v_(std::move(v)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_bytes() const { return std::holds_alternative<Bytes>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Bytes& as_bytes() const { return std::get<Bytes>(v_); }

  // "NULL", "42", "1.5", "'text'", "0xABCD": for messages and tests.
  std::string DebugString() const;

  // JSON null, booleans (as 0/1), numbers and strings. Bytes come as strings "0x..." and are
  // decoded by the column's type. Throws ConfigError for arrays and objects.
  static Value FromJson(const nlohmann::json& j);
  // Bytes as "0x" + uppercase hex, the rest as JSON scalars.
  nlohmann::json ToJson() const;

  friend bool operator==(const Value&, const Value&) = default;

 private:
  std::variant<std::monostate, std::int64_t, double, std::string, Bytes> v_;
};

// For GoogleTest messages.
inline void PrintTo(const Value& value, std::ostream* out) { *out << value.DebugString(); }

// Column values by column name (matched case-insensitively, as SQL Server's default
// collation does).
using Row = std::map<std::string, Value>;

}  // namespace mssql_cdc::sim
