#include "sim_server/object_lookup.h"

#include "sim_server/sql_tokens.h"

namespace mssql_cdc::sim_server {
namespace {

constexpr std::string_view kChangeTableSuffix = "_CT";

}  // namespace

std::optional<sim::CaptureInstance> FindChangeTable(sim::Catalog& catalog,
                                                    std::string_view change_table) {
  if (change_table.size() <= kChangeTableSuffix.size() ||
      !EqualsIgnoringCase(change_table.substr(change_table.size() - kChangeTableSuffix.size()),
                          kChangeTableSuffix)) {
    return std::nullopt;
  }
  return FindCaptureInstance(catalog,
                             change_table.substr(0, change_table.size() - kChangeTableSuffix.size()));
}

std::optional<sim::CaptureInstance> FindCaptureInstance(sim::Catalog& catalog,
                                                        std::string_view name) {
  if (name.empty()) return std::nullopt;
  return catalog.FindInstance(name);
}

std::optional<sim::TableInfo> FindSourceTable(sim::Catalog& catalog, std::string_view schema,
                                              std::string_view table) {
  if (schema.empty() || table.empty()) return std::nullopt;
  return catalog.FindTable(sim::TableName{std::string(schema), std::string(table)});
}

std::optional<sim::TableName> ParseObjectName(std::string_view text) {
  TokenizeResult parsed = Tokenize(text);
  const auto& tokens = parsed.tokens;
  if (parsed.unclosed) return std::nullopt;
  if (tokens.size() == 1 && tokens[0].IsName()) return sim::TableName{"dbo", tokens[0].text};
  if (tokens.size() == 3 && tokens[0].IsName() && tokens[1].IsPunct(".") && tokens[2].IsName()) {
    return sim::TableName{tokens[0].text, tokens[2].text};
  }
  return std::nullopt;
}

bool ObjectExists(sim::Catalog& catalog, std::string_view object) {
  const auto dot = object.find('.');
  const std::string_view schema = dot == std::string_view::npos ? "dbo" : object.substr(0, dot);
  const std::string_view name = dot == std::string_view::npos ? object : object.substr(dot + 1);
  if (EqualsIgnoringCase(schema, "sys") || EqualsIgnoringCase(schema, "INFORMATION_SCHEMA")) {
    return true;
  }
  if (EqualsIgnoringCase(schema, "cdc")) {
    for (std::string_view table : {"lsn_time_mapping", "change_tables", "captured_columns",
                                   "index_columns", "ddl_history"}) {
      if (EqualsIgnoringCase(name, table)) return true;
    }
    for (std::string_view function : {"fn_cdc_get_all_changes_", "fn_cdc_get_net_changes_"}) {
      if (name.size() > function.size() &&
          EqualsIgnoringCase(name.substr(0, function.size()), function)) {
        return FindCaptureInstance(catalog, name.substr(function.size())).has_value();
      }
    }
    return FindChangeTable(catalog, name).has_value();
  }
  return FindSourceTable(catalog, schema, name).has_value();
}

}  // namespace mssql_cdc::sim_server
