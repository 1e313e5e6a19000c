#include "sim_server/column_facts.h"

namespace mssql_cdc::sim_server {

ColumnFacts FactsOf(const SqlType& type) {
  using K = SqlTypeKind;
  const K kind = type.kind();
  ColumnFacts facts;
  if (type.IsOneOf({K::kChar, K::kVarChar, K::kNChar, K::kNVarChar, K::kBinary, K::kVarBinary})) {
    facts.character_maximum_length = type.max_length;
  } else if (kind == K::kText || kind == K::kImage) {
    facts.character_maximum_length = 2147483647;
  } else if (kind == K::kNText) {
    facts.character_maximum_length = 1073741823;
  } else if (kind == K::kXml) {
    facts.character_maximum_length = -1;
  }
  auto exact = [&](int precision, int scale) {
    facts.numeric_precision = precision;
    facts.numeric_precision_radix = 10;
    facts.numeric_scale = scale;
  };
  if (kind == K::kTinyInt) exact(3, 0);
  if (kind == K::kSmallInt) exact(5, 0);
  if (kind == K::kInt) exact(10, 0);
  if (kind == K::kBigInt) exact(19, 0);
  if (type.family() == SqlTypeFamily::kDecimal) exact(type.precision, type.scale);
  if (kind == K::kReal || kind == K::kFloat) {
    facts.numeric_precision = kind == K::kReal ? 24 : type.max_length;
    facts.numeric_precision_radix = 2;
  }
  if (type.IsOneOf({K::kTime, K::kDateTime2, K::kDateTimeOffset,
                    K::kDateTime})) {
    facts.datetime_precision = type.scale;
  } else if (kind == K::kDate || kind == K::kSmallDateTime) {
    facts.datetime_precision = 0;
  }
  return facts;
}

}  // namespace mssql_cdc::sim_server
