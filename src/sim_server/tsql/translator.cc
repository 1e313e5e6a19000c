#include "sim_server/tsql/translator.h"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <utility>

#include "sim/storage.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/tsql/catalog_views.h"
#include "sim_server/tsql/functions.h"
#include "sim_server/tsql/sqlite_text.h"

namespace mssql_cdc::sim_server::tsql {
namespace {

std::string Joined(const Name& name) {
  std::string text;
  for (const auto& part : name) text += (text.empty() ? "" : ".") + part;
  return text;
}

// A relation of a FROM clause, under the SQLite alias the translation gave it.
struct Bound {
  std::string alias;   // the name a qualifier matches: the alias, else the object's name
  std::string schema;  // of a named object without alias, for schema.table.column
  std::string sqlite_alias;
  std::vector<RelationColumn> columns;
};

struct Scope {
  std::vector<Bound> relations;
  const Scope* outer = nullptr;
};

SqlType ParameterType(const SqlValue& value) {
  if (value.kind == SqlValue::Kind::kNull && value.type_name.empty()) return types::Int();
  try {
    SqlType type = SqlType::Parse(value.type_name.empty() ? "nvarchar" : value.type_name);
    if (IsCharacter(type) && type.max_length <= 1) type.max_length = 4000;
    if (IsBinary(type) && type.max_length <= 1) type.max_length = 8000;
    return type;
  } catch (const std::exception&) {
    return types::NvarcharMax();
  }
}

// The type of a + b, a * b, ... of numbers: the operand of higher precedence.
SqlType ArithmeticType(const SqlType& a, const SqlType& b) {
  static const char* kOrder[] = {"float", "real", "decimal", "numeric", "money", "smallmoney",
                                 "bigint", "int", "smallint", "tinyint", "bit"};
  for (const char* name : kOrder) {
    if (a.name == name) return a;
    if (b.name == name) return b;
  }
  return a;
}

class Translator {
 public:
  explicit Translator(Session& session) : session_(session) {}

  Translation Run(const Query& query) {
    Translation translation;
    std::vector<Typed> outputs;
    translation.sql = QuerySql(query, nullptr, &outputs);
    for (const Typed& output : outputs) {
      translation.columns.push_back(Column(output.name, output.type, output.nullable));
    }
    translation.parameters = std::move(params_);
    return translation;
  }

 private:
  std::string Parameter(SqlValue value) {
    params_.push_back(std::move(value));
    return "?" + std::to_string(params_.size());
  }

  std::string NextAlias() { return "t" + std::to_string(++aliases_); }

  // ---- queries ----
  std::string QuerySql(const Query& query, const Scope* outer, std::vector<Typed>* outputs) {
    ctes_.push_back(&query.with);
    std::string sql;
    std::vector<std::vector<Typed>> branch_outputs(query.selects.size());
    const bool single = query.selects.size() == 1;
    for (std::size_t i = 0; i < query.selects.size(); ++i) {
      if (i > 0) sql += " " + query.set_operators[i - 1] + " ";
      sql += SelectSql(query.selects[i], outer, &branch_outputs[i],
                       single ? &query.order_by : nullptr);
    }
    *outputs = branch_outputs[0];
    if (!single) {
      for (const auto& branch : branch_outputs) {
        if (branch.size() != outputs->size()) {
          throw SqlError(tds::ServerError{205, 1, 16,
                                          "All queries combined using a UNION, INTERSECT or EXCEPT "
                                          "operator must have an equal number of expressions in "
                                          "their target lists."});
        }
      }
      if (!query.order_by.empty()) sql += " ORDER BY " + OrderByPosition(query.order_by, *outputs);
    }
    if (query.fetch || query.offset) {
      if (single && query.order_by.empty()) Fail102("OFFSET");
      sql += " LIMIT " + (query.fetch ? Expression(*query.fetch, Scope{}).sql : "-1");
      if (query.offset) sql += " OFFSET " + Expression(*query.offset, Scope{}).sql;
    }
    ctes_.pop_back();
    return sql;
  }

