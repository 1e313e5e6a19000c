#include "storage/s3_list_response.h"

#include "core/errors.h"
#include "core/time.h"
#include "storage/xml_text.h"

namespace mssql_cdc::storage {

ListPage ParseListObjectsV2(const std::string& body, const std::string& prefix) {
  if (body.find("<ListBucketResult") == std::string::npos) {
    throw SourceError("the store answered a listing with something other than a "
                      "ListBucketResult");
  }
  ListPage page;
  for (const auto& contents : XmlElements(body, "Contents")) {
    const std::string key = XmlText(contents, "Key");
    if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) continue;
    FileInfo info;
    info.name = key.substr(prefix.size());
    if (info.name.back() == '/') continue;  // a marker of a directory below
    info.size = std::stoll("0" + XmlText(contents, "Size"));
    info.modification_time_ms = ParseUtcMillis(XmlText(contents, "LastModified"));
    page.entries.push_back(std::move(info));
  }
  for (const auto& common : XmlElements(body, "CommonPrefixes")) {
    std::string name = XmlText(common, "Prefix");
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    name = name.substr(prefix.size());
    if (!name.empty() && name.back() == '/') name.pop_back();
    FileInfo info;
    info.name = std::move(name);
    info.is_directory = true;
    page.entries.push_back(std::move(info));
  }
  if (XmlText(body, "IsTruncated") == "true") {
    page.next = XmlText(body, "NextContinuationToken");
    if (page.next.empty()) {
      throw SourceError("the store said a listing was truncated but gave no continuation token");
    }
  }
  return page;
}

}  // namespace mssql_cdc::storage
