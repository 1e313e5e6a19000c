#include "storage/xml_text.h"

#include <utility>

namespace mssql_cdc::storage {
namespace {

std::string Unescaped(const std::string& text) {
  static const std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (text[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (text.compare(i, entity.size(), entity) == 0) {
          out += c;
          i += entity.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

}  // namespace

std::vector<std::string> XmlElements(const std::string& xml, const std::string& tag) {
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

std::string XmlText(const std::string& xml, const std::string& tag) {
  auto all = XmlElements(xml, tag);
  return all.empty() ? "" : Unescaped(all.front());
}

}  // namespace mssql_cdc::storage
