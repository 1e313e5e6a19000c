#include "source/odbc/catalog_values.h"

#include "core/errors.h"
#include "core/options.h"

namespace mssql_cdc::odbc {

std::vector<std::string> ParseIndexColumnList(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  auto skip_separators = [&] {
    while (i < text.size() && (text[i] == ',' || text[i] == ' ' || text[i] == '\t')) ++i;
  };
  skip_separators();
  while (i < text.size()) {
    std::string name;
    if (text[i] == '[') {
      bool closed = false;
      for (++i; i < text.size(); ++i) {
        if (text[i] == ']') {
          if (i + 1 < text.size() && text[i + 1] == ']') {
            name += ']';
            ++i;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        name += text[i];
      }
      if (!closed) {
        throw SourceError("the server's index_column_list '" + std::string(text) +
                          "' has an unclosed '['");
      }
    } else {
      while (i < text.size() && text[i] != ',') name += text[i++];
      while (!name.empty() && name.back() == ' ') name.pop_back();
    }
    out.push_back(std::move(name));
    skip_separators();
  }
  return out;
}

SqlType SqlTypeFromCatalog(const CatalogType& catalog, std::string_view column) {
  using K = SqlTypeKind;
  const std::string name = AsciiLower(catalog.data_type);
  const K kind = SqlTypeKindOf(name);
  std::string declaration = name;
  if (kind == K::kChar || kind == K::kVarChar || kind == K::kNChar || kind == K::kNVarChar ||
      kind == K::kBinary || kind == K::kVarBinary) {
    if (catalog.character_maximum_length) {
      const std::int64_t length = *catalog.character_maximum_length;
      declaration += "(" + (length == -1 ? std::string("max") : std::to_string(length)) + ")";
    }
  } else if (kind == K::kDecimal || kind == K::kNumeric) {
    declaration += "(" + std::to_string(catalog.numeric_precision.value_or(18)) + "," +
                   std::to_string(catalog.numeric_scale.value_or(0)) + ")";
  } else if (kind == K::kFloat) {
    if (catalog.numeric_precision && *catalog.numeric_precision > 0) {
      declaration += "(" + std::to_string(*catalog.numeric_precision) + ")";
    }
  } else if (kind == K::kTime || kind == K::kDateTime2 || kind == K::kDateTimeOffset) {
    // The catalog gives the fractional digits as datetime_precision, or (some versions)
    // as numeric_scale.
    const auto digits = catalog.datetime_precision ? catalog.datetime_precision : catalog.numeric_scale;
    if (digits) declaration += "(" + std::to_string(*digits) + ")";
  }
  try {
    return SqlType::Parse(declaration);
  } catch (const ConfigError& e) {
    throw SourceError("the server describes column '" + std::string(column) + "' as type " +
                      declaration + ", which is not a SQL Server type this build reads: " +
                      e.what());
  }
}

}  // namespace mssql_cdc::odbc
