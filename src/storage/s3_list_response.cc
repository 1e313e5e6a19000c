#include "storage/s3_list_response.h"

#include <ctime>

#include "core/errors.h"

namespace mssql_cdc::storage {
namespace {

// The text of each <tag>...</tag> in `xml`, in order (a tag is never nested in itself here).
std::vector<std::string> Elements(const std::string& xml, const std::string& tag) {
  std::vector<std::string> found;
  const std::string open = "<" + tag + ">";
  const std::string close = "</" + tag + ">";
  std::size_t at = 0;
  while ((at = xml.find(open, at)) != std::string::npos) {
    const std::size_t start = at + open.size();
    const std::size_t end = xml.find(close, start);
    if (end == std::string::npos) break;
    found.push_back(xml.substr(start, end - start));
    at = end + close.size();
  }
  return found;
}

std::string Unescaped(const std::string& text) {
  static const std::pair<const char*, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (text[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (text.compare(i, std::char_traits<char>::length(entity), entity) == 0) {
          out += c;
          i += std::char_traits<char>::length(entity);
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

std::string First(const std::string& xml, const std::string& tag) {
  auto all = Elements(xml, tag);
  return all.empty() ? "" : Unescaped(all.front());
}

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
  for (const auto& contents : Elements(body, "Contents")) {
    const std::string key = First(contents, "Key");
    if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) continue;
    FileInfo info;
    info.name = key.substr(prefix.size());
    if (info.name.back() == '/') continue;  // a marker of a directory below
    info.size = std::stoll("0" + First(contents, "Size"));
    info.modification_time_ms = EpochMillis(First(contents, "LastModified"));
    page.entries.push_back(std::move(info));
  }
  for (const auto& common : Elements(body, "CommonPrefixes")) {
    std::string name = First(common, "Prefix");
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    name = name.substr(prefix.size());
    if (!name.empty() && name.back() == '/') name.pop_back();
    FileInfo info;
    info.name = std::move(name);
    info.is_directory = true;
    page.entries.push_back(std::move(info));
  }
  if (First(body, "IsTruncated") == "true") {
    page.next_continuation_token = First(body, "NextContinuationToken");
    if (page.next_continuation_token.empty()) {
      throw SourceError("the store said a listing was truncated but gave no continuation token");
    }
  }
  return page;
}

}  // namespace mssql_cdc::storage