  // ORDER BY of a UNION: output columns, by name or position.
  std::string OrderByPosition(const std::vector<OrderItem>& items, const std::vector<Typed>& outputs) {
    std::string sql;
    for (const OrderItem& item : items) {
      std::size_t position = 0;
      if (item.expr.kind == Expr::Kind::kColumn && item.expr.names.size() == 1) {
        for (std::size_t i = 0; i < outputs.size() && position == 0; ++i) {
          if (EqualsIgnoringCase(outputs[i].name, item.expr.names[0])) position = i + 1;
        }
      } else if (item.expr.kind == Expr::Kind::kLiteral && item.expr.value.kind == SqlValue::Kind::kInt) {
        position = static_cast<std::size_t>(item.expr.value.int_value);
      }
      if (position == 0 || position > outputs.size()) {
        throw SqlError(tds::ServerError{104, 1, 16,
                                        "ORDER BY items must appear in the select list if the "
                                        "statement contains a UNION, INTERSECT or EXCEPT operator."});
      }
      sql += (sql.empty() ? "" : ", ") + std::to_string(position) + (item.descending ? " DESC" : "");
    }
    return sql;
  }

  std::string SelectSql(const Select& select, const Scope* outer, std::vector<Typed>* outputs,
                        const std::vector<OrderItem>* order_by) {
    Scope scope;
    scope.outer = outer;
    std::string from;
    for (const TableRef& table : select.from) {
      if (!from.empty()) from += ", ";
      from += TableSql(table, &scope);
    }
    std::string items;
    for (const SelectItem& item : select.items) {
      if (item.kind == SelectItem::Kind::kStar) {
        bool any = false;
        for (const Bound& bound : scope.relations) {
          if (!item.qualifier.empty() && !Qualifies(bound, item.qualifier)) continue;
          any = true;
          for (const RelationColumn& column : bound.columns) {
            outputs->push_back({bound.sqlite_alias + "." + column.sql, column.type, column.name,
                                column.nullable});
          }
        }
        if (!any) {
          if (item.qualifier.empty()) {
            throw SqlError(tds::ServerError{263, 1, 16,
                                            "Must specify table to select from."});
          }
          throw SqlError(tds::ServerError{107, 1, 16,
                                          "The column prefix '" + Joined(item.qualifier) +
                                              "' does not match with a table name or alias name "
                                              "used in the query."});
        }
        continue;
      }
      Typed typed = Expression(item.expr, scope);
      if (!item.alias.empty()) typed.name = item.alias;
      outputs->push_back(std::move(typed));
    }
    for (std::size_t i = 0; i < outputs->size(); ++i) {
      items += (i == 0 ? "" : ", ") + (*outputs)[i].sql + " AS " + SqlName("c" + std::to_string(i + 1));
    }
    std::string sql = std::string("SELECT ") + (select.distinct ? "DISTINCT " : "") + items;
    if (!from.empty()) sql += " FROM " + from;
    if (select.where) sql += " WHERE " + Expression(*select.where, scope).sql;
    if (!select.group_by.empty()) {
      sql += " GROUP BY ";
      for (std::size_t i = 0; i < select.group_by.size(); ++i) {
        sql += (i == 0 ? "" : ", ") + Expression(select.group_by[i], scope).sql;
      }
    }
    if (select.having) sql += " HAVING " + Expression(*select.having, scope).sql;
    if (order_by != nullptr && !order_by->empty()) {
      sql += " ORDER BY ";
      for (std::size_t i = 0; i < order_by->size(); ++i) {
        sql += (i == 0 ? "" : ", ") + OrderTerm((*order_by)[i], scope, *outputs);
      }
    }
    if (select.top) {
      if (select.top_percent) Fail102("PERCENT");
      const Typed top = Expression(*select.top, scope);
      sql += " LIMIT " + top.sql;
    }
    return sql;
  }

  // ORDER BY of one SELECT: a select-list alias, a position, or an expression of its sources.
  std::string OrderTerm(const OrderItem& item, const Scope& scope, const std::vector<Typed>& outputs) {
    std::string term;
    if (item.expr.kind == Expr::Kind::kColumn && item.expr.names.size() == 1) {
      for (std::size_t i = 0; i < outputs.size() && term.empty(); ++i) {
        if (EqualsIgnoringCase(outputs[i].name, item.expr.names[0]) && !Resolves(item.expr.names, scope)) {
          term = SqlName("c" + std::to_string(i + 1));
        }
      }
    } else if (item.expr.kind == Expr::Kind::kLiteral && item.expr.value.kind == SqlValue::Kind::kInt) {
      term = std::to_string(item.expr.value.int_value);
    }
    if (term.empty()) {
      const Typed typed = Expression(item.expr, scope);
      term = typed.sql + (IsCharacter(typed.type) ? std::string(" COLLATE ") + kCollation : "");
    }
    return term + (item.descending ? " DESC" : "");
  }

