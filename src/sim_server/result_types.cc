#include "sim_server/result_types.h"

namespace mssql_cdc::sim_server {

namespace types {
namespace {

SqlType Parsed(const char* declaration) { return SqlType::Parse(declaration); }

}  // namespace

const SqlType& Sysname() {
  static const SqlType type = Parsed("nvarchar(128)");
  return type;
}
const SqlType& Binary10() {
  static const SqlType type = Parsed("binary(10)");
  return type;
}
const SqlType& Varbinary128() {
  static const SqlType type = Parsed("varbinary(128)");
  return type;
}
const SqlType& Bit() {
  static const SqlType type = Parsed("bit");
  return type;
}
const SqlType& Tinyint() {
  static const SqlType type = Parsed("tinyint");
  return type;
}
const SqlType& Smallint() {
  static const SqlType type = Parsed("smallint");
  return type;
}
const SqlType& Int() {
  static const SqlType type = Parsed("int");
  return type;
}
const SqlType& Decimal38() {
  static const SqlType type = Parsed("decimal(38,0)");
  return type;
}
const SqlType& Bigint() {
  static const SqlType type = Parsed("bigint");
  return type;
}
const SqlType& Datetime() {
  static const SqlType type = Parsed("datetime");
  return type;
}
const SqlType& NvarcharMax() {
  static const SqlType type = Parsed("nvarchar(max)");
  return type;
}
SqlType Nvarchar(int length) { return Parsed(("nvarchar(" + std::to_string(length) + ")").c_str()); }
const SqlType& LsnText() {
  static const SqlType type = Parsed("varchar(22)");
  return type;
}
const SqlType& IsoTimeText() {
  static const SqlType type = Parsed("varchar(23)");
  return type;
}
const SqlType& Datetime2_3() {
  static const SqlType type = Parsed("datetime2(3)");
  return type;
}

}  // namespace types

tds::ResultColumn Column(std::string name, const SqlType& type, bool nullable) {
  return tds::ResultColumn{std::move(name), type, nullable};
}

}  // namespace mssql_cdc::sim_server
