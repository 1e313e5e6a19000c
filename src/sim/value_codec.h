// Checks a caller's value against a column's SQL Server type and turns it into the stored
// form of sim/storage.h, as SQL Server would when it converts a literal: integers must fit
// their type, strings their declared length, decimals their precision (extra fraction digits
// round half away from zero), dates and times their ranges and formats (fractional seconds
// round to the type's precision; datetime to 1/300 s; smalldatetime to the minute), char and
// binary pad to their length. Every error is a ConfigError naming the column.
#pragma once

#include <string_view>

#include "core/sql_type.h"
#include "sim/value.h"

namespace mssql_cdc::sim {

// Throws ConfigError naming the column when the simulator cannot hold values of `type`
// (sql_variant, geography, geometry, hierarchyid, unknown type names).
void CheckSimulatedType(const SqlType& type, std::string_view column);

// The stored form of `value` in a column of `type`. NULL stays NULL (nullability is the
// caller's concern). Accepted forms: integers for bit and integer types (bit takes 0/1, a
// non-zero integer storing 1); numbers for real and float; a number or a decimal string
// ("-12.5") for decimal, numeric, money and smallmoney; strings for character, date/time and
// uniqueidentifier types; bytes or a "0x..." hex string for binary types.
Value EncodeValue(const SqlType& type, const Value& value, std::string_view column);

// The stored form of CAST(`text` AS type) (CONVERT(type, `text`, 1) for binary types), as
// SQL Server converts the key bounds the engine sends as text: an integer's digits, a decimal,
// ISO 8601 date and time with ' ' or 'T', "0x..." hex. Throws ConfigError naming the column
// when SQL Server's conversion would fail.
Value EncodeCastText(const SqlType& type, const std::string& text, std::string_view column);

// The SQLite affinity of the stored form: "INTEGER", "REAL", "TEXT" or "BLOB".
std::string_view StorageAffinity(const SqlType& type);

// text, ntext, image: never captured in delete (1) and update-before (3) rows.
bool IsLegacyLob(const SqlType& type);
// text, ntext, image, and the (max) types: captured in update-before rows only when changed.
bool IsLob(const SqlType& type);
// timestamp/rowversion: set by the database on every insert and update, never by a caller.
bool IsRowversion(const SqlType& type);

}  // namespace mssql_cdc::sim
