#include "core/table_ref.h"

#include <cctype>

#include "core/errors.h"
#include "core/user_text.h"

namespace mssql_cdc {

bool IsUri(std::string_view location) {
  const std::size_t colon = location.find(':');
  if (colon == std::string_view::npos || colon < 2) return false;
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = location[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok) return false;
  }
  return true;
}
namespace {

constexpr std::size_t kMaxParts = 3;
constexpr std::string_view kTemplate = "{ci}";

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

[[noreturn]] void Refuse(std::string_view what, std::string_view text, const std::string& why) {
  throw ConfigError(std::string(what) + "=" + QuoteUserText(text) + " " + why +
                    ". A table is named `table`, `schema.table` or `catalog.schema.table` "
                    "(backquote a part that has other characters: `my-schema`.`t`); a path "
                    "contains '/' or ':' (/lake/bronze/t, ./bronze/t, s3://bucket/bronze/t)");
}

}  // namespace

TableRef TableRef::Parse(std::string_view text, std::string_view what) {
  TableRef ref;
  ref.text_ = std::string(text);
  if (text.find('/') != std::string_view::npos || text.find(':') != std::string_view::npos) {
    return ref;
  }
  if (text.empty()) Refuse(what, text, "is empty");
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (true) {
    std::string part;
    if (i < text.size() && text[i] == '`') {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '`') {
          if (i + 1 < text.size() && text[i + 1] == '`') {
            part += '`';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        part += text[i++];
      }
      if (!closed) Refuse(what, text, "has a backquote that is not closed");
      if (part.empty()) Refuse(what, text, "has an empty part ``");
    } else {
      while (i < text.size() && text[i] != '.') {
        if (text.substr(i, kTemplate.size()) == kTemplate) {  // a template's capture instance
          part += kTemplate;
          i += kTemplate.size();
          continue;
        }
        if (!IsIdentifierChar(text[i])) {
          Refuse(what, text,
                 "is not a table name: '" + std::string(1, text[i]) +
                     "' is neither a letter, a digit nor '_'");
        }
        part += text[i++];
      }
      if (part.empty()) Refuse(what, text, "has an empty part");
    }
    parts.push_back(std::move(part));
    if (i == text.size()) break;
    if (text[i] != '.') Refuse(what, text, "has text after a backquoted part; separate parts with '.'");
    ++i;
    if (i == text.size()) Refuse(what, text, "ends with '.': its last part is empty");
  }
  if (parts.size() > kMaxParts) {
    Refuse(what, text, "has " + std::to_string(parts.size()) + " parts; a name has at most 3");
  }
  ref.parts_ = std::move(parts);
  return ref;
}

const std::string& TableRef::RequirePath(const std::string& text, std::string_view what) {
  if (Parse(text, what).is_name()) {
    throw ConfigError(std::string(what) + "=" + QuoteUserText(text) +
                      " names a table in a catalog (it has no '/' or ':'), and only Spark "
                      "resolves names; for a directory write it as a path, e.g. ./" + text);
  }
  return text;
}

std::string TableRef::QuotedName() const {
  std::string out;
  for (const auto& part : parts_) {
    if (!out.empty()) out += '.';
    out += QuoteIdentifier(part);
  }
  return out;
}

std::string TableRef::SqlName() const {
  return is_name() ? QuotedName() : "delta." + QuoteIdentifier(text_);
}

std::string TableRef::QuotedSchema() const {
  std::string out;
  for (std::size_t i = 0; i + 1 < parts_.size(); ++i) {
    if (!out.empty()) out += '.';
    out += QuoteIdentifier(parts_[i]);
  }
  return out;
}

std::string QuoteIdentifier(std::string_view part) {
  std::string out = "`";
  for (char c : part) {
    out += c;
    if (c == '`') out += '`';
  }
  return out + "`";
}

std::string SqlStringLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace mssql_cdc
