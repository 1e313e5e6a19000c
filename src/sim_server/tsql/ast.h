// The syntax tree of the T-SQL queries the front end reads (parser.h): a SELECT with its
// common table expressions, joins, derived tables, table-valued functions, grouping, window
// functions and set operations; expressions with SQL Server's operators, CASE, CAST and
// CONVERT. Names are kept as written, unquoted, part by part; parameter values are bound by
// the time the tree is made.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sql_type.h"
#include "sim_server/sql_value.h"

namespace mssql_cdc::sim_server::tsql {

struct Query;

// A multi-part name: [database.][schema.]object, or [table.]column.
using Name = std::vector<std::string>;

struct Expr;

struct OrderItem;

struct Expr {
  enum class Kind {
    kColumn,     // names: [qualifier.]column
    kLiteral,    // value (a number, string, binary or NULL written in the text)
    kParameter,  // value (bound from the request)
    kGlobal,     // names[0]: @@TRANCOUNT, @@VERSION, ...
    kUnary,      // op: "-", "+", "~", "NOT"; args[0]
    kBinary,     // op: "+", "-", "*", "/", "%", "&", "|", "^", "=", "<>", "<", "<=", ">",
                 // ">=", "AND", "OR"; args[0] op args[1]
    kFunction,   // names (the function's parts), args; star: COUNT(*); distinct; over
    kCase,       // args: [operand], then WHEN/THEN pairs, then [ELSE]; has_operand, has_else
    kCast,       // CAST(args[0] AS type), CONVERT(type, args[0][, args[1] style]); try_cast
    kSubquery,   // (query): a scalar
    kExists,     // EXISTS (query)
    kIn,         // args[0] [NOT] IN (args[1..]) or (query); negated
    kBetween,    // args[0] [NOT] BETWEEN args[1] AND args[2]; negated
    kIsNull,     // args[0] IS [NOT] NULL; negated
    kLike,       // args[0] [NOT] LIKE args[1]; negated
  };
  Kind kind = Kind::kLiteral;
  Name names;
  std::string op;
  SqlValue value;
  std::vector<Expr> args;
  bool negated = false;
  bool distinct = false;
  bool star = false;
  bool has_operand = false;
  bool has_else = false;
  bool try_cast = false;
  bool convert = false;  // written as CONVERT (its style, when given, is the last argument)
  SqlType type;
  std::shared_ptr<Query> query;
  // OVER (PARTITION BY ... ORDER BY ...) of a window function.
  bool over = false;
  std::vector<Expr> partition_by;
  std::vector<OrderItem> order_by;
};

struct OrderItem {
  Expr expr;
  bool descending = false;
};

struct SelectItem {
  enum class Kind { kExpr, kStar };
  Kind kind = Kind::kExpr;
  Expr expr;
  std::string alias;  // empty when none was given
  Name qualifier;     // kStar: t.* (empty for *)
};

struct TableRef {
  enum class Kind { kNamed, kFunction, kDerived, kJoin };
  Kind kind = Kind::kNamed;
  Name name;                   // kNamed, kFunction
  std::vector<Expr> args;      // kFunction
  std::shared_ptr<Query> query;  // kDerived
  std::string alias;
  std::vector<std::string> column_aliases;  // kDerived: AS t(a, b)
  // kJoin: left JOIN right [ON on]
  enum class Join { kInner, kLeft, kRight, kFull, kCross };
  Join join = Join::kInner;
  std::vector<TableRef> sides;  // left, right
  std::optional<Expr> on;
};

struct Select {
  bool distinct = false;
  std::optional<Expr> top;
  bool top_percent = false;
  std::vector<SelectItem> items;
  std::vector<TableRef> from;  // comma-separated sources: a cross join
  std::optional<Expr> where;
  std::vector<Expr> group_by;
  std::optional<Expr> having;
};

struct CommonTable {
  std::string name;
  std::vector<std::string> columns;
  std::shared_ptr<Query> query;
};

// SELECTs joined by UNION [ALL], EXCEPT and INTERSECT, with the ORDER BY and OFFSET/FETCH of
// the whole.
struct Query {
  std::vector<CommonTable> with;
  std::vector<Select> selects;
  std::vector<std::string> set_operators;  // between selects: "UNION ALL", "UNION", ...
  std::vector<OrderItem> order_by;
  std::optional<Expr> offset;
  std::optional<Expr> fetch;
};

}  // namespace mssql_cdc::sim_server::tsql
