// A SQL Server column type as sys.columns / sp_cdc_get_captured_columns describe it, and its
// Arrow type under the engine's mapping (the output schema contract: docs/reference/tables.md).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

namespace arrow {
class DataType;
}

namespace mssql_cdc {

// The base types of SQL Server the engine knows, one each, so that a rule about a type is a
// switch over them rather than a comparison of names; kUnknown for any other name.
enum class SqlTypeKind {
  kBit, kTinyInt, kSmallInt, kInt, kBigInt,
  kReal, kFloat, kDecimal, kNumeric, kMoney, kSmallMoney,
  kDate, kTime, kDateTime, kDateTime2, kSmallDateTime, kDateTimeOffset,
  kChar, kVarChar, kNChar, kNVarChar, kText, kNText, kXml,
  kBinary, kVarBinary, kImage, kTimestamp, kRowVersion, kUniqueIdentifier,
  kSqlVariant, kGeography, kGeometry, kHierarchyId,
  kUnknown,
};

// The kind of a lower-case base type name ("nvarchar"); kUnknown when it names none.
SqlTypeKind SqlTypeKindOf(std::string_view name);

// The kinds grouped by how their values are written: whole numbers (bit to bigint), binary
// floating point (real, float), exact decimals (decimal, numeric, money, smallmoney), dates and
// times, character text (xml included), bytes (binary, varbinary, image), the row version
// (timestamp, rowversion), uniqueidentifier, and the kinds the engine has no type for.
enum class SqlTypeFamily {
  kInteger, kFloatingPoint, kDecimal, kTemporal, kCharacter, kBinary, kRowVersion,
  kUniqueIdentifier, kUnsupported,
};
SqlTypeFamily SqlTypeFamilyOf(SqlTypeKind kind);

struct SqlType {
  std::string name;     // lower-case base type name: "int", "nvarchar", "decimal", ...
  int max_length = 0;   // characters (char types) or bytes (binary types); -1 for (max)
  int precision = 0;    // decimal/numeric precision
  int scale = 0;        // decimal/numeric scale; fractional-second digits of time types

  // Parses a declaration: "int", "NVARCHAR(50)", "nvarchar(max)", "decimal(18, 2)",
  // "datetime2(7)", "varbinary(MAX)". Fills SQL Server's defaults (decimal(18,0),
  // datetime2(7), char(1), ...). Throws ConfigError naming the declaration when malformed.
  static SqlType Parse(std::string_view declaration);

  // The declaration text, e.g. "nvarchar(max)", "decimal(18,2)", "datetime2(7)".
  std::string ToString() const;
  bool IsMax() const { return max_length == -1; }
  SqlTypeKind kind() const { return SqlTypeKindOf(name); }
  SqlTypeFamily family() const { return SqlTypeFamilyOf(kind()); }
  bool IsOneOf(std::initializer_list<SqlTypeKind> kinds) const;

  friend bool operator==(const SqlType&, const SqlType&) = default;
};

// The Arrow type of a column of `type` in the output schema. Throws UnsupportedTypeError
// naming `column` and the type for types with no mapping (sql_variant, geography, geometry,
// hierarchyid, unknown names).
std::shared_ptr<arrow::DataType> ArrowTypeFor(const SqlType& type, std::string_view column);

// Whether a key column of `type` can bound a snapshot range: its values come back from the
// server as text that CAST reads back to the same value, and compare as the key orders. Not
// float and real (rounding), nor the (max), large-object, xml and CLR types.
bool CanBoundRange(const SqlType& type);

// Whether `type` is an integer type (tinyint, smallint, int, bigint): a key a grid of slices
// or uniform ranges can cut.
bool IsIntegerKeyType(const SqlType& type);
// Whether a grid of key slices can count a key of `type`: an integer, or a date as its day
// number since 1970-01-01 (reconcile's Tier 1).
bool IsSliceableKeyType(const SqlType& type);

// The Spark SQL type name of the same mapping ("INT", "DECIMAL(18,2)", "TIMESTAMP_NTZ").
std::string SparkTypeFor(const SqlType& type, std::string_view column);
// The Spark SQL type name of an Arrow type of the mapping (and TINYINT for int8).
std::string SparkTypeName(const arrow::DataType& type);

}  // namespace mssql_cdc
