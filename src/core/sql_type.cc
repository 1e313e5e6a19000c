#include "core/sql_type.h"

#include <arrow/type.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/errors.h"
#include "core/ascii.h"

namespace mssql_cdc {
namespace {

bool ParseInt(std::string_view s, int* out) {
  s = TrimAsciiSpace(s);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

enum class Kind { kFixed, kLength, kDecimal, kFraction, kUnknown };

Kind KindOf(const std::string& name) {
  static const char* kFixed[] = {"bit",   "tinyint", "smallint",   "int",   "bigint",
                                 "real",  "money",   "smallmoney", "date",  "datetime",
                                 "smalldatetime",    "text",       "ntext", "image",
                                 "xml",   "uniqueidentifier",      "timestamp", "rowversion",
                                 "sql_variant",      "geography",  "geometry", "hierarchyid"};
  for (const char* f : kFixed) {
    if (name == f) return Kind::kFixed;
  }
  if (name == "char" || name == "varchar" || name == "nchar" || name == "nvarchar" ||
      name == "binary" || name == "varbinary") {
    return Kind::kLength;
  }
  if (name == "decimal" || name == "numeric") return Kind::kDecimal;
  if (name == "float") return Kind::kLength;  // float(n): n is the mantissa bits
  if (name == "time" || name == "datetime2" || name == "datetimeoffset") return Kind::kFraction;
  return Kind::kUnknown;
}

[[noreturn]] void Malformed(std::string_view decl, std::string_view why) {
  throw ConfigError("malformed SQL Server type '" + std::string(decl) + "': " + std::string(why));
}

}  // namespace

SqlType SqlType::Parse(std::string_view declaration) {
  std::string_view decl = TrimAsciiSpace(declaration);
  SqlType t;
  auto open = decl.find('(');
  std::string_view args;
  if (open == std::string_view::npos) {
    t.name = AsciiLower(TrimAsciiSpace(decl));
  } else {
    if (decl.back() != ')') Malformed(declaration, "missing ')'");
    t.name = AsciiLower(TrimAsciiSpace(decl.substr(0, open)));
    args = TrimAsciiSpace(decl.substr(open + 1, decl.size() - open - 2));
  }
  if (t.name.empty()) Malformed(declaration, "no type name");
  const Kind kind = KindOf(t.name);
  // Defaults SQL Server applies when the declaration gives none.
  if (t.name == "char" || t.name == "nchar" || t.name == "binary" || t.name == "varchar" ||
      t.name == "nvarchar" || t.name == "varbinary") {
    t.max_length = 1;
  }
  if (kind == Kind::kDecimal) t.precision = 18;
  if (kind == Kind::kFraction) t.scale = 7;
  if (t.name == "float") t.max_length = 53;
  if (t.name == "money") t.precision = 19, t.scale = 4;
  if (t.name == "smallmoney") t.precision = 10, t.scale = 4;
  if (t.name == "timestamp" || t.name == "rowversion") t.max_length = 8;
  if (t.name == "datetime") t.scale = 3;
  if (args.empty()) {
    if (open != std::string_view::npos) Malformed(declaration, "empty '()'");
    return t;
  }
  switch (kind) {
    case Kind::kLength:
      if (AsciiLower(args) == "max" && t.name != "float" && t.name != "char" && t.name != "nchar" &&
          t.name != "binary") {
        t.max_length = -1;
      } else if (!ParseInt(args, &t.max_length) || t.max_length < 1 || t.max_length > 8000) {
        Malformed(declaration, "the length must be 1 to 8000, or max for var types");
      }
      if (t.name == "float") {
        if (t.max_length > 53) Malformed(declaration, "float(n) takes n from 1 to 53");
      }
      break;
    case Kind::kDecimal: {
      auto comma = args.find(',');
      if (!ParseInt(args.substr(0, comma), &t.precision) || t.precision < 1 || t.precision > 38) {
        Malformed(declaration, "the precision must be 1 to 38");
      }
      t.scale = 0;
      if (comma != std::string_view::npos &&
          (!ParseInt(args.substr(comma + 1), &t.scale) || t.scale < 0 || t.scale > t.precision)) {
        Malformed(declaration, "the scale must be 0 to the precision");
      }
      break;
    }
    case Kind::kFraction:
      if (!ParseInt(args, &t.scale) || t.scale < 0 || t.scale > 7) {
        Malformed(declaration, "fractional-second precision must be 0 to 7");
      }
      break;
    case Kind::kFixed:
      Malformed(declaration, "this type takes no arguments");
    case Kind::kUnknown:
      break;  // kept as written; ArrowTypeFor refuses it by name
  }
  return t;
}

std::string SqlType::ToString() const {
  switch (KindOf(name)) {
    case Kind::kLength:
      if (name == "float") return max_length == 53 ? name : name + "(" + std::to_string(max_length) + ")";
      return name + "(" + (max_length == -1 ? std::string("max") : std::to_string(max_length)) + ")";
    case Kind::kDecimal:
      return name + "(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case Kind::kFraction:
      return name + "(" + std::to_string(scale) + ")";
    default:
      return name;
  }
}

std::shared_ptr<arrow::DataType> ArrowTypeFor(const SqlType& t, std::string_view column) {
  const std::string& n = t.name;
  if (n == "bit") return arrow::boolean();
  if (n == "tinyint" || n == "smallint") return arrow::int16();
  if (n == "int") return arrow::int32();
  if (n == "bigint") return arrow::int64();
  if (n == "real") return arrow::float32();
  if (n == "float") return t.max_length <= 24 ? arrow::float32() : arrow::float64();
  if (n == "decimal" || n == "numeric") return arrow::decimal128(t.precision, t.scale);
  if (n == "money") return arrow::decimal128(19, 4);
  if (n == "smallmoney") return arrow::decimal128(10, 4);
  if (n == "date") return arrow::date32();
  if (n == "datetime" || n == "datetime2" || n == "smalldatetime") {
    return arrow::timestamp(arrow::TimeUnit::MICRO);
  }
  if (n == "datetimeoffset") return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
  if (n == "time" || n == "char" || n == "varchar" || n == "nchar" || n == "nvarchar" ||
      n == "text" || n == "ntext" || n == "xml" || n == "uniqueidentifier") {
    return arrow::utf8();
  }
  if (n == "binary" || n == "varbinary" || n == "image" || n == "timestamp" ||
      n == "rowversion") {
    return arrow::binary();
  }
  throw UnsupportedTypeError(
      "column '" + std::string(column) + "' has SQL Server type " + t.ToString() +
      ", which has no Arrow/Spark type: leave the column out with the 'columns' option, or "
      "capture a computed column that converts it (e.g. CAST(... AS nvarchar(max)))");
}

std::string SparkTypeFor(const SqlType& t, std::string_view column) {
  return SparkTypeName(*ArrowTypeFor(t, column));
}

std::string SparkTypeName(const arrow::DataType& type_ref) {
  const arrow::DataType* type = &type_ref;
  switch (type->id()) {
    case arrow::Type::INT8: return "TINYINT";
    case arrow::Type::BOOL: return "BOOLEAN";
    case arrow::Type::INT16: return "SMALLINT";
    case arrow::Type::INT32: return "INT";
    case arrow::Type::INT64: return "BIGINT";
    case arrow::Type::FLOAT: return "FLOAT";
    case arrow::Type::DOUBLE: return "DOUBLE";
    case arrow::Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Type&>(*type);
      return "DECIMAL(" + std::to_string(d.precision()) + "," + std::to_string(d.scale()) + ")";
    }
    case arrow::Type::DATE32: return "DATE";
    case arrow::Type::TIMESTAMP:
      return static_cast<const arrow::TimestampType&>(*type).timezone().empty() ? "TIMESTAMP_NTZ"
                                                                                : "TIMESTAMP";
    case arrow::Type::STRING: return "STRING";
    case arrow::Type::BINARY: return "BINARY";
    default: throw InternalError("no Spark type for Arrow type " + type->ToString());
  }
}

bool CanBoundRange(const SqlType& type) {
  static constexpr std::string_view kRangeTypes[] = {
      "bit", "tinyint", "smallint", "int", "bigint", "decimal", "numeric", "money",
      "smallmoney", "date", "time", "datetime", "datetime2", "smalldatetime", "datetimeoffset",
      "char", "varchar", "nchar", "nvarchar", "binary", "varbinary", "uniqueidentifier"};
  if (type.IsMax()) return false;
  for (std::string_view name : kRangeTypes) {
    if (type.name == name) return true;
  }
  return false;
}

bool IsIntegerKeyType(const SqlType& type) {
  return type.name == "tinyint" || type.name == "smallint" || type.name == "int" ||
         type.name == "bigint";
}

bool IsSliceableKeyType(const SqlType& type) { return IsIntegerKeyType(type) || type.name == "date"; }

}  // namespace mssql_cdc
