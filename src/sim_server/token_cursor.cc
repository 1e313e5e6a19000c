#include "sim_server/token_cursor.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>

namespace mssql_cdc::sim_server {
bool LiteralValue(const SqlToken& token, SqlValue* value) {
  switch (token.kind) {
    case SqlToken::Kind::kNumber: {
      const char* end = token.text.data() + token.text.size();
      std::int64_t n = 0;
      auto [ptr, ec] = std::from_chars(token.text.data(), end, n);
      if (ec == std::errc() && ptr == end) {
        const bool fits_int = n >= INT32_MIN && n <= INT32_MAX;
        *value = SqlValue{SqlValue::Kind::kInt, n, 0, {}, fits_int ? "int" : "bigint"};
      } else {
        // A numeric literal keeps its digits as written: its precision and scale are theirs.
        *value = SqlValue{SqlValue::Kind::kFloat, 0, std::strtod(token.text.c_str(), nullptr), token.text,
                          "numeric"};
      }
      return true;
    }
    case SqlToken::Kind::kBinary:
      *value = SqlValue{SqlValue::Kind::kBinary, 0, 0, token.text, "varbinary"};
      return true;
    case SqlToken::Kind::kString:
      *value = SqlValue{SqlValue::Kind::kText, 0, 0, token.text, token.unicode ? "nvarchar" : "varchar"};
      return true;
    case SqlToken::Kind::kWord:
      if (!token.IsName("null")) return false;
      *value = SqlValue{};
      return true;
    default:
      return false;
  }
}

Phrase::Phrase(std::string_view text) : tokens_(Tokenize(text).tokens) {}

TokenCursor::TokenCursor(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end,
                         const std::vector<SqlValue>& values, std::size_t* furthest)
    : tokens_(&tokens), position_(begin), end_(end), values_(&values), furthest_(furthest) {}

bool TokenCursor::Fail(std::size_t at) {
  if (at > *furthest_) *furthest_ = at;
  return false;
}

bool TokenCursor::Same(const SqlToken& expected, const SqlToken& actual) const {
  if (expected.IsName()) {
    if (!actual.IsName()) return false;
    if (EqualsIgnoringCase(expected.text, actual.text)) return true;
    return EqualsIgnoringCase(expected.text, "exec") && EqualsIgnoringCase(actual.text, "execute");
  }
  if (expected.kind != actual.kind) return false;
  if (expected.kind == SqlToken::Kind::kString) return EqualsIgnoringCase(expected.text, actual.text);
  return expected.text == actual.text;
}

bool TokenCursor::Match(const Phrase& phrase, std::vector<SqlValue>* values) {
  std::size_t at = position_;
  std::vector<SqlValue> taken;
  for (const SqlToken& expected : phrase.tokens()) {
    if (at == end_) return Fail(at);
    if (expected.kind == SqlToken::Kind::kParameter) {
      TokenCursor slot(*tokens_, at, end_, *values_, furthest_);
      SqlValue value;
      if (!slot.Value(&value)) return false;
      taken.push_back(std::move(value));
      at = slot.position_;
      continue;
    }
    if (!Same(expected, (*tokens_)[at])) return Fail(at);
    ++at;
  }
  position_ = at;
  if (values != nullptr) {
    for (auto& value : taken) values->push_back(std::move(value));
  }
  return true;
}

bool TokenCursor::Keyword(std::string_view word) {
  if (AtEnd() || !(*tokens_)[position_].IsName(word)) return Fail(position_);
  ++position_;
  return true;
}

bool TokenCursor::Punct(std::string_view punct) {
  if (AtEnd() || !(*tokens_)[position_].IsPunct(punct)) return Fail(position_);
  ++position_;
  return true;
}

bool TokenCursor::Name(std::string* name) {
  if (AtEnd() || !(*tokens_)[position_].IsName()) return Fail(position_);
  *name = (*tokens_)[position_++].text;
  return true;
}

bool TokenCursor::Integer(std::int64_t* value) {
  if (AtEnd() || (*tokens_)[position_].kind != SqlToken::Kind::kNumber) return Fail(position_);
  const std::string& text = (*tokens_)[position_].text;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return Fail(position_);
  ++position_;
  return true;
}

bool TokenCursor::Value(SqlValue* value) {
  if (AtEnd()) return Fail(position_);
  const SqlToken& token = (*tokens_)[position_];
  if (token.kind == SqlToken::Kind::kParameter) {
    *value = (*values_)[position_];
  } else if (!LiteralValue(token, value)) {
    return Fail(position_);
  }
  ++position_;
  return true;
}

}  // namespace mssql_cdc::sim_server
