#include "sim_server/tsql/parser.h"

#include <array>
#include <string_view>
#include <utility>

#include "sim_server/server_errors.h"
#include "sim_server/token_cursor.h"

namespace mssql_cdc::sim_server::tsql {
namespace {

// Words that end an expression or a clause: never read as an alias or a name.
bool IsReserved(const SqlToken& token) {
  static constexpr std::array<std::string_view, 46> kWords = {
      "select", "from", "where", "group", "having", "order", "by", "union", "except",
      "intersect", "join", "inner", "left", "right", "full", "outer", "cross", "on", "and",
      "or", "not", "as", "with", "when", "then", "else", "end", "case", "in", "is", "null",
      "between", "like", "exists", "distinct", "top", "offset", "fetch", "option", "asc",
      "desc", "all", "over", "partition", "apply", "into"};
  if (token.kind != SqlToken::Kind::kWord) return false;
  for (std::string_view word : kWords) {
    if (token.IsName(word)) return true;
  }
  return false;
}

class Parser {
 public:
  Parser(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end,
         const std::vector<SqlValue>& values)
      : tokens_(tokens), at_(begin), end_(end), values_(values) {}

  TableDeclaration WholeTableDeclaration() {
    ExpectWord("declare");
    const SqlToken* name = Peek();
    if (name == nullptr || name->kind != SqlToken::Kind::kWord || name->text.rfind('@', 0) != 0 ||
        name->text.rfind("@@", 0) == 0) {
      Fail();
    }
    TableDeclaration declaration{name->text, {}};
    ++at_;
    Word("as");
    ExpectWord("table");
    ExpectPunct("(");
    do {
      std::string column = ExpectAnyName();
      SqlType type = ReadType();
      if (Word("not")) {
        ExpectWord("null");
      } else {
        Word("null");
      }
      declaration.columns.emplace_back(std::move(column), std::move(type));
    } while (Punct(","));
    ExpectPunct(")");
    if (at_ != end_) Fail();
    return declaration;
  }

  Query WholeQuery() {
    Query query = ReadQuery();
    if (Word("option")) SkipParenthesized();
    if (at_ != end_) Fail();
    return query;
  }

 private:
  // ---- tokens ----
  const SqlToken* Peek(std::size_t ahead = 0) const {
    return at_ + ahead < end_ ? &tokens_[at_ + ahead] : nullptr;
  }
  bool PeekWord(std::string_view word, std::size_t ahead = 0) const {
    const SqlToken* token = Peek(ahead);
    return token != nullptr && token->kind == SqlToken::Kind::kWord && token->IsName(word);
  }
  bool PeekPunct(std::string_view punct, std::size_t ahead = 0) const {
    const SqlToken* token = Peek(ahead);
    return token != nullptr && token->IsPunct(punct);
  }
  bool Word(std::string_view word) {
    if (!PeekWord(word)) return false;
    ++at_;
    return true;
  }
  bool Punct(std::string_view punct) {
    if (!PeekPunct(punct)) return false;
    ++at_;
    return true;
  }
  [[noreturn]] void Fail() const {
    const std::size_t near = at_ < end_ ? at_ : end_ - 1;
    throw SqlError(errors::IncorrectSyntax(tokens_[near].Display()));
  }
  void ExpectWord(std::string_view word) {
    if (!Word(word)) Fail();
  }
  void ExpectPunct(std::string_view punct) {
    if (!Punct(punct)) Fail();
  }
  // A name that is not a reserved word (quoted names always are names).
  bool PeekName(std::size_t ahead = 0) const {
    const SqlToken* token = Peek(ahead);
    return token != nullptr && token->IsName() && !IsReserved(*token) &&
           token->text.rfind('@', 0) != 0;
  }
  std::string ExpectName() {
    if (!PeekName()) Fail();
    return tokens_[at_++].text;
  }
  // A column name of a declaration, which may be a reserved word (TYPE, PRECISION, ...).
  std::string ExpectAnyName() {
    const SqlToken* token = Peek();
    if (token == nullptr || !token->IsName()) Fail();
    ++at_;
    return token->text;
  }
  // name[.name ...], empty parts allowed between dots (db..table).
  Name ReadName() {
    Name name{ExpectName()};
    while (PeekPunct(".")) {
      ++at_;
      if (PeekPunct(".")) {
        name.emplace_back();
        continue;
      }
      name.push_back(ExpectName());
    }
    return name;
  }
  void SkipParenthesized() {
    ExpectPunct("(");
    for (int depth = 1; depth > 0; ++at_) {
      if (at_ == end_) Fail();
      if (tokens_[at_].IsPunct("(")) ++depth;
      if (tokens_[at_].IsPunct(")")) --depth;
    }
  }

