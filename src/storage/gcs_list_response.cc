#include "storage/gcs_list_response.h"

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/time.h"

namespace mssql_cdc::storage {
namespace {

std::string Text(const nlohmann::json& object, const char* name) {
  auto found = object.find(name);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

}  // namespace

ListPage ParseGcsObjectList(const std::string& body, const std::string& prefix) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || Text(json, "kind") != "storage#objects") {
    throw SourceError("the store answered a listing with something other than storage#objects");
  }
  ListPage page;
  auto below = [&](const std::string& name) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::string();
    return name.substr(prefix.size());
  };
  if (auto items = json.find("items"); items != json.end() && items->is_array()) {
    for (const auto& item : *items) {
      FileInfo info;
      info.name = below(Text(item, "name"));
      if (info.name.empty() || info.name.back() == '/') continue;
      info.size = std::stoll("0" + Text(item, "size"));  // the JSON API sends it as text
      info.modification_time_ms = ParseUtcMillis(Text(item, "updated"));
      page.entries.push_back(std::move(info));
    }
  }
  if (auto prefixes = json.find("prefixes"); prefixes != json.end() && prefixes->is_array()) {
    for (const auto& directory : *prefixes) {
      if (!directory.is_string()) continue;
      FileInfo info;
      info.name = below(directory.get<std::string>());
      if (!info.name.empty() && info.name.back() == '/') info.name.pop_back();
      if (info.name.empty()) continue;
      info.is_directory = true;
      page.entries.push_back(std::move(info));
    }
  }
  page.next = Text(json, "nextPageToken");
  return page;
}

}  // namespace mssql_cdc::storage