  // ---- FROM ----
  std::string TableSql(const TableRef& table, Scope* scope) {
    switch (table.kind) {
      case TableRef::Kind::kJoin: {
        const std::string left = TableSql(table.sides[0], scope);
        const std::string right = TableSql(table.sides[1], scope);
        static const std::map<TableRef::Join, std::string> kJoins = {
            {TableRef::Join::kInner, " JOIN "}, {TableRef::Join::kLeft, " LEFT JOIN "},
            {TableRef::Join::kRight, " RIGHT JOIN "}, {TableRef::Join::kFull, " FULL JOIN "},
            {TableRef::Join::kCross, " CROSS JOIN "}};
        std::string sql = left + kJoins.at(table.join) + right;
        if (table.on) sql += " ON " + Expression(*table.on, *scope).sql;
        return sql;
      }
      case TableRef::Kind::kDerived: {
        std::vector<Typed> outputs;
        const std::string inner = QuerySql(*table.query, nullptr, &outputs);
        if (table.alias.empty()) Fail102(")");
        return BindDerived(inner, outputs, table.alias, table.column_aliases, scope);
      }
      case TableRef::Kind::kFunction:
        return BindRelation(QueryFunction(table), table.alias.empty() ? table.name.back() : table.alias,
                            table.alias.empty() && table.name.size() > 1 ? table.name[0] : "", scope);
      case TableRef::Kind::kNamed:
        break;
    }
    if (table.name.size() == 1) {
      for (auto it = ctes_.rbegin(); it != ctes_.rend(); ++it) {
        for (const CommonTable& cte : **it) {
          if (!EqualsIgnoringCase(cte.name, table.name[0])) continue;
          std::vector<Typed> outputs;
          const std::string inner = QuerySql(*cte.query, nullptr, &outputs);
          return BindDerived(inner, outputs, table.alias.empty() ? cte.name : table.alias, cte.columns,
                             scope);
        }
      }
    }
    if (table.name.size() == 1 && table.name[0].starts_with('@')) {
      const TableVariable* variable = session_.table_variables().Find(table.name[0]);
      if (variable == nullptr) {
        throw SqlError(tds::ServerError{1087, 1, 15, "Must declare the table variable \"" + table.name[0] + "\"."});
      }
      Relation relation;
      relation.from_sql = "temp." + variable->storage;
      for (const auto& column : variable->columns) {
        relation.columns.push_back({column.name, column.type, true, SqlName(column.name)});
      }
      return BindRelation(std::move(relation), table.alias.empty() ? table.name[0] : table.alias, "", scope);
    }
    const std::string schema = table.name.size() >= 2 ? table.name[table.name.size() - 2] : "dbo";
    const std::string& name = table.name.back();
    if (table.name.size() > 2) throw SqlError(errors::InvalidObjectName(Joined(table.name)));
    return BindRelation(NamedRelation(schema, name, table.name), table.alias.empty() ? name : table.alias,
                        table.alias.empty() ? schema : "", scope);
  }

  std::string BindDerived(const std::string& inner, const std::vector<Typed>& outputs,
                          const std::string& alias, const std::vector<std::string>& column_aliases,
                          Scope* scope) {
    if (!column_aliases.empty() && column_aliases.size() != outputs.size()) {
      throw SqlError(tds::ServerError{8158, 1, 16,
                                      "'" + alias + "' has more columns than were specified in the "
                                                    "column list."});
    }
    Relation relation;
    relation.from_sql = "(" + inner + ")";
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::string& name = column_aliases.empty() ? outputs[i].name : column_aliases[i];
      if (name.empty()) {
        throw SqlError(tds::ServerError{8155, 2, 16,
                                        "No column name was specified for column " + std::to_string(i + 1) +
                                            " of '" + alias + "'."});
      }
      relation.columns.push_back({name, outputs[i].type, outputs[i].nullable, SqlName("c" + std::to_string(i + 1))});
    }
    return BindRelation(std::move(relation), alias, "", scope);
  }

  std::string BindRelation(Relation relation, const std::string& alias, const std::string& schema,
                           Scope* scope) {
    Bound bound{alias, schema, NextAlias(), std::move(relation.columns)};
    const std::string sql = relation.from_sql + " AS " + bound.sqlite_alias;
    scope->relations.push_back(std::move(bound));
    return sql;
  }

