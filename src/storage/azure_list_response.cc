#include "storage/azure_list_response.h"

#include <ctime>

#include "core/errors.h"
#include "storage/xml_text.h"

namespace mssql_cdc::storage {
namespace {

// "Sat, 05 Dec 2026 15:14:40 GMT" as milliseconds since the epoch; 0 when it does not read.
std::int64_t EpochMillis(const std::string& text) {
  std::tm utc{};
  if (strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &utc) == nullptr) return 0;
  return static_cast<std::int64_t>(timegm(&utc)) * 1000;
}

// The part of `name` after `prefix`, or empty when it is not below it.
std::string Below(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return "";
  return name.substr(prefix.size());
}

}  // namespace

ListPage ParseListBlobs(const std::string& body, const std::string& prefix) {
  if (body.find("<EnumerationResults") == std::string::npos) {
    throw SourceError("the store answered a listing with something other than an "
                      "EnumerationResults");
  }
  ListPage page;
  for (const auto& blob : XmlElements(body, "Blob")) {
    FileInfo info;
    info.name = Below(XmlText(blob, "Name"), prefix);
    if (info.name.empty() || info.name.back() == '/') continue;
    info.size = std::stoll("0" + XmlText(blob, "Content-Length"));
    info.modification_time_ms = EpochMillis(XmlText(blob, "Last-Modified"));
    page.entries.push_back(std::move(info));
  }
  for (const auto& directory : XmlElements(body, "BlobPrefix")) {
    FileInfo info;
    info.name = Below(XmlText(directory, "Name"), prefix);
    if (!info.name.empty() && info.name.back() == '/') info.name.pop_back();
    if (info.name.empty()) continue;
    info.is_directory = true;
    page.entries.push_back(std::move(info));
  }
  page.next = XmlText(body, "NextMarker");
  return page;
}

}  // namespace mssql_cdc::storage