  // ---- queries ----
  Query ReadQuery() {
    Query query;
    if (Word("with")) {
      do {
        CommonTable table;
        table.name = ExpectName();
        if (Punct("(")) {
          do table.columns.push_back(ExpectName());
          while (Punct(","));
          ExpectPunct(")");
        }
        ExpectWord("as");
        ExpectPunct("(");
        table.query = std::make_shared<Query>(ReadQuery());
        ExpectPunct(")");
        query.with.push_back(std::move(table));
      } while (Punct(","));
    }
    query.selects.push_back(ReadSelect());
    for (;;) {
      std::string op;
      if (Word("union")) {
        op = Word("all") ? "UNION ALL" : "UNION";
      } else if (Word("except")) {
        op = "EXCEPT";
      } else if (Word("intersect")) {
        op = "INTERSECT";
      } else {
        break;
      }
      query.set_operators.push_back(op);
      query.selects.push_back(ReadSelect());
    }
    if (PeekWord("order") && PeekWord("by", 1)) {
      at_ += 2;
      query.order_by = ReadOrderItems();
      if (Word("offset")) {
        query.offset = ReadExpr();
        if (!Word("rows")) ExpectWord("row");
        if (Word("fetch")) {
          if (!Word("next")) ExpectWord("first");
          query.fetch = ReadExpr();
          if (!Word("rows")) ExpectWord("row");
          ExpectWord("only");
        }
      }
    }
    return query;
  }

  std::vector<OrderItem> ReadOrderItems() {
    std::vector<OrderItem> items;
    do {
      OrderItem item{ReadExpr()};
      if (Word("desc")) {
        item.descending = true;
      } else {
        Word("asc");
      }
      items.push_back(std::move(item));
    } while (Punct(","));
    return items;
  }

  Select ReadSelect() {
    ExpectWord("select");
    Select select;
    if (Word("distinct")) {
      select.distinct = true;
    } else {
      Word("all");
    }
    if (Word("top")) {
      if (Punct("(")) {
        select.top = ReadExpr();
        ExpectPunct(")");
      } else {
        select.top = ReadPrimary();
      }
      select.top_percent = Word("percent");
    }
    do select.items.push_back(ReadSelectItem());
    while (Punct(","));
    if (Word("from")) {
      do select.from.push_back(ReadTableSource());
      while (Punct(","));
    }
    if (Word("where")) select.where = ReadExpr();
    if (PeekWord("group") && PeekWord("by", 1)) {
      at_ += 2;
      do select.group_by.push_back(ReadExpr());
      while (Punct(","));
    }
    if (Word("having")) select.having = ReadExpr();
    return select;
  }

  SelectItem ReadSelectItem() {
    SelectItem item;
    if (Punct("*")) {
      item.kind = SelectItem::Kind::kStar;
      return item;
    }
    // t.* and s.t.*
    std::size_t look = 0;
    while (PeekName(look) && PeekPunct(".", look + 1)) look += 2;
    if (look > 0 && PeekPunct("*", look)) {
      for (std::size_t i = 0; i < look; i += 2) item.qualifier.push_back(tokens_[at_ + i].text);
      at_ += look + 1;
      item.kind = SelectItem::Kind::kStar;
      return item;
    }
    // alias = expr
    if (PeekName() && PeekPunct("=", 1) && !PeekPunct(".", 1)) {
      const SqlToken* after = Peek(2);
      if (after != nullptr) {
        item.alias = tokens_[at_].text;
        at_ += 2;
        item.expr = ReadExpr();
        return item;
      }
    }
    item.expr = ReadExpr();
    if (Word("as")) {
      item.alias = ReadAlias();
    } else if (PeekName() || (Peek() != nullptr && Peek()->kind == SqlToken::Kind::kString)) {
      item.alias = ReadAlias();
    }
    return item;
  }