  Relation NamedRelation(const std::string& schema, const std::string& name, const Name& written) {
    if (auto view = CatalogView(session_, schema, name)) return std::move(*view);
    if (EqualsIgnoringCase(schema, "cdc")) {
      if (const auto instance = FindChangeTable(session_.catalog(), name)) {
        if (!session_.access().CanReadChangeTable(instance->name)) {
          throw SqlError(errors::SelectPermissionDenied(instance->name + "_CT", session_.database_name(), "cdc"));
        }
        return ChangeTable(*instance);
      }
    }
    if (const auto source = FindSourceTable(session_.catalog(), schema, name)) {
      if (!session_.access().CanReadTable(source->name)) {
        throw SqlError(errors::SelectPermissionDenied(source->name.name, session_.database_name(),
                                                      source->name.schema));
      }
      Relation relation;
      relation.from_sql = SqlName(sim::SourceTableStorageName(source->name.schema, source->name.name));
      for (const auto& column : source->columns) {
        relation.columns.push_back({column.name, column.type, column.nullable, SqlName(column.name)});
      }
      return relation;
    }
    throw SqlError(errors::InvalidObjectName(Joined(written)));
  }

  static Relation ChangeTable(const sim::CaptureInstance& instance) {
    Relation relation;
    relation.from_sql = SqlName(sim::ChangeTableStorageName(instance.name));
    auto add = [&](const std::string& name, const SqlType& type, bool nullable) {
      relation.columns.push_back({name, type, nullable, SqlName(name)});
    };
    add("__$start_lsn", types::Binary10(), false);
    add("__$end_lsn", types::Binary10(), true);
    add("__$seqval", types::Binary10(), false);
    add("__$operation", types::Int(), false);
    add("__$update_mask", types::Varbinary128(), true);
    for (const auto& column : instance.columns) add(column.name, column.type, true);
    add("__$command_id", types::Int(), true);
    return relation;
  }

  // cdc.fn_cdc_get_all_changes_<instance>(from, to, row filter).
  Relation QueryFunction(const TableRef& table) {
    static constexpr std::string_view kAllChanges = "fn_cdc_get_all_changes_";
    const std::string& name = table.name.back();
    const bool cdc = table.name.size() == 2 && EqualsIgnoringCase(table.name[0], "cdc");
    if (!cdc || name.size() <= kAllChanges.size() ||
        !EqualsIgnoringCase(std::string_view(name).substr(0, kAllChanges.size()), kAllChanges)) {
      throw SqlError(errors::InvalidObjectName(Joined(table.name)));
    }
    const auto instance = FindCaptureInstance(session_.catalog(), name.substr(kAllChanges.size()));
    if (!instance) throw SqlError(errors::InvalidObjectName(Joined(table.name)));
    if (!session_.access().CanReadChangeTable(instance->name)) {
      throw SqlError(errors::SelectPermissionDenied(name, session_.database_name(), "cdc"));
    }
    if (table.args.size() != 3) {
      throw SqlError(tds::ServerError{216, 1, 16, "Parameters were not supplied for the function '" +
                                                       Joined(table.name) + "'."});
    }
    const SqlValue from = Evaluate(Expression(table.args[0], Scope{}));
    const SqlValue to = Evaluate(Expression(table.args[1], Scope{}));
    const auto option = AsText(Evaluate(Expression(table.args[2], Scope{})));
    const bool all = option && EqualsIgnoringCase(*option, "all");
    const bool all_update_old = option && EqualsIgnoringCase(*option, "all update old");
    const auto from_lsn = AsLsn(from);
    const auto to_lsn = AsLsn(to);
    const auto max_lsn = session_.source().MaxLsn();
    if (!from_lsn || !to_lsn || !max_lsn || (!all && !all_update_old) ||
        *from_lsn < session_.source().MinLsn(instance->name) || *to_lsn > *max_lsn || *from_lsn > *to_lsn) {
      throw SqlError(errors::InsufficientArguments());
    }
    Relation changes = ChangeTable(*instance);
    // The function's columns: no __$end_lsn, no __$command_id.
    changes.columns.erase(changes.columns.begin() + 1);
    changes.columns.pop_back();
    std::string select;
    for (const auto& column : changes.columns) select += (select.empty() ? "" : ", ") + column.sql;
    SqlValue low, high;
    low.kind = high.kind = SqlValue::Kind::kBinary;
    low.bytes.assign(reinterpret_cast<const char*>(from_lsn->data()), Lsn::kSize);
    high.bytes.assign(reinterpret_cast<const char*>(to_lsn->data()), Lsn::kSize);
    changes.from_sql = "(SELECT " + select + " FROM " + changes.from_sql + " WHERE \"__$start_lsn\" BETWEEN " +
                       Parameter(low) + " AND " + Parameter(high) +
                       (all ? " AND \"__$operation\" <> 3" : "") + ")";
    return changes;
  }

