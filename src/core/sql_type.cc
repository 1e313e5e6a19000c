#include "core/sql_type.h"

#include <arrow/type.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>

#include "core/errors.h"
#include "core/ascii.h"

namespace mssql_cdc {
namespace {

bool ParseInt(std::string_view s, int* out) {
  s = TrimAsciiSpace(s);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// How a declaration's arguments read: none, a length (or float's mantissa bits), a precision
// and scale, or fractional-second digits.
enum class Arguments { kNone, kLength, kDecimal, kFraction, kUnknown };

Arguments ArgumentsOf(SqlTypeKind kind) {
  switch (kind) {
    case SqlTypeKind::kChar: case SqlTypeKind::kVarChar: case SqlTypeKind::kNChar:
    case SqlTypeKind::kNVarChar: case SqlTypeKind::kBinary: case SqlTypeKind::kVarBinary:
    case SqlTypeKind::kFloat:  // float(n): n is the mantissa bits
      return Arguments::kLength;
    case SqlTypeKind::kDecimal: case SqlTypeKind::kNumeric:
      return Arguments::kDecimal;
    case SqlTypeKind::kTime: case SqlTypeKind::kDateTime2: case SqlTypeKind::kDateTimeOffset:
      return Arguments::kFraction;
    case SqlTypeKind::kUnknown:
      return Arguments::kUnknown;
    default:
      return Arguments::kNone;
  }
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
  const SqlTypeKind kind = t.kind();
  const Arguments arguments = ArgumentsOf(kind);
  // Defaults SQL Server applies when the declaration gives none.
  switch (kind) {
    case SqlTypeKind::kFloat: t.max_length = 53; break;
    case SqlTypeKind::kMoney: t.precision = 19, t.scale = 4; break;
    case SqlTypeKind::kSmallMoney: t.precision = 10, t.scale = 4; break;
    case SqlTypeKind::kTimestamp: case SqlTypeKind::kRowVersion: t.max_length = 8; break;
    case SqlTypeKind::kDateTime: t.scale = 3; break;
    default:
      if (arguments == Arguments::kLength) t.max_length = 1;
      if (arguments == Arguments::kDecimal) t.precision = 18;
      if (arguments == Arguments::kFraction) t.scale = 7;
  }
  if (args.empty()) {
    if (open != std::string_view::npos) Malformed(declaration, "empty '()'");
    return t;
  }
  switch (arguments) {
    case Arguments::kLength: {
      const bool fixed = kind == SqlTypeKind::kFloat || kind == SqlTypeKind::kChar ||
                         kind == SqlTypeKind::kNChar || kind == SqlTypeKind::kBinary;
      if (AsciiLower(args) == "max" && !fixed) {
        t.max_length = -1;
      } else if (!ParseInt(args, &t.max_length) || t.max_length < 1 || t.max_length > 8000) {
        Malformed(declaration, "the length must be 1 to 8000, or max for var types");
      }
      if (kind == SqlTypeKind::kFloat && t.max_length > 53) {
        Malformed(declaration, "float(n) takes n from 1 to 53");
      }
      break;
    }
    case Arguments::kDecimal: {
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
    case Arguments::kFraction:
      if (!ParseInt(args, &t.scale) || t.scale < 0 || t.scale > 7) {
        Malformed(declaration, "fractional-second precision must be 0 to 7");
      }
      break;
    case Arguments::kNone:
      Malformed(declaration, "this type takes no arguments");
    case Arguments::kUnknown:
      break;  // kept as written; ArrowTypeFor refuses it by name
  }
  return t;
}

std::string SqlType::ToString() const {
  switch (ArgumentsOf(kind())) {
    case Arguments::kLength:
      if (kind() == SqlTypeKind::kFloat) {
        return max_length == 53 ? name : name + "(" + std::to_string(max_length) + ")";
      }
      return name + "(" + (max_length == -1 ? std::string("max") : std::to_string(max_length)) + ")";
    case Arguments::kDecimal:
      return name + "(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case Arguments::kFraction:
      return name + "(" + std::to_string(scale) + ")";
    default:
      return name;
  }
}

std::shared_ptr<arrow::DataType> ArrowTypeFor(const SqlType& t, std::string_view column) {
  switch (t.kind()) {
    case SqlTypeKind::kBit: return arrow::boolean();
    case SqlTypeKind::kTinyInt: case SqlTypeKind::kSmallInt: return arrow::int16();
    case SqlTypeKind::kInt: return arrow::int32();
    case SqlTypeKind::kBigInt: return arrow::int64();
    case SqlTypeKind::kReal: return arrow::float32();
    case SqlTypeKind::kFloat: return t.max_length <= 24 ? arrow::float32() : arrow::float64();
    case SqlTypeKind::kDecimal: case SqlTypeKind::kNumeric:
      return arrow::decimal128(t.precision, t.scale);
    case SqlTypeKind::kMoney: return arrow::decimal128(19, 4);
    case SqlTypeKind::kSmallMoney: return arrow::decimal128(10, 4);
    case SqlTypeKind::kDate: return arrow::date32();
    case SqlTypeKind::kDateTime: case SqlTypeKind::kDateTime2: case SqlTypeKind::kSmallDateTime:
      return arrow::timestamp(arrow::TimeUnit::MICRO);
    case SqlTypeKind::kDateTimeOffset: return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case SqlTypeKind::kTime: case SqlTypeKind::kChar: case SqlTypeKind::kVarChar:
    case SqlTypeKind::kNChar: case SqlTypeKind::kNVarChar: case SqlTypeKind::kText:
    case SqlTypeKind::kNText: case SqlTypeKind::kXml: case SqlTypeKind::kUniqueIdentifier:
      return arrow::utf8();
    case SqlTypeKind::kBinary: case SqlTypeKind::kVarBinary: case SqlTypeKind::kImage:
    case SqlTypeKind::kTimestamp: case SqlTypeKind::kRowVersion:
      return arrow::binary();
    case SqlTypeKind::kSqlVariant: case SqlTypeKind::kGeography: case SqlTypeKind::kGeometry:
    case SqlTypeKind::kHierarchyId: case SqlTypeKind::kUnknown:
      break;
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

SqlTypeFamily SqlTypeFamilyOf(SqlTypeKind kind) {
  using K = SqlTypeKind;
  switch (kind) {
    case K::kBit: case K::kTinyInt: case K::kSmallInt: case K::kInt: case K::kBigInt:
      return SqlTypeFamily::kInteger;
    case K::kReal: case K::kFloat:
      return SqlTypeFamily::kFloatingPoint;
    case K::kDecimal: case K::kNumeric: case K::kMoney: case K::kSmallMoney:
      return SqlTypeFamily::kDecimal;
    case K::kDate: case K::kTime: case K::kDateTime: case K::kDateTime2: case K::kSmallDateTime:
    case K::kDateTimeOffset:
      return SqlTypeFamily::kTemporal;
    case K::kChar: case K::kVarChar: case K::kNChar: case K::kNVarChar: case K::kText:
    case K::kNText: case K::kXml:
      return SqlTypeFamily::kCharacter;
    case K::kBinary: case K::kVarBinary: case K::kImage:
      return SqlTypeFamily::kBinary;
    case K::kTimestamp: case K::kRowVersion:
      return SqlTypeFamily::kRowVersion;
    case K::kUniqueIdentifier:
      return SqlTypeFamily::kUniqueIdentifier;
    case K::kSqlVariant: case K::kGeography: case K::kGeometry: case K::kHierarchyId:
    case K::kUnknown:
      return SqlTypeFamily::kUnsupported;
  }
  return SqlTypeFamily::kUnsupported;
}

bool SqlType::IsOneOf(std::initializer_list<SqlTypeKind> kinds) const {
  const SqlTypeKind mine = kind();
  return std::find(kinds.begin(), kinds.end(), mine) != kinds.end();
}

bool CanBoundRange(const SqlType& type) {
  if (type.IsMax()) return false;
  switch (type.kind()) {
    case SqlTypeKind::kBit: case SqlTypeKind::kTinyInt: case SqlTypeKind::kSmallInt:
    case SqlTypeKind::kInt: case SqlTypeKind::kBigInt: case SqlTypeKind::kDecimal:
    case SqlTypeKind::kNumeric: case SqlTypeKind::kMoney: case SqlTypeKind::kSmallMoney:
    case SqlTypeKind::kDate: case SqlTypeKind::kTime: case SqlTypeKind::kDateTime:
    case SqlTypeKind::kDateTime2: case SqlTypeKind::kSmallDateTime:
    case SqlTypeKind::kDateTimeOffset: case SqlTypeKind::kChar: case SqlTypeKind::kVarChar:
    case SqlTypeKind::kNChar: case SqlTypeKind::kNVarChar: case SqlTypeKind::kBinary:
    case SqlTypeKind::kVarBinary: case SqlTypeKind::kUniqueIdentifier:
      return true;
    case SqlTypeKind::kReal: case SqlTypeKind::kFloat:  // rounding
    case SqlTypeKind::kText: case SqlTypeKind::kNText: case SqlTypeKind::kXml:
    case SqlTypeKind::kImage: case SqlTypeKind::kTimestamp: case SqlTypeKind::kRowVersion:
    case SqlTypeKind::kSqlVariant: case SqlTypeKind::kGeography: case SqlTypeKind::kGeometry:
    case SqlTypeKind::kHierarchyId: case SqlTypeKind::kUnknown:
      return false;
  }
  return false;
}

bool IsIntegerKeyType(const SqlType& type) {
  switch (type.kind()) {
    case SqlTypeKind::kTinyInt: case SqlTypeKind::kSmallInt: case SqlTypeKind::kInt:
    case SqlTypeKind::kBigInt:
      return true;
    default:
      return false;
  }
}

bool IsSliceableKeyType(const SqlType& type) {
  return IsIntegerKeyType(type) || type.kind() == SqlTypeKind::kDate;
}

SqlTypeKind SqlTypeKindOf(std::string_view name) {
  static const std::unordered_map<std::string_view, SqlTypeKind> kKinds = {
      {"bit", SqlTypeKind::kBit}, {"tinyint", SqlTypeKind::kTinyInt},
      {"smallint", SqlTypeKind::kSmallInt}, {"int", SqlTypeKind::kInt},
      {"bigint", SqlTypeKind::kBigInt}, {"real", SqlTypeKind::kReal},
      {"float", SqlTypeKind::kFloat}, {"decimal", SqlTypeKind::kDecimal},
      {"numeric", SqlTypeKind::kNumeric}, {"money", SqlTypeKind::kMoney},
      {"smallmoney", SqlTypeKind::kSmallMoney}, {"date", SqlTypeKind::kDate},
      {"time", SqlTypeKind::kTime}, {"datetime", SqlTypeKind::kDateTime},
      {"datetime2", SqlTypeKind::kDateTime2}, {"smalldatetime", SqlTypeKind::kSmallDateTime},
      {"datetimeoffset", SqlTypeKind::kDateTimeOffset}, {"char", SqlTypeKind::kChar},
      {"varchar", SqlTypeKind::kVarChar}, {"nchar", SqlTypeKind::kNChar},
      {"nvarchar", SqlTypeKind::kNVarChar}, {"text", SqlTypeKind::kText},
      {"ntext", SqlTypeKind::kNText}, {"xml", SqlTypeKind::kXml},
      {"binary", SqlTypeKind::kBinary}, {"varbinary", SqlTypeKind::kVarBinary},
      {"image", SqlTypeKind::kImage}, {"timestamp", SqlTypeKind::kTimestamp},
      {"rowversion", SqlTypeKind::kRowVersion},
      {"uniqueidentifier", SqlTypeKind::kUniqueIdentifier},
      {"sql_variant", SqlTypeKind::kSqlVariant}, {"geography", SqlTypeKind::kGeography},
      {"geometry", SqlTypeKind::kGeometry}, {"hierarchyid", SqlTypeKind::kHierarchyId},
  };
  auto it = kKinds.find(name);
  return it == kKinds.end() ? SqlTypeKind::kUnknown : it->second;
}

}  // namespace mssql_cdc
