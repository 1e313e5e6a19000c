#include "sim/schema.h"

#include <cctype>

#include "core/errors.h"
#include "core/ascii.h"

namespace mssql_cdc::sim {
namespace {

std::string_view StripBrackets(std::string_view s) {
  s = TrimAsciiSpace(s);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  return s;
}

bool EndsWithWord(std::string_view s, std::string_view word) {
  if (s.size() < word.size()) return false;
  std::string_view tail = s.substr(s.size() - word.size());
  if (!SameName(tail, word)) return false;
  return s.size() == word.size() ||
         std::isspace(static_cast<unsigned char>(s[s.size() - word.size() - 1]));
}

}  // namespace

void CheckIdentifier(std::string_view name, std::string_view what, std::size_t max_length) {
  auto fail = [&](std::string_view why) {
    throw ConfigError("invalid " + std::string(what) + " '" + std::string(name) + "': " +
                      std::string(why));
  };
  if (name.empty()) fail("it is empty");
  if (name.size() > max_length) fail("longer than " + std::to_string(max_length) + " characters");
  const unsigned char first = static_cast<unsigned char>(name.front());
  if (!std::isalpha(first) && first != '_') fail("it must start with a letter or _");
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '_' && c != '@' && c != '$' && c != '#') {
      fail("use only letters, digits, _, @, $ and #");
    }
  }
}

void CheckColumnName(std::string_view name, std::string_view what) {
  auto fail = [&](std::string_view why) {
    throw ConfigError("invalid " + std::string(what) + " '" + std::string(name) + "': " +
                      std::string(why));
  };
  if (name.empty()) fail("it is empty");
  if (name.size() > 128) fail("longer than 128 characters");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) fail("it holds a control character");
    if (c == ']') fail("it holds ']'");
  }
}

TableName ParseTableName(std::string_view text) {
  std::string_view s = TrimAsciiSpace(text);
  TableName out;
  const auto dot = s.find('.');
  if (dot == std::string_view::npos) {
    out.name = std::string(StripBrackets(s));
  } else {
    out.schema = std::string(StripBrackets(s.substr(0, dot)));
    out.name = std::string(StripBrackets(s.substr(dot + 1)));
  }
  CheckIdentifier(out.schema, "schema name in '" + std::string(text) + "'");
  CheckIdentifier(out.name, "table name in '" + std::string(text) + "'");
  return out;
}

ColumnDef ParseColumnDeclaration(std::string_view text) {
  std::string_view s = TrimAsciiSpace(text);
  std::size_t end;
  ColumnDef col;
  if (!s.empty() && s.front() == '[') {
    end = s.find(']');
    if (end == std::string_view::npos) {
      throw ConfigError("column declaration '" + std::string(text) + "': missing ']'");
    }
    col.name = std::string(s.substr(1, end - 1));
    ++end;
  } else {
    end = 0;
    while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
    col.name = std::string(s.substr(0, end));
  }
  CheckColumnName(col.name, "column name in '" + std::string(text) + "'");
  std::string_view rest = TrimAsciiSpace(s.substr(end));
  if (EndsWithWord(rest, "null")) {
    rest = TrimAsciiSpace(rest.substr(0, rest.size() - 4));
    if (EndsWithWord(rest, "not")) {
      rest = TrimAsciiSpace(rest.substr(0, rest.size() - 3));
      col.nullable = false;
    }
  }
  if (rest.empty()) {
    throw ConfigError("column declaration '" + std::string(text) +
                      "' has no type: write it as 'name type [not null]', e.g. 'id int not null'");
  }
  if (SameName(rest.substr(0, std::min<std::size_t>(rest.size(), 3)), "as ")) {
    throw ConfigError("column declaration '" + std::string(text) +
                      "': computed columns are not supported by the simulator");
  }
  try {
    col.type = SqlType::Parse(rest);
  } catch (const ConfigError& e) {
    throw ConfigError("column " + col.name + ": " + e.what());
  }
  return col;
}

const ColumnInfo* TableInfo::Find(std::string_view column) const {
  for (const auto& c : columns) {
    if (SameName(c.name, column)) return &c;
  }
  return nullptr;
}

const ColumnInfo* TableInfo::FindById(int column_id) const {
  for (const auto& c : columns) {
    if (c.column_id == column_id) return &c;
  }
  return nullptr;
}

}  // namespace mssql_cdc::sim