  // The value of a constant expression, computed by SQLite with the parameters bound so far.
  SqlValue Evaluate(const Typed& typed) {
    RegisterQueryFunctions(session_);
    sqlite3_stmt* statement = nullptr;
    const std::string sql = "SELECT " + typed.sql;
    if (sqlite3_prepare_v2(session_.db().handle(), sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      sqlite3_finalize(statement);
      Fail102("(");
    }
    BindAll(statement, params_);
    SqlValue value;
    if (sqlite3_step(statement) == SQLITE_ROW) value = FromSqlite(sqlite3_column_value(statement, 0));
    sqlite3_finalize(statement);
    value.type_name = typed.type.name;
    return value;
  }

  // ---- names ----
  static bool Qualifies(const Bound& bound, const Name& qualifier) {
    if (qualifier.size() == 1) return EqualsIgnoringCase(bound.alias, qualifier[0]);
    if (qualifier.size() == 2) {
      return !bound.schema.empty() && EqualsIgnoringCase(bound.schema, qualifier[0]) &&
             EqualsIgnoringCase(bound.alias, qualifier[1]);
    }
    return false;
  }

  bool Resolves(const Name& names, const Scope& scope) const {
    for (const Bound& bound : scope.relations) {
      for (const auto& column : bound.columns) {
        if (EqualsIgnoringCase(column.name, names.back())) return true;
      }
    }
    return false;
  }

  Typed ColumnRef(const Name& names, const Scope& scope) {
    const Name qualifier(names.begin(), names.end() - 1);
    for (const Scope* s = &scope; s != nullptr; s = s->outer) {
      const Typed* found = nullptr;
      Typed candidate;
      bool qualifier_matched = false;
      for (const Bound& bound : s->relations) {
        if (!qualifier.empty() && !Qualifies(bound, qualifier)) continue;
        qualifier_matched = true;
        for (const auto& column : bound.columns) {
          if (!EqualsIgnoringCase(column.name, names.back())) continue;
          if (found != nullptr) {
            throw SqlError(tds::ServerError{209, 1, 16, "Ambiguous column name '" + names.back() + "'."});
          }
          candidate = {bound.sqlite_alias + "." + column.sql, column.type, column.name, column.nullable};
          found = &candidate;
        }
      }
      if (found != nullptr) return candidate;
      if (qualifier_matched && !qualifier.empty()) break;
    }
    if (!qualifier.empty()) {
      bool any = false;
      for (const Scope* s = &scope; s != nullptr && !any; s = s->outer) {
        for (const Bound& bound : s->relations) any = any || Qualifies(bound, qualifier);
      }
      if (!any) {
        throw SqlError(tds::ServerError{4104, 1, 16,
                                        "The multi-part identifier \"" + Joined(names) + "\" could not be bound."});
      }
    }
    throw SqlError(errors::InvalidColumnName(names.back()));
  }

  // ---- expressions ----
  Typed Expression(const Expr& e, const Scope& scope) {
    switch (e.kind) {
      case Expr::Kind::kColumn:
        return ColumnRef(e.names, scope);
      case Expr::Kind::kLiteral:
        return Literal(e.value);
      case Expr::Kind::kParameter:
        return {Parameter(e.value), ParameterType(e.value), "", true};
      case Expr::Kind::kGlobal:
        return Global(e.names[0]);
      case Expr::Kind::kUnary: {
        Typed operand = Expression(e.args[0], scope);
        if (e.op == "NOT") return {"(NOT " + operand.sql + ")", types::Bit(), "", true};
        return {"(" + e.op + operand.sql + ")", operand.type, "", operand.nullable};
      }
      case Expr::Kind::kBinary:
        return BinaryOp(e, scope);
      case Expr::Kind::kFunction: {
        FunctionContext context{session_, [&](const Expr& arg) { return Expression(arg, scope); },
                                [&](SqlValue value) { return Parameter(std::move(value)); }};
        return TranslateFunction(context, e);
      }
      case Expr::Kind::kCase: {
        std::string sql = "CASE";
        std::size_t i = 0;
        if (e.has_operand) sql += " " + Expression(e.args[i++], scope).sql;
        std::optional<SqlType> type;
        const std::size_t pairs_end = e.args.size() - (e.has_else ? 1 : 0);
        for (; i < pairs_end; i += 2) {
          sql += " WHEN " + Expression(e.args[i], scope).sql;
          Typed then = Expression(e.args[i + 1], scope);
          if (!type) type = then.type;
          sql += " THEN " + then.sql;
        }
        if (e.has_else) {
          Typed otherwise = Expression(e.args.back(), scope);
          if (!type) type = otherwise.type;
          sql += " ELSE " + otherwise.sql;
        }
        return {sql + " END", type.value_or(types::Int()), "", true};
      }
      case Expr::Kind::kCast:
        return Cast(e, scope);
      case Expr::Kind::kSubquery: {
        std::vector<Typed> outputs;
        const std::string inner = QuerySql(*e.query, &scope, &outputs);
        if (outputs.size() != 1) {
          throw SqlError(tds::ServerError{116, 1, 16,
                                          "Only one expression can be specified in the select list when "
                                          "the subquery is not introduced with EXISTS."});
        }
        return {"(" + inner + ")", outputs[0].type, "", true};
      }
      case Expr::Kind::kExists: {
        std::vector<Typed> outputs;
        return {"EXISTS (" + QuerySql(*e.query, &scope, &outputs) + ")", types::Bit(), "", false};
      }
      case Expr::Kind::kIn: {
        const Typed left = Expression(e.args[0], scope);
        std::string list;
        if (e.query) {
          std::vector<Typed> outputs;
          list = QuerySql(*e.query, &scope, &outputs);
        } else {
          for (std::size_t i = 1; i < e.args.size(); ++i) {
            list += (i == 1 ? "" : ", ") + Comparable(Expression(e.args[i], scope), left.type);
          }
        }
        return {"(" + Collated(left) + (e.negated ? " NOT IN (" : " IN (") + list + "))", types::Bit(), "", true};
      }
      case Expr::Kind::kBetween: {
        const Typed value = Expression(e.args[0], scope);
        const std::string low = Comparable(Expression(e.args[1], scope), value.type);
        const std::string high = Comparable(Expression(e.args[2], scope), value.type);
        return {"(" + Collated(value) + (e.negated ? " NOT BETWEEN " : " BETWEEN ") + low + " AND " + high + ")",
                types::Bit(), "", true};
      }
      case Expr::Kind::kIsNull:
        return {"(" + Expression(e.args[0], scope).sql + (e.negated ? " IS NOT NULL)" : " IS NULL)"), types::Bit(),
                "", false};
      case Expr::Kind::kLike: {
        std::string sql = "(" + Expression(e.args[0], scope).sql + (e.negated ? " NOT LIKE " : " LIKE ") +
                          Expression(e.args[1], scope).sql;
        if (e.args.size() > 2) sql += " ESCAPE " + Expression(e.args[2], scope).sql;
        return {sql + ")", types::Bit(), "", true};
      }
    }
    Fail102("");
  }

  // A string operand compares under the server's collation.
  static std::string Collated(const Typed& typed) {
    return IsCharacter(typed.type) ? typed.sql + " COLLATE " + kCollation : typed.sql;
  }

  // The other side of a comparison with a value of `type`: a binary constant padded or cut to a
  // fixed-length binary column's length, as SQL Server pads the shorter operand.
  std::string Comparable(const Typed& other, const SqlType& type) {
    if (IsBinary(type) && IsBinary(other.type) && type.name == "binary" && type.max_length > 0 &&
        other.sql.rfind("X'", 0) == 0) {
      std::string hex = other.sql.substr(2, other.sql.size() - 3);
      const std::size_t want = static_cast<std::size_t>(type.max_length) * 2;
      if (hex.size() < want) hex.append(want - hex.size(), '0');
      if (hex.size() > want && hex.find_first_not_of('0', want) == std::string::npos) hex.resize(want);
      return "X'" + hex + "'";
    }
    if (IsBinary(type) && IsBinary(other.type) && other.type.max_length != type.max_length) {
      return "tsql_binary_key(" + other.sql + ")";
    }
    return other.sql;
  }

  Typed BinaryOp(const Expr& e, const Scope& scope) {
    Typed left = Expression(e.args[0], scope);
    Typed right = Expression(e.args[1], scope);
    const std::string& op = e.op;
    if (op == "AND" || op == "OR") return {"(" + left.sql + " " + op + " " + right.sql + ")", types::Bit(), "", true};
    if (op == "=" || op == "<>" || op == "<" || op == "<=" || op == ">" || op == ">=") {
      std::string l = left.sql;
      std::string r = right.sql;
      if (IsBinary(left.type) && IsBinary(right.type)) {
        if (left.sql.rfind("X'", 0) == 0) {
          l = Comparable(left, right.type);
        } else {
          r = Comparable(right, left.type);
          if (r.rfind("tsql_binary_key(", 0) == 0) l = "tsql_binary_key(" + l + ")";
        }
      }
      if (IsCharacter(left.type) || IsCharacter(right.type)) l += std::string(" COLLATE ") + kCollation;
      if (left.type.family() == SqlTypeFamily::kDecimal) l = "CAST(" + l + " AS REAL)";
      if (right.type.family() == SqlTypeFamily::kDecimal) r = "CAST(" + r + " AS REAL)";
      return {"(" + l + " " + op + " " + r + ")", types::Bit(), "", true};
    }
    if (op == "+" && (IsCharacter(left.type) || IsCharacter(right.type))) {
      SqlType type = IsCharacter(left.type) ? left.type : right.type;
      if (left.type.name == "nvarchar" || right.type.name == "nvarchar" || left.type.name == "nchar" ||
          right.type.name == "nchar") {
        type.name = "nvarchar";
      }
      type.max_length = left.type.IsMax() || right.type.IsMax() ? -1
                        : std::min(left.type.max_length + right.type.max_length, type.name == "nvarchar" ? 4000 : 8000);
      return {"(" + left.sql + " || " + right.sql + ")", type, "", true};
    }
    if (!IsNumber(left.type) || !IsNumber(right.type)) {
      throw SqlError(tds::ServerError{8117, 1, 16,
                                      "Operand data type " + (IsNumber(left.type) ? right.type : left.type).name +
                                          " is invalid for " + OperatorName(op) + " operator."});
    }
    return {"(" + left.sql + " " + op + " " + right.sql + ")", ArithmeticType(left.type, right.type), "", true};
  }

  static std::string OperatorName(const std::string& op) {
    if (op == "+") return "add";
    if (op == "-") return "subtract";
    if (op == "*") return "multiply";
    if (op == "/") return "divide";
    if (op == "%") return "modulo";
    return "boolean " + op;
  }

  Typed Cast(const Expr& e, const Scope& scope) {
    Typed value = Expression(e.args[0], scope);
    const SqlType& type = e.type;
    const int style = e.args.size() > 1 ? static_cast<int>(AsInteger(Evaluate(Expression(e.args[1], scope))).value_or(0)) : 0;
    std::string sql = value.sql;
    switch (type.family()) {
      case SqlTypeFamily::kInteger:
        sql = "CAST(" + sql + " AS INTEGER)";
        break;
      case SqlTypeFamily::kFloatingPoint:
        sql = "CAST(" + sql + " AS REAL)";
        break;
      case SqlTypeFamily::kCharacter:
        if (IsBinary(value.type)) {
          // CONVERT(varchar, binary, 1): 0x and upper-case hex digits; style 2 without 0x.
          sql = style == 1 ? "('0x' || hex(" + sql + "))" : style == 2 ? "hex(" + sql + ")" : "CAST(" + sql + " AS TEXT)";
        } else if (!IsCharacter(value.type)) {
          sql = "CAST(" + sql + " AS TEXT)";
        }
        if (type.max_length > 0) sql = "substr(" + sql + ", 1, " + std::to_string(type.max_length) + ")";
        break;
      case SqlTypeFamily::kBinary:
        if (IsCharacter(value.type) && (style == 1 || style == 2)) {
          sql = "tsql_unhex(" + sql + ", " + std::to_string(style) + ")";
        }
        break;
      default:
        break;
    }
    return {sql, type, "", value.nullable};
  }

  Typed Literal(const SqlValue& value) {
    switch (value.kind) {
      case SqlValue::Kind::kNull:
        return {"NULL", types::Int(), "", true};
      case SqlValue::Kind::kInt:
        return {std::to_string(value.int_value), value.type_name == "bigint" ? types::Bigint() : types::Int(), "", false};
      case SqlValue::Kind::kFloat: {
        // A numeric literal: its precision and scale from its digits.
        const std::string& digits = value.bytes;
        const auto point = digits.find('.');
        int scale = point == std::string::npos ? 0 : static_cast<int>(digits.size() - point - 1);
        int precision = static_cast<int>(digits.size()) - (point == std::string::npos ? 0 : 1) -
                        (!digits.empty() && digits[0] == '-' ? 1 : 0);
        SqlType type = SqlType::Parse("numeric(" + std::to_string(std::max(precision, 1)) + "," +
                                      std::to_string(scale) + ")");
        return {digits, type, "", false};
      }
      case SqlValue::Kind::kText: {
        SqlType type = SqlType::Parse(value.type_name == "nvarchar" ? "nvarchar" : "varchar");
        type.max_length = std::max<int>(1, static_cast<int>(value.bytes.size()));
        return {SqlString(value.bytes), type, "", false};
      }
      case SqlValue::Kind::kBinary: {
        static const char* kHex = "0123456789ABCDEF";
        std::string hex = "X'";
        for (unsigned char c : value.bytes) {
          hex += kHex[c >> 4];
          hex += kHex[c & 15];
        }
        SqlType type = SqlType::Parse("varbinary");
        type.max_length = std::max<int>(1, static_cast<int>(value.bytes.size()));
        return {hex + "'", type, "", false};
      }
      default:
        break;
    }
    Fail102("");
  }

  Typed Global(const std::string& name) {
    if (EqualsIgnoringCase(name, "@@TRANCOUNT")) {
      return {std::to_string(session_.transactions().count()), types::Int(), "", false};
    }
    if (EqualsIgnoringCase(name, "@@SPID")) return {std::to_string(session_.spid()), types::Smallint(), "", false};
    if (EqualsIgnoringCase(name, "@@SERVERNAME")) {
      return {SqlString(kSimServerName), types::Sysname(), "", true};
    }
    throw SqlError(errors::MustDeclareVariable(name));
  }

  [[noreturn]] static void Fail102(std::string_view near) { throw SqlError(errors::IncorrectSyntax(near)); }

 public:
  static void BindAll(sqlite3_stmt* statement, const std::vector<SqlValue>& params) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      const SqlValue& p = params[i];
      const int at = static_cast<int>(i + 1);
      switch (p.kind) {
        case SqlValue::Kind::kInt:
          sqlite3_bind_int64(statement, at, p.int_value);
          break;
        case SqlValue::Kind::kFloat:
          sqlite3_bind_double(statement, at, p.float_value);
          break;
        case SqlValue::Kind::kText:
          sqlite3_bind_text(statement, at, p.bytes.data(), static_cast<int>(p.bytes.size()), SQLITE_TRANSIENT);
          break;
        case SqlValue::Kind::kBinary:
          sqlite3_bind_blob(statement, at, p.bytes.data(), static_cast<int>(p.bytes.size()), SQLITE_TRANSIENT);
          break;
        default:
          sqlite3_bind_null(statement, at);
          break;
      }
    }
  }

