#include "sim_server/odbc_column_info.h"

namespace mssql_cdc::sim_server {
namespace {

constexpr std::int64_t kLong = 2147483647;

OdbcColumnInfo Exact(int code, std::int64_t precision, std::int64_t length, int scale, int radix) {
  OdbcColumnInfo info;
  info.data_type = info.sql_data_type = code;
  info.precision = precision;
  info.length = length;
  info.scale = scale;
  info.radix = radix;
  return info;
}

// Character and binary types: size in characters or bytes, octets per character; (max) 0.
OdbcColumnInfo Sized(int code, const SqlType& type, int bytes_per_unit) {
  OdbcColumnInfo info;
  info.data_type = info.sql_data_type = code;
  const std::int64_t units = type.IsMax() ? 0 : type.max_length;
  info.precision = units;
  info.length = info.octet_length = units * bytes_per_unit;
  return info;
}

OdbcColumnInfo Temporal(int code, std::int64_t precision, std::int64_t length, int scale,
                        std::optional<int> datetime_sub, int sql_data_type) {
  OdbcColumnInfo info;
  info.data_type = code;
  info.sql_data_type = sql_data_type;
  info.precision = precision;
  info.length = length;
  info.scale = scale;
  info.datetime_sub = datetime_sub;
  info.ss_data_type = 0;
  return info;
}

}  // namespace

OdbcColumnInfo OdbcColumnInfoOf(const SqlType& type, bool nullable) {
  const std::string& name = type.name;
  OdbcColumnInfo info;
  if (name == "bit") {
    info = Exact(-7, 1, 1, 0, 0);
    info.scale.reset();
    info.radix.reset();
  } else if (name == "tinyint") {
    info = Exact(-6, 3, 1, 0, 10);
  } else if (name == "smallint") {
    info = Exact(5, 5, 2, 0, 10);
  } else if (name == "int") {
    info = Exact(4, 10, 4, 0, 10);
    if (!nullable) info.ss_data_type = 56;
  } else if (name == "bigint") {
    info = Exact(-5, 19, 8, 0, 10);
  } else if (name == "decimal" || name == "numeric") {
    info = Exact(name == "decimal" ? 3 : 2, type.precision, type.precision + 2, type.scale, 10);
  } else if (name == "money") {
    info = Exact(3, 19, 21, 4, 10);
  } else if (name == "smallmoney") {
    info = Exact(3, 10, 12, 4, 10);
  } else if (name == "real" || name == "float") {
    const bool real = name == "real";
    info = Exact(real ? 7 : 6, real ? 24 : 53, real ? 4 : 8, 0, 2);
    info.scale.reset();
  } else if (name == "char") {
    info = Sized(1, type, 1);
  } else if (name == "varchar") {
    info = Sized(12, type, 1);
  } else if (name == "nchar") {
    info = Sized(-8, type, 2);
  } else if (name == "nvarchar") {
    info = Sized(-9, type, 2);
  } else if (name == "text") {
    info.data_type = info.sql_data_type = -1;
    info.precision = info.length = info.octet_length = kLong;
  } else if (name == "ntext") {
    info.data_type = info.sql_data_type = -10;
    info.precision = kLong / 2;
    info.length = info.octet_length = kLong - 1;
  } else if (name == "binary") {
    info = Sized(-2, type, 1);
  } else if (name == "varbinary") {
    info = Sized(-3, type, 1);
  } else if (name == "image") {
    info.data_type = info.sql_data_type = -4;
    info.precision = info.length = info.octet_length = kLong;
  } else if (name == "date") {
    info = Temporal(91, 10, 6, 0, 1, 9);
  } else if (name == "time") {
    info = Temporal(-154, type.scale == 0 ? 8 : 9 + type.scale, 10, type.scale, std::nullopt, -154);
  } else if (name == "datetime") {
    info = Temporal(93, 23, 16, 3, 3, 9);
    info.ss_data_type = nullable ? std::optional<int>(111) : std::nullopt;
  } else if (name == "smalldatetime") {
    info = Temporal(93, 16, 16, 0, 3, 9);
    info.ss_data_type = nullable ? std::optional<int>(111) : std::nullopt;
  } else if (name == "datetime2") {
    info = Temporal(93, type.scale == 0 ? 19 : 20 + type.scale, 16, type.scale, 3, 9);
  } else if (name == "datetimeoffset") {
    info = Temporal(-155, type.scale == 0 ? 26 : 27 + type.scale, 20, type.scale, std::nullopt, -155);
  } else if (name == "uniqueidentifier") {
    info.data_type = info.sql_data_type = -11;
    info.precision = 36;
    info.length = 16;
  } else if (name == "xml") {
    info.data_type = info.sql_data_type = -152;
    info.precision = info.length = info.octet_length = 0;
  } else if (name == "timestamp" || name == "rowversion") {
    info.data_type = info.sql_data_type = -2;
    info.precision = info.length = 8;
  }
  info.type_name = name == "rowversion" ? "timestamp" : name;
  return info;
}

}  // namespace mssql_cdc::sim_server
