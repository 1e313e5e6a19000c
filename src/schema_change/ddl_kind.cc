#include "schema_change/ddl_kind.h"

#include <string>
#include <vector>

#include <cctype>

namespace mssql_cdc {
namespace {

// The statement's words in upper case. A bracketed or quoted name is part of its word, spaces
// and all, so "[dbo].[my table]" is one word; parentheses, commas and semicolons end a word.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  char closing = 0;  // inside [...] or "...": the character that ends it
  for (char c : text) {
    if (closing) {
      word += c;
      if (c == closing) closing = 0;
    } else if (c == '[' || c == '"') {
      word += c;
      closing = c == '[' ? ']' : '"';
    } else if (std::isspace(static_cast<unsigned char>(c)) || c == '(' || c == ')' || c == ',' ||
               c == ';') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

}  // namespace

DdlKind ClassifyDdl(std::string_view ddl_command) {
  const std::vector<std::string> words = Words(ddl_command);
  if (words.size() < 4 || words[0] != "ALTER" || words[1] != "TABLE") return DdlKind::kOther;
  // words[2] is the table name; the action follows it.
  const std::string& action = words[3];
  const std::string next = words.size() > 4 ? words[4] : "";
  if (action == "ALTER" && next == "COLUMN") return DdlKind::kAlterColumn;
  if (action == "DROP" && next == "COLUMN") return DdlKind::kDropColumn;
  if (action == "ADD" && next != "CONSTRAINT" && next != "PRIMARY" && next != "UNIQUE" &&
      next != "FOREIGN" && next != "CHECK" && next != "DEFAULT" && next != "INDEX" &&
      next != "PERIOD") {
    return DdlKind::kAddColumn;
  }
  return DdlKind::kOther;
}

std::string_view DdlKindName(DdlKind kind) {
  switch (kind) {
    case DdlKind::kAddColumn: return "add column";
    case DdlKind::kDropColumn: return "drop column";
    case DdlKind::kAlterColumn: return "alter column";
    case DdlKind::kOther: return "other DDL";
  }
  return "other DDL";
}

}  // namespace mssql_cdc
