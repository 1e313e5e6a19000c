#include "sim/storage.h"

namespace mssql_cdc::sim {

std::string QuoteIdent(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string SourceTableStorageName(std::string_view schema, std::string_view table) {
  return std::string(schema) + "." + std::string(table);
}

std::string ChangeTableStorageName(std::string_view capture_instance) {
  return "cdc." + std::string(capture_instance) + "_CT";
}

std::string ChangeTableIndexName(std::string_view capture_instance) {
  return ChangeTableStorageName(capture_instance) + "_order";
}

}  // namespace mssql_cdc::sim
