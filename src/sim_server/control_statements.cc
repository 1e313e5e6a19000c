#include "sim_server/control_statements.h"

#include <array>
#include <utility>

namespace mssql_cdc::sim_server {
namespace {

bool ReadStep(TokenCursor& cursor, ControlStep* step);

// Words that begin or end a statement: never taken as a transaction name or an option's value.
bool IsStatementWord(const SqlToken& token) {
  static constexpr std::array<std::string_view, 14> kWords = {
      "begin", "end", "if", "else", "set", "commit", "rollback", "save", "select", "exec",
      "execute", "declare", "insert", "use"};
  if (token.kind != SqlToken::Kind::kWord) return false;
  for (std::string_view word : kWords) {
    if (token.IsName(word)) return true;
  }
  return false;
}

// TRAN or TRANSACTION.
bool TranWord(TokenCursor& cursor) {
  TokenCursor attempt = cursor;
  if (attempt.Keyword("tran") || attempt.Keyword("transaction")) {
    cursor = attempt;
    return true;
  }
  return false;
}

// A transaction or savepoint name, when one follows.
void OptionalName(TokenCursor& cursor, std::string* name) {
  const SqlToken* next = cursor.Peek();
  if (next != nullptr && next->IsName() && !IsStatementWord(*next) &&
      next->text.rfind('@', 0) != 0) {
    *name = next->text;
    cursor.Advance();
  }
}

bool ReadSet(TokenCursor& cursor, ControlStep* step) {
  if (!cursor.Keyword("set")) return false;
  static const Phrase isolation("TRANSACTION ISOLATION LEVEL");
  if (cursor.Match(isolation)) {
    static const std::array<Phrase, 5> kLevels = {
        Phrase("READ UNCOMMITTED"), Phrase("READ COMMITTED"), Phrase("REPEATABLE READ"),
        Phrase("SNAPSHOT"), Phrase("SERIALIZABLE")};
    for (const Phrase& level : kLevels) {
      if (cursor.Match(level)) {
        step->kind = ControlStep::Kind::kSetOption;
        return true;
      }
    }
    return cursor.Reject();
  }
  // SET option [, option ...] value: ON, OFF, a number, a word or a string.
  std::string option;
  if (!cursor.Name(&option) || option.rfind('@', 0) == 0) return cursor.Reject();
  bool several = false;
  while (cursor.Punct(",")) {
    std::string more;
    if (!cursor.Name(&more)) return false;
    several = true;
  }
  const SqlToken* value = cursor.Peek();
  if (value == nullptr) return cursor.Reject();
  if (value->IsPunct("-")) {
    cursor.Advance();
    value = cursor.Peek();
    if (value == nullptr || value->kind != SqlToken::Kind::kNumber) return cursor.Reject();
  } else if (value->kind != SqlToken::Kind::kNumber && value->kind != SqlToken::Kind::kString &&
             !(value->kind == SqlToken::Kind::kWord && !IsStatementWord(*value))) {
    return cursor.Reject();
  }
  const bool on = value->IsName("on");
  if (!several && EqualsIgnoringCase(option, "implicit_transactions")) {
    if (!on && !value->IsName("off")) return cursor.Reject();
    step->kind = ControlStep::Kind::kImplicitTransactions;
    step->on = on;
  } else {
    step->kind = ControlStep::Kind::kSetOption;
  }
  cursor.Advance();
  return true;
}

bool ReadIf(TokenCursor& cursor, ControlStep* step) {
  static const Phrase condition("IF @@TRANCOUNT");
  if (!cursor.Match(condition)) return false;
  static const std::array<std::string_view, 7> kCompares = {"<>", "!=", "<=", ">=", "=", "<", ">"};
  const SqlToken* compare = cursor.Peek();
  if (compare == nullptr || compare->kind != SqlToken::Kind::kPunct) return cursor.Reject();
  bool known = false;
  for (std::string_view c : kCompares) known = known || compare->text == c;
  if (!known) return cursor.Reject();
  step->compare = compare->text;
  cursor.Advance();
  if (!cursor.Integer(&step->count)) return false;
  step->kind = ControlStep::Kind::kIfTransactionCount;
  step->then.emplace_back();
  if (!ReadStep(cursor, &step->then.back())) return false;
  if (cursor.Keyword("else")) {
    step->otherwise.emplace_back();
    if (!ReadStep(cursor, &step->otherwise.back())) return false;
  }
  return true;
}

bool ReadTransaction(TokenCursor& cursor, ControlStep* step) {
  using Kind = ControlStep::Kind;
  if (cursor.Keyword("save")) {
    step->kind = Kind::kSave;
    if (!TranWord(cursor)) return cursor.Reject();
    OptionalName(cursor, &step->name);
    return !step->name.empty() || cursor.Reject();
  }
  const bool commit = cursor.Keyword("commit");
  if (commit || cursor.Keyword("rollback")) {
    step->kind = commit ? Kind::kCommit : Kind::kRollback;
    if (TranWord(cursor)) {
      OptionalName(cursor, &step->name);
    } else {
      cursor.Keyword("work");
    }
    return true;
  }
  TokenCursor attempt = cursor;
  if (!attempt.Keyword("begin") || !TranWord(attempt)) return false;
  cursor = attempt;
  step->kind = Kind::kBeginTransaction;
  OptionalName(cursor, &step->name);
  return true;
}

bool ReadBlock(TokenCursor& cursor, ControlStep* step) {
  if (!cursor.Keyword("begin")) return false;
  step->kind = ControlStep::Kind::kBlock;
  for (;;) {
    if (cursor.Keyword("end")) return true;
    step->then.emplace_back();
    if (!ReadStep(cursor, &step->then.back())) return false;
  }
}

bool ReadStep(TokenCursor& cursor, ControlStep* step) {
  for (auto read : {ReadSet, ReadIf, ReadTransaction, ReadBlock}) {
    TokenCursor attempt = cursor;
    ControlStep read_step;
    if (read(attempt, &read_step)) {
      cursor = attempt;
      *step = std::move(read_step);
      return true;
    }
  }
  return false;
}

}  // namespace

bool ReadControlStatements(TokenCursor& cursor, ControlStatements* out) {
  ControlStatements read;
  for (;;) {
    ControlStep step;
    if (cursor.AtEnd() || !ReadStep(cursor, &step)) break;
    read.steps.push_back(std::move(step));
  }
  if (read.steps.empty()) return false;
  *out = std::move(read);
  return true;
}

}  // namespace mssql_cdc::sim_server