  std::string ReadAlias() {
    const SqlToken* token = Peek();
    if (token != nullptr && token->kind == SqlToken::Kind::kString) {
      ++at_;
      return token->text;
    }
    return ExpectName();
  }

  TableRef ReadTableSource() {
    TableRef left = ReadTablePrimary();
    for (;;) {
      TableRef::Join join;
      if (Word("join")) {
        join = TableRef::Join::kInner;
      } else if (Word("inner")) {
        ExpectWord("join");
        join = TableRef::Join::kInner;
      } else if (Word("left") || Word("right") || Word("full")) {
        const std::string& kind = tokens_[at_ - 1].text;
        join = EqualsIgnoringCase(kind, "left")    ? TableRef::Join::kLeft
               : EqualsIgnoringCase(kind, "right") ? TableRef::Join::kRight
                                                   : TableRef::Join::kFull;
        Word("outer");
        ExpectWord("join");
      } else if (PeekWord("cross") && PeekWord("join", 1)) {
        at_ += 2;
        join = TableRef::Join::kCross;
      } else {
        return left;
      }
      TableRef joined;
      joined.kind = TableRef::Kind::kJoin;
      joined.join = join;
      joined.sides.push_back(std::move(left));
      joined.sides.push_back(ReadTablePrimary());
      if (join != TableRef::Join::kCross) {
        ExpectWord("on");
        joined.on = ReadExpr();
      }
      left = std::move(joined);
    }
  }

  TableRef ReadTablePrimary() {
    TableRef table;
    if (Punct("(")) {
      if (PeekWord("select") || PeekWord("with")) {
        table.kind = TableRef::Kind::kDerived;
        table.query = std::make_shared<Query>(ReadQuery());
        ExpectPunct(")");
      } else {
        table = ReadTableSource();
        ExpectPunct(")");
        return table;
      }
    } else if (Peek() != nullptr && Peek()->kind == SqlToken::Kind::kWord && Peek()->text.rfind('@', 0) == 0 &&
               Peek()->text.rfind("@@", 0) != 0) {
      table.name = {tokens_[at_++].text};  // a table variable
    } else {
      table.name = ReadName();
      if (Punct("(")) {
        table.kind = TableRef::Kind::kFunction;
        if (!Punct(")")) {
          do table.args.push_back(ReadExpr());
          while (Punct(","));
          ExpectPunct(")");
        }
      }
    }
    if (Word("as")) {
      table.alias = ExpectName();
    } else if (PeekName() && !PeekWord("with")) {
      table.alias = ExpectName();
    }
    if (table.kind == TableRef::Kind::kDerived && Punct("(")) {
      do table.column_aliases.push_back(ExpectName());
      while (Punct(","));
      ExpectPunct(")");
    }
    // Table hints (WITH (NOLOCK), WITH (TABLOCKX)) change nothing over a read snapshot.
    if (PeekWord("with") && PeekPunct("(", 1)) {
      ++at_;
      SkipParenthesized();
    }
    return table;
  }

  // ---- expressions, loosest first ----
  Expr ReadExpr() { return ReadOr(); }

  static Expr Binary(std::string op, Expr left, Expr right) {
    Expr e;
    e.kind = Expr::Kind::kBinary;
    e.op = std::move(op);
    e.args.push_back(std::move(left));
    e.args.push_back(std::move(right));
    return e;
  }

  Expr ReadOr() {
    Expr left = ReadAnd();
    while (Word("or")) left = Binary("OR", std::move(left), ReadAnd());
    return left;
  }

  Expr ReadAnd() {
    Expr left = ReadNot();
    while (Word("and")) left = Binary("AND", std::move(left), ReadNot());
    return left;
  }

  Expr ReadNot() {
    if (Word("not")) {
      Expr e;
      e.kind = Expr::Kind::kUnary;
      e.op = "NOT";
      e.args.push_back(ReadNot());
      return e;
    }
    return ReadPredicate();
  }