  static SqlValue FromSqlite(sqlite3_value* value) {
    SqlValue out;
    switch (sqlite3_value_type(value)) {
      case SQLITE_INTEGER:
        out.kind = SqlValue::Kind::kInt;
        out.int_value = sqlite3_value_int64(value);
        break;
      case SQLITE_FLOAT:
        out.kind = SqlValue::Kind::kFloat;
        out.float_value = sqlite3_value_double(value);
        break;
      case SQLITE_TEXT:
        out.kind = SqlValue::Kind::kText;
        out.bytes.assign(reinterpret_cast<const char*>(sqlite3_value_text(value)),
                         static_cast<std::size_t>(sqlite3_value_bytes(value)));
        break;
      case SQLITE_BLOB:
        out.kind = SqlValue::Kind::kBinary;
        out.bytes.assign(static_cast<const char*>(sqlite3_value_blob(value)),
                         static_cast<std::size_t>(sqlite3_value_bytes(value)));
        break;
      default:
        break;
    }
    return out;
  }

 private:
  Session& session_;
  std::vector<SqlValue> params_;
  int aliases_ = 0;
  std::vector<const std::vector<CommonTable>*> ctes_;
};

}  // namespace

Translation Translate(Session& session, const Query& query) {
  RegisterQueryFunctions(session);
  return Translator(session).Run(query);
}

void BindParameters(sqlite3_stmt* statement, const std::vector<SqlValue>& params) {
  Translator::BindAll(statement, params);
}

}  // namespace mssql_cdc::sim_server::tsql
