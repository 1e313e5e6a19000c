#include "sim_server/sql_tokens.h"
#include "core/ascii.h"

#include <cctype>

namespace mssql_cdc::sim_server {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
// Bytes of multi-byte UTF-8 characters count as letters: names may be in any script.
bool IsLetter(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || static_cast<unsigned char>(c) >= 0x80;
}
bool StartsWord(char c) { return IsLetter(c) || c == '_' || c == '@' || c == '#'; }
bool ContinuesWord(char c) { return StartsWord(c) || IsDigit(c) || c == '$'; }

bool IsParameterName(std::string_view word) {
  if (word.size() < 3 || word[0] != '@' || (word[1] != 'P' && word[1] != 'p')) return false;
  for (std::size_t i = 2; i < word.size(); ++i) {
    if (!IsDigit(word[i])) return false;
  }
  return true;
}

// Reads a quoted run starting after its opening quote up to `close`, where a doubled `close`
// stands for one. Returns false when the text ends first.
bool ReadQuoted(std::string_view sql, std::size_t& i, char close, std::string& out) {
  while (i < sql.size()) {
    if (sql[i] == close) {
      if (i + 1 < sql.size() && sql[i + 1] == close) {
        out += close;
        i += 2;
        continue;
      }
      ++i;
      return true;
    }
    out += sql[i++];
  }
  return false;
}

}  // namespace

bool SqlToken::IsName(std::string_view name) const {
  return IsName() && EqualsIgnoringCase(text, name);
}

int SqlToken::ParameterNumber() const {
  if (kind != Kind::kParameter || text == "?") return 0;
  int n = 0;
  for (std::size_t i = 2; i < text.size() && n < 100000; ++i) n = n * 10 + (text[i] - '0');
  return n;
}

std::string SqlToken::Display() const {
  if (kind != Kind::kBinary) return text;
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "0x";
  for (unsigned char c : text) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

TokenizeResult Tokenize(std::string_view sql) {
  TokenizeResult result;
  auto& tokens = result.tokens;
  std::size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (IsSpace(c)) {
      ++i;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      // T-SQL block comments nest.
      int depth = 0;
      do {
        if (sql.compare(i, 2, "/*") == 0) {
          ++depth;
          i += 2;
        } else if (sql.compare(i, 2, "*/") == 0) {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      } while (depth > 0 && i < sql.size());
    } else if (c == '[' || c == '"') {
      SqlToken token{SqlToken::Kind::kQuotedName, {}};
      ++i;
      if (!ReadQuoted(sql, i, c == '[' ? ']' : '"', token.text)) {
        result.unclosed = token.text;
        return result;
      }
      tokens.push_back(std::move(token));
    } else if (c == '\'' || ((c == 'N' || c == 'n') && i + 1 < sql.size() && sql[i + 1] == '\'')) {
      SqlToken token{SqlToken::Kind::kString, {}};
      token.unicode = c != '\'';
      i += token.unicode ? 2 : 1;
      if (!ReadQuoted(sql, i, '\'', token.text)) {
        result.unclosed = token.text;
        return result;
      }
      tokens.push_back(std::move(token));
    } else if (c == '0' && i + 1 < sql.size() && (sql[i + 1] == 'x' || sql[i + 1] == 'X')) {
      std::size_t end = i + 2;
      while (end < sql.size() && IsHexDigit(sql[end])) ++end;
      std::string_view digits = sql.substr(i + 2, end - i - 2);
      SqlToken token{SqlToken::Kind::kBinary, {}};
      // An odd number of digits has a leading zero implied, as SQL Server reads 0xABC.
      std::size_t d = 0;
      if (digits.size() % 2 == 1) token.text += static_cast<char>(HexDigitValue(digits[d++]));
      for (; d < digits.size(); d += 2) {
        token.text += static_cast<char>(HexDigitValue(digits[d]) * 16 + HexDigitValue(digits[d + 1]));
      }
      tokens.push_back(std::move(token));
      i = end;
    } else if (IsDigit(c) || (c == '.' && i + 1 < sql.size() && IsDigit(sql[i + 1]))) {
      std::size_t end = i;
      while (end < sql.size() && (IsDigit(sql[end]) || sql[end] == '.')) ++end;
      tokens.push_back(SqlToken{SqlToken::Kind::kNumber, std::string(sql.substr(i, end - i))});
      i = end;
    } else if (StartsWord(c)) {
      std::size_t end = i + 1;
      while (end < sql.size() && ContinuesWord(sql[end])) ++end;
      std::string word(sql.substr(i, end - i));
      const auto kind = IsParameterName(word) ? SqlToken::Kind::kParameter : SqlToken::Kind::kWord;
      tokens.push_back(SqlToken{kind, std::move(word)});
      i = end;
    } else if (c == '?') {
      tokens.push_back(SqlToken{SqlToken::Kind::kParameter, "?"});
      ++i;
    } else {
      static constexpr std::string_view kPairs[] = {">=", "<=", "<>", "!=", "!<", "!>"};
      std::size_t length = 1;
      for (std::string_view pair : kPairs) {
        if (sql.compare(i, 2, pair) == 0) length = 2;
      }
      tokens.push_back(SqlToken{SqlToken::Kind::kPunct, std::string(sql.substr(i, length))});
      i += length;
    }
  }
  return result;
}

}  // namespace mssql_cdc::sim_server