  Expr ReadPredicate() {
    if (Word("exists")) {
      Expr e;
      e.kind = Expr::Kind::kExists;
      ExpectPunct("(");
      e.query = std::make_shared<Query>(ReadQuery());
      ExpectPunct(")");
      return e;
    }
    Expr left = ReadAdditive();
    static constexpr std::array<std::string_view, 9> kCompares = {"=", "<>", "!=", "<", "<=",
                                                                  ">", ">=", "!<", "!>"};
    for (std::string_view compare : kCompares) {
      if (Punct(compare)) {
        std::string op(compare);
        if (op == "!=") op = "<>";
        if (op == "!<") op = ">=";
        if (op == "!>") op = "<=";
        return Binary(op, std::move(left), ReadAdditive());
      }
    }
    if (Word("is")) {
      Expr e;
      e.kind = Expr::Kind::kIsNull;
      e.negated = Word("not");
      ExpectWord("null");
      e.args.push_back(std::move(left));
      return e;
    }
    const bool negated = PeekWord("not") && (PeekWord("in", 1) || PeekWord("between", 1) ||
                                            PeekWord("like", 1));
    if (negated) ++at_;
    Expr e;
    e.negated = negated;
    e.args.push_back(std::move(left));
    if (Word("in")) {
      e.kind = Expr::Kind::kIn;
      ExpectPunct("(");
      if (PeekWord("select") || PeekWord("with")) {
        e.query = std::make_shared<Query>(ReadQuery());
      } else {
        do e.args.push_back(ReadExpr());
        while (Punct(","));
      }
      ExpectPunct(")");
      return e;
    }
    if (Word("between")) {
      e.kind = Expr::Kind::kBetween;
      e.args.push_back(ReadAdditive());
      ExpectWord("and");
      e.args.push_back(ReadAdditive());
      return e;
    }
    if (Word("like")) {
      e.kind = Expr::Kind::kLike;
      e.args.push_back(ReadAdditive());
      if (Word("escape")) e.args.push_back(ReadAdditive());
      return e;
    }
    if (negated) Fail();
    return std::move(e.args[0]);
  }

  Expr ReadAdditive() {
    Expr left = ReadMultiplicative();
    for (;;) {
      std::string op;
      for (std::string_view candidate : {"+", "-", "&", "|", "^"}) {
        if (op.empty() && Punct(candidate)) op = candidate;
      }
      if (op.empty()) return left;
      left = Binary(op, std::move(left), ReadMultiplicative());
    }
  }

  Expr ReadMultiplicative() {
    Expr left = ReadUnary();
    for (;;) {
      std::string op;
      for (std::string_view candidate : {"*", "/", "%"}) {
        if (op.empty() && Punct(candidate)) op = candidate;
      }
      if (op.empty()) return left;
      left = Binary(op, std::move(left), ReadUnary());
    }
  }

  Expr ReadUnary() {
    for (std::string_view op : {"-", "+", "~"}) {
      if (Punct(op)) {
        Expr operand = ReadUnary();
        // A negative number is a literal, as SQL Server reads -1.
        if (op == "-" && operand.kind == Expr::Kind::kLiteral) {
          if (operand.value.kind == SqlValue::Kind::kInt) {
            operand.value.int_value = -operand.value.int_value;
            return operand;
          }
          if (operand.value.kind == SqlValue::Kind::kFloat) {
            operand.value.float_value = -operand.value.float_value;
            operand.value.bytes = "-" + operand.value.bytes;
            return operand;
          }
        }
        Expr e;
        e.kind = Expr::Kind::kUnary;
        e.op = op;
        e.args.push_back(std::move(operand));
        return e;
      }
    }
    return ReadPrimary();
  }

  SqlType ReadType() {
    std::string declaration = ExpectName();
    if (Punct("(")) {
      declaration += "(";
      do {
        const SqlToken* token = Peek();
        if (token == nullptr || (token->kind != SqlToken::Kind::kNumber && !token->IsName("max"))) {
          Fail();
        }
        declaration += token->text;
        ++at_;
        if (PeekPunct(",")) declaration += ",";
      } while (Punct(","));
      ExpectPunct(")");
      declaration += ")";
    }
    try {
      return SqlType::Parse(declaration);
    } catch (const std::exception&) {
      throw SqlError(errors::UndefinedType(declaration));
    }
  }

