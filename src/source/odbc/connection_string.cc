#include "source/odbc/connection_string.h"

#include <algorithm>

#include "core/errors.h"
#include "core/options.h"

namespace mssql_cdc::odbc {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Keywords whose values are always braced: a login's name and password may hold anything,
// and driver names hold spaces.
bool AlwaysBraced(std::string_view name) {
  return SameKeyword(name, "UID") || SameKeyword(name, "PWD") || SameKeyword(name, "Driver");
}

}  // namespace

bool SameKeyword(std::string_view a, std::string_view b) {
  return a.size() == b.size() && AsciiLower(a) == AsciiLower(b);
}

ConnectionString ConnectionString::Parse(std::string_view text) {
  ConnectionString out;
  std::size_t i = 0;
  int pair = 0;
  while (i < text.size()) {
    // One pair: keyword up to '=', then a bare value up to ';' or a braced one.
    const std::size_t end_of_pair = text.find(';', i);
    const std::size_t equals = text.find('=', i);
    if (equals == std::string_view::npos || (end_of_pair != std::string_view::npos && end_of_pair < equals)) {
      const std::string_view rest =
          Trim(text.substr(i, end_of_pair == std::string_view::npos ? std::string_view::npos
                                                                    : end_of_pair - i));
      if (!rest.empty()) {
        throw ConfigError("option connectionString is malformed: part " +
                          std::to_string(pair + 1) +
                          " has no '=' (the string is keyword=value pairs separated by ';')");
      }
      if (end_of_pair == std::string_view::npos) break;
      i = end_of_pair + 1;
      continue;
    }
    ++pair;
    const std::string name(Trim(text.substr(i, equals - i)));
    if (name.empty()) {
      throw ConfigError("option connectionString is malformed: part " + std::to_string(pair) +
                        " has an empty keyword before '='");
    }
    std::size_t j = equals + 1;
    while (j < text.size() && IsSpace(text[j])) ++j;
    std::string value;
    if (j < text.size() && text[j] == '{') {
      bool closed = false;
      for (++j; j < text.size(); ++j) {
        if (text[j] == '}') {
          if (j + 1 < text.size() && text[j + 1] == '}') {
            value += '}';
            ++j;
            continue;
          }
          closed = true;
          ++j;
          break;
        }
        value += text[j];
      }
      if (!closed) {
        throw ConfigError("option connectionString is malformed: the value of keyword '" + name +
                          "' opens a brace '{' that is never closed (write a '}' in a braced "
                          "value as '}}')");
      }
      while (j < text.size() && IsSpace(text[j])) ++j;
      if (j < text.size() && text[j] != ';') {
        throw ConfigError("option connectionString is malformed: the braced value of keyword '" +
                          name + "' is followed by more text before the next ';'");
      }
    } else {
      const std::size_t end = text.find(';', j);
      value = std::string(Trim(text.substr(j, end == std::string_view::npos ? std::string_view::npos
                                                                             : end - j)));
      j = end == std::string_view::npos ? text.size() : end;
    }
    if (out.Has(name)) {
      throw ConfigError("option connectionString names keyword '" + name +
                        "' twice: keep one of them");
    }
    out.keywords_.push_back({name, std::move(value)});
    i = j < text.size() ? j + 1 : j;
  }
  return out;
}

const ConnectionKeyword* ConnectionString::Find(std::string_view name) const {
  for (const auto& keyword : keywords_) {
    if (SameKeyword(keyword.name, name)) return &keyword;
  }
  return nullptr;
}

std::optional<std::string> ConnectionString::Get(std::string_view name) const {
  const ConnectionKeyword* keyword = Find(name);
  if (keyword == nullptr) return std::nullopt;
  return keyword->value;
}

void ConnectionString::Set(std::string_view name, std::string value) {
  for (auto& keyword : keywords_) {
    if (SameKeyword(keyword.name, name)) {
      keyword.value = std::move(value);
      return;
    }
  }
  keywords_.push_back({std::string(name), std::move(value)});
}

void ConnectionString::Remove(std::string_view name) {
  keywords_.erase(std::remove_if(keywords_.begin(), keywords_.end(),
                                 [&](const ConnectionKeyword& k) { return SameKeyword(k.name, name); }),
                  keywords_.end());
}

std::string ConnectionString::FormatValue(std::string_view name, std::string_view value,
                                          BraceStyle style) {
  const bool bare = !AlwaysBraced(name) && !value.empty() &&
                    value.find_first_of(";{}") == std::string_view::npos &&
                    !IsSpace(value.front()) && !IsSpace(value.back());
  if (bare) return std::string(value);
  if (style == BraceStyle::kFreeTds) {
    if (value.find("};") != std::string_view::npos) {
      throw ConfigError("the value of connection keyword '" + std::string(name) +
                        "' contains '};', which the FreeTDS driver cannot read from a "
                        "connection string: change that value, or use Microsoft's ODBC driver");
    }
    return "{" + std::string(value) + "}";
  }
  std::string out = "{";
  for (char c : value) {
    out += c;
    if (c == '}') out += '}';
  }
  out += '}';
  return out;
}

std::string ConnectionString::ToString(BraceStyle style) const {
  std::string out;
  for (const auto& keyword : keywords_) {
    out += keyword.name;
    out += '=';
    out += FormatValue(keyword.name, keyword.value, style);
    out += ';';
  }
  return out;
}

}  // namespace mssql_cdc::odbc
