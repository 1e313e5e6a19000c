// Matches the tokens of one statement against the pieces of a known shape. Each method
// consumes tokens only when the whole piece matches, so optional pieces are tried by calling
// and alternatives by trying in turn. The furthest token any piece failed at is remembered:
// it is the token SQL Server's "Incorrect syntax near" would name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim_server/sql_tokens.h"
#include "sim_server/sql_value.h"

namespace mssql_cdc::sim_server {

// The value of a literal token: a number (int, bigint, or numeric with its digits kept), a
// 0x binary, a string, NULL. False for any other token.
bool LiteralValue(const SqlToken& token, SqlValue* value);

// A fixed piece of a shape, written as T-SQL text (e.g. "FROM cdc.lsn_time_mapping WHERE
// start_lsn = ?") and tokenized once. A `?` in it takes a value.
class Phrase {
 public:
  explicit Phrase(std::string_view text);
  const std::vector<SqlToken>& tokens() const { return tokens_; }

 private:
  std::vector<SqlToken> tokens_;
};

class TokenCursor {
 public:
  // Matches tokens[begin, end). `values[i]` is the value of tokens[i] when that token is a
  // parameter marker. `furthest` collects the furthest failure over several cursors.
  TokenCursor(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end,
              const std::vector<SqlValue>& values, std::size_t* furthest);

  // The phrase's tokens: words and names ignoring case, quoted or not (EXEC also matching
  // EXECUTE); each `?` takes a value (a parameter or a literal) appended to `values`.
  bool Match(const Phrase& phrase, std::vector<SqlValue>* values = nullptr);
  bool Keyword(std::string_view word);
  bool Punct(std::string_view punct);
  // A word or a quoted name; its text unquoted.
  bool Name(std::string* name);
  // A non-negative integer literal.
  bool Integer(std::int64_t* value);
  // A parameter marker or a literal: number, 0x binary, string, NULL.
  bool Value(SqlValue* value);
  bool AtEnd() const { return position_ == end_; }
  // How many tokens are left.
  std::size_t Remaining() const { return end_ - position_; }
  // AtEnd(), recording a failure when tokens are left.
  bool End() { return AtEnd() || Fail(position_); }
  // Records a failure at the current token, for a check a shape makes itself.
  bool Reject() { return Fail(position_); }

  const SqlToken* Peek() const { return AtEnd() ? nullptr : &(*tokens_)[position_]; }
  void Advance() { ++position_; }

 private:
  bool Fail(std::size_t at);
  bool Same(const SqlToken& expected, const SqlToken& actual) const;

  const std::vector<SqlToken>* tokens_;
  std::size_t position_;
  std::size_t end_;
  const std::vector<SqlValue>* values_;
  std::size_t* furthest_;
};

}  // namespace mssql_cdc::sim_server