  Expr ReadPrimary() {
    const SqlToken* token = Peek();
    if (token == nullptr) Fail();
    Expr e;
    switch (token->kind) {
      case SqlToken::Kind::kNumber:
      case SqlToken::Kind::kString:
      case SqlToken::Kind::kBinary:
        e.kind = Expr::Kind::kLiteral;
        LiteralValue(*token, &e.value);
        ++at_;
        return e;
      case SqlToken::Kind::kParameter:
        e.kind = Expr::Kind::kParameter;
        e.value = values_[at_];
        ++at_;
        return e;
      case SqlToken::Kind::kPunct:
        if (Punct("(")) {
          if (PeekWord("select") || PeekWord("with")) {
            e.kind = Expr::Kind::kSubquery;
            e.query = std::make_shared<Query>(ReadQuery());
          } else {
            e = ReadExpr();
          }
          ExpectPunct(")");
          return e;
        }
        Fail();
      default:
        break;
    }
    if (token->kind == SqlToken::Kind::kWord && token->text.rfind("@@", 0) == 0) {
      e.kind = Expr::Kind::kGlobal;
      e.names.push_back(token->text);
      ++at_;
      return e;
    }
    if (Word("null")) {
      e.kind = Expr::Kind::kLiteral;
      return e;
    }
    if (Word("case")) return ReadCase();
    if ((PeekWord("cast") || PeekWord("try_cast")) && PeekPunct("(", 1)) {
      e.kind = Expr::Kind::kCast;
      e.try_cast = PeekWord("try_cast");
      at_ += 2;
      e.args.push_back(ReadExpr());
      ExpectWord("as");
      e.type = ReadType();
      ExpectPunct(")");
      return e;
    }
    if ((PeekWord("convert") || PeekWord("try_convert")) && PeekPunct("(", 1)) {
      e.kind = Expr::Kind::kCast;
      e.convert = true;
      e.try_cast = PeekWord("try_convert");
      at_ += 2;
      e.type = ReadType();
      ExpectPunct(",");
      e.args.push_back(ReadExpr());
      if (Punct(",")) e.args.push_back(ReadExpr());
      ExpectPunct(")");
      return e;
    }
    if (!PeekName()) Fail();
    Name name = ReadName();
    if (!Punct("(")) {
      e.kind = Expr::Kind::kColumn;
      e.names = std::move(name);
      return e;
    }
    e.kind = Expr::Kind::kFunction;
    e.names = std::move(name);
    if (Punct("*")) {
      e.star = true;
    } else if (!PeekPunct(")")) {
      e.distinct = Word("distinct");
      // DATEPART(TZOFFSET, x), DATEADD(minute, n, x): the date part is a word, kept as a column.
      do e.args.push_back(ReadExpr());
      while (Punct(","));
    }
    ExpectPunct(")");
    if (Word("over")) {
      e.over = true;
      ExpectPunct("(");
      if (PeekWord("partition") && PeekWord("by", 1)) {
        at_ += 2;
        do e.partition_by.push_back(ReadExpr());
        while (Punct(","));
      }
      if (PeekWord("order") && PeekWord("by", 1)) {
        at_ += 2;
        e.order_by = ReadOrderItems();
      }
      ExpectPunct(")");
    }
    return e;
  }

  Expr ReadCase() {
    Expr e;
    e.kind = Expr::Kind::kCase;
    if (!PeekWord("when")) {
      e.has_operand = true;
      e.args.push_back(ReadExpr());
    }
    if (!PeekWord("when")) Fail();
    while (Word("when")) {
      e.args.push_back(ReadExpr());
      ExpectWord("then");
      e.args.push_back(ReadExpr());
    }
    if (Word("else")) {
      e.has_else = true;
      e.args.push_back(ReadExpr());
    }
    ExpectWord("end");
    return e;
  }

  const std::vector<SqlToken>& tokens_;
  std::size_t at_;
  std::size_t end_;
  const std::vector<SqlValue>& values_;
};

}  // namespace

TableDeclaration ParseTableDeclaration(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end) {
  std::vector<SqlValue> values(tokens.size());
  return Parser(tokens, begin, end, values).WholeTableDeclaration();
}

Query ParseQuery(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end,
                 const std::vector<SqlValue>& values) {
  if (begin == end) throw SqlError(errors::IncorrectSyntax(""));
  return Parser(tokens, begin, end, values).WholeQuery();
}

bool StartsQuery(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end) {
  return begin < end && (tokens[begin].IsName("select") || tokens[begin].IsName("with"));
}

}  // namespace mssql_cdc::sim_server::tsql
