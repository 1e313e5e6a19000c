#include "storage/s3_list_response.h"

#include <ctime>

#include "core/errors.h"
#include "storage/xml_text.h"

namespace mssql_cdc::storage {
namespace {

// "2026-12-05T14:55:02.123Z" as milliseconds since the epoch; 0 when it does not read.
std::int64_t EpochMillis(const std::string& text) {
  std::tm utc{};
  int millis = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                  &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis) < 6) {
    return 0;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&utc)) * 1000 + millis;
}

}  // namespace

S3ListPage ParseListObjectsV2(const std::string& body, const std::string& prefix) {
  if (body.find("<ListBucketResult") == std::string::npos) {
    throw SourceError("the store answered a listing with something other than a "
                      "ListBucketResult");
  }
  S3ListPage page;
  for (const auto& contents : XmlElements(body, "Contents")) {
    const std::string key = XmlText(contents, "Key");
    if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) continue;
    FileInfo info;
    info.name = key.substr(prefix.size());
    if (info.name.back() == '/') continue;  // a marker of a directory below
    info.size = std::stoll("0" + XmlText(contents, "Size"));
    info.modification_time_ms = EpochMillis(XmlText(contents, "LastModified"));
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
    page.next_continuation_token = XmlText(body, "NextContinuationToken");
    if (page.next_continuation_token.empty()) {
      throw SourceError("the store said a listing was truncated but gave no continuation token");
    }
  }
  return page;
}

}  // namespace mssql_cdc::storage
