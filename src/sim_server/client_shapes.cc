// The shapes of the statements of source/odbc/statements.h. The fixed ones are matched
// against the constants themselves, so a change there changes what is recognised here; the
// built ones (split points, change rows, snapshot rows in key ranges, key seeks) by their pieces, capturing names,
// counts and column lists.
#include <optional>
#include <utility>

#include "sim_server/server_errors.h"
#include "sim_server/shapes.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::sim_server {
namespace {

namespace sql = odbc_sql;

// ---- the fixed statements of statements.h, matched against their own text ----

template <typename Query>
bool Fixed(TokenCursor& cursor, const Phrase& phrase, RecognizedStatement* out,
           std::vector<SqlValue>* values = nullptr) {
  if (!cursor.Match(phrase, values) || !cursor.End()) return false;
  *out = Query{};
  return true;
}

bool TimeZoneSupport(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kHasTimeZoneId);
  return Fixed<TimeZoneSupportQuery>(cursor, phrase, out);
}

bool TimeZoneId(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kTimeZoneId);
  return Fixed<TimeZoneIdQuery>(cursor, phrase, out);
}

bool MaxLsn(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kMaxLsn);
  return Fixed<MaxLsnQuery>(cursor, phrase, out);
}

bool MinLsn(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kMinLsn);
  std::vector<SqlValue> values;
  if (!Fixed<MinLsnQuery>(cursor, phrase, out, &values)) return false;
  *out = MinLsnQuery{std::move(values[0])};
  return true;
}

bool NthCommitAfter(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kNthCommitAfter);
  std::vector<SqlValue> values;
  if (!Fixed<NthCommitAfterQuery>(cursor, phrase, out, &values)) return false;
  *out = NthCommitAfterQuery{std::move(values[0]), std::move(values[1])};
  return true;
}

bool TimeToLsn(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kTimeToLsn);
  std::vector<SqlValue> values;
  if (!Fixed<TimeToLsnQuery>(cursor, phrase, out, &values)) return false;
  *out = TimeToLsnQuery{std::move(values[0])};
  return true;
}

bool CommitTime(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase exact(sql::kCommitTime);
  static const Phrase at_or_before(sql::kCommitTimeAtOrBefore);
  std::vector<SqlValue> values;
  if (Fixed<CommitTimeQuery>(cursor, exact, out, &values)) {
    *out = CommitTimeQuery{std::move(values[0]), false};
    return true;
  }
  if (Fixed<CommitTimeQuery>(cursor, at_or_before, out, &values)) {
    *out = CommitTimeQuery{std::move(values[0]), true};
    return true;
  }
  return false;
}

bool SourceColumns(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kSourceColumns);
  std::vector<SqlValue> values;
  if (!Fixed<SourceColumnsQuery>(cursor, phrase, out, &values)) return false;
  *out = SourceColumnsQuery{std::move(values[0])};
  return true;
}

bool UserName(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(sql::kUserName);
  return Fixed<UserNameQuery>(cursor, phrase, out);
}

// ---- the catalog procedures ----

// The one @capture_instance argument of sp_cdc_get_captured_columns / sp_cdc_get_ddl_history.
std::optional<SqlValue> CaptureInstanceArgument(TokenCursor& cursor, std::string_view procedure) {
  std::vector<ProcedureArgument> arguments;
  if (!ProcedureCall(cursor, procedure, &arguments) || arguments.size() != 1) return std::nullopt;
  if (!arguments[0].name.empty() && !EqualsIgnoringCase(arguments[0].name, "@capture_instance")) {
    return std::nullopt;
  }
  return std::move(arguments[0].value);
}

// Without arguments, or with @source_schema and @source_name (by name or position).
bool ListCaptureInstances(TokenCursor& cursor, RecognizedStatement* out) {
  std::vector<ProcedureArgument> arguments;
  if (!ProcedureCall(cursor, "sp_cdc_help_change_data_capture", &arguments)) return false;
  ListCaptureInstancesQuery query;
  if (arguments.size() == 2) {
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string& name = arguments[i].name;
      const bool schema = name.empty() ? i == 0 : EqualsIgnoringCase(name, "@source_schema");
      if (!name.empty() && !schema && !EqualsIgnoringCase(name, "@source_name")) return false;
      (schema ? query.source_schema : query.source_name) = std::move(arguments[i].value);
    }
  } else if (!arguments.empty()) {
    return cursor.Reject();
  }
  *out = std::move(query);
  return true;
}

bool CapturedColumns(TokenCursor& cursor, RecognizedStatement* out) {
  auto instance = CaptureInstanceArgument(cursor, "sp_cdc_get_captured_columns");
  if (!instance) return false;
  *out = CapturedColumnsQuery{std::move(*instance)};
  return true;
}

bool DdlHistory(TokenCursor& cursor, RecognizedStatement* out) {
  auto instance = CaptureInstanceArgument(cursor, "sp_cdc_get_ddl_history");
  if (!instance) return false;
  *out = DdlHistoryQuery{std::move(*instance)};
  return true;
}

// ---- the built statements of statements.h ----

bool SplitPoints(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head(
      "SELECT MAX(__$start_lsn) AS b, sys.fn_cdc_increment_lsn(MAX(__$start_lsn)) AS n, "
      "COUNT_BIG(*) AS r FROM (SELECT __$start_lsn, NTILE(");
  static const Phrase over(") OVER (ORDER BY __$start_lsn) AS g FROM cdc.");
  static const Phrase tail(
      "WHERE __$start_lsn BETWEEN ? AND ?) x GROUP BY g ORDER BY b");
  SplitPointsQuery query;
  std::vector<SqlValue> values;
  if (!cursor.Match(head) || !cursor.Integer(&query.tiles) || !cursor.Match(over) ||
      !cursor.Name(&query.change_table) || !cursor.Match(tail, &values) || !cursor.End()) {
    return false;
  }
  query.from = std::move(values[0]);
  query.to = std::move(values[1]);
  *out = std::move(query);
  return true;
}

bool ChangeRows(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head("SELECT c.[__$start_lsn], c.[__$seqval], c.[__$operation],");
  static const Phrase command_id("c.[__$command_id],");
  static const Phrase commit_time("m.[tran_end_time]");
  static const Phrase next_column(", c.");
  static const Phrase from("FROM cdc.");
  static const Phrase tail(
      "c JOIN cdc.lsn_time_mapping m ON m.[start_lsn] = c.[__$start_lsn] "
      "WHERE c.[__$start_lsn] BETWEEN ? AND ? ORDER BY c.[__$start_lsn], c.[__$command_id], "
      "c.[__$seqval], c.[__$operation]");
  ChangeRowsQuery query;
  if (!cursor.Match(head)) return false;
  query.include_command_id = cursor.Match(command_id);
  if (!cursor.Match(commit_time)) return false;
  while (cursor.Match(next_column)) {
    std::string column;
    if (!cursor.Name(&column)) return false;
    query.columns.push_back(std::move(column));
  }
  std::vector<SqlValue> values;
  if (!cursor.Match(from) || !cursor.Name(&query.change_table) || !cursor.Match(tail, &values) ||
      !cursor.End()) {
    return false;
  }
  query.from = std::move(values[0]);
  query.to = std::move(values[1]);
  *out = std::move(query);
  return true;
}

// "decimal(18,2)", "nvarchar(max)", "int": the type of CAST(NULL AS type), as written.
bool TypeName(TokenCursor& cursor, std::string* type) {
  if (!cursor.Name(type)) return false;
  TokenCursor arguments = cursor;
  if (!arguments.Punct("(")) return true;
  std::string text = *type + "(";
  while (true) {
    const SqlToken* token = arguments.Peek();
    if (token == nullptr) return false;
    if (token->IsPunct(")")) break;
    if (token->kind != SqlToken::Kind::kNumber && !token->IsName("max") && !token->IsPunct(",")) {
      return false;
    }
    text += token->text;
    arguments.Advance();
  }
  arguments.Advance();
  *type = text + ")";
  cursor = arguments;
  return true;
}

bool SnapshotColumn(TokenCursor& cursor, SnapshotColumnRef* column) {
  static const Phrase cast_null("CAST(NULL AS");
  static const Phrase as(") AS");
  if (!cursor.Match(cast_null)) return cursor.Name(&column->name);
  std::string type;
  if (!TypeName(cursor, &type) || !cursor.Match(as) || !cursor.Name(&column->name)) return false;
  column->present = false;
  try {
    column->cast_type = SqlType::Parse(type);
  } catch (const std::exception&) {
    throw SqlError(errors::UndefinedType(type));
  }
  return true;
}

}  // namespace

// [schema].[table], or [table] of dbo.
bool TableName(TokenCursor& cursor, std::string* schema, std::string* table) {
  std::string first;
  if (!cursor.Name(&first)) return false;
  if (cursor.Punct(".")) {
    *schema = std::move(first);
    return cursor.Name(table);
  }
  *schema = "dbo";
  *table = std::move(first);
  return true;
}

namespace {

bool ParsedType(const std::string& text, SqlType* type) {
  try {
    *type = SqlType::Parse(text);
  } catch (const std::exception&) {
    throw SqlError(errors::UndefinedType(text));
  }
  return true;
}

// CAST(operand AS type) or CONVERT(type, operand, style): the type, and the style (0 for CAST).
template <typename Operand>
bool Conversion(TokenCursor& cursor, Operand operand, SqlType* type, std::int64_t* style) {
  static const Phrase cast("CAST(");
  static const Phrase convert("CONVERT(");
  std::string text;
  *style = 0;
  if (cursor.Match(cast)) {
    if (!operand() || !cursor.Keyword("as") || !TypeName(cursor, &text) || !cursor.Punct(")")) {
      return false;
    }
  } else if (cursor.Match(convert)) {
    if (!TypeName(cursor, &text) || !cursor.Punct(",") || !operand() || !cursor.Punct(",") ||
        !cursor.Integer(style) || !cursor.Punct(")")) {
      return false;
    }
  } else {
    return cursor.Reject();
  }
  return ParsedType(text, type);
}

// [column] op CAST(? AS type) | [column] op CONVERT(type, ?, 1) | [column] op literal |
// [column] IS NULL
bool Condition(TokenCursor& cursor, KeyCondition* condition) {
  static const Phrase is_null("IS NULL");
  if (!cursor.Name(&condition->column)) return false;
  if (cursor.Match(is_null)) {
    condition->op = "IS NULL";
    return true;
  }
  for (std::string_view op : {"=", ">=", ">", "<"}) {
    if (cursor.Punct(op)) {
      condition->op = op;
      break;
    }
  }
  if (condition->op.empty()) return cursor.Reject();
  if (cursor.Value(&condition->value)) {  // 0.8.0 writes integer bounds as literals
    condition->literal = true;
    return true;
  }
  std::int64_t style = 0;
  return Conversion(cursor, [&] { return cursor.Value(&condition->value); },
                    &condition->cast_type, &style) &&
         (style <= 1 || cursor.Reject());
}

}  // namespace

// [WHERE condition [AND|OR condition ...]], conditions grouped by balanced parentheses.
bool Piece(TokenCursor& cursor, KeyPiece* piece) {
  if (!cursor.Keyword("where")) return true;
  int depth = 0;
  bool or_before = false;
  do {
    KeyCondition condition;
    condition.or_before = or_before;
    while (cursor.Punct("(")) ++condition.opens;
    if (!Condition(cursor, &condition)) return false;
    depth += condition.opens;
    while (depth > 0 && cursor.Punct(")")) {
      ++condition.closes;
      --depth;
    }
    piece->push_back(std::move(condition));
    or_before = cursor.Keyword("or");
  } while (or_before || cursor.Keyword("and"));
  return depth == 0 || cursor.Reject();
}

bool NameList(TokenCursor& cursor, std::vector<std::string>* names, bool descending) {
  do {
    std::string name;
    if (!cursor.Name(&name)) return false;
    if (descending && !cursor.Keyword("desc")) return false;
    names->push_back(std::move(name));
  } while (cursor.Punct(","));
  return true;
}

namespace {

// CAST([c] AS type) | CONVERT(type, [c], style)
bool KeyTextColumn(TokenCursor& cursor, KeyText* text) {
  std::int64_t style = 0;
  return Conversion(cursor, [&] { return cursor.Name(&text->column); }, &text->type, &style);
}

bool KeyTextList(TokenCursor& cursor, std::vector<KeyText>* select) {
  do {
    KeyText text;
    if (!KeyTextColumn(cursor, &text)) return false;
    select->push_back(std::move(text));
  } while (cursor.Punct(","));
  return true;
}

// SELECT columns FROM table [WHERE ...] [UNION ALL SELECT columns FROM table WHERE ...]...
// [ORDER BY keys]
bool SnapshotRows(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase order_by("ORDER BY");
  static const Phrase union_all("UNION ALL");
  SnapshotRowsQuery query;
  do {
    if (!cursor.Keyword("select")) return false;
    std::vector<SnapshotColumnRef> columns;
    do {
      SnapshotColumnRef column;
      if (!SnapshotColumn(cursor, &column)) return false;
      columns.push_back(std::move(column));
    } while (cursor.Punct(","));
    std::string schema, table;
    KeyPiece piece;
    if (!cursor.Keyword("from") || !TableName(cursor, &schema, &table) || !Piece(cursor, &piece)) {
      return false;
    }
    if (query.pieces.empty()) {
      query.columns = std::move(columns);
      query.schema = std::move(schema);
      query.table = std::move(table);
    } else if (columns.size() != query.columns.size() || schema != query.schema ||
               table != query.table) {
      return cursor.Reject();  // the branches of a range read one table the same way
    }
    query.pieces.push_back(std::move(piece));
  } while (cursor.Match(union_all));
  if (cursor.Match(order_by) && !NameList(cursor, &query.key_columns)) return false;
  if (!cursor.End()) return false;
  *out = std::move(query);
  return true;
}

// SELECT key texts FROM (SELECT keys FROM table [WHERE ...] [UNION ALL ...]) AS k
// ORDER BY keys OFFSET ? ROWS FETCH NEXT 1 ROWS ONLY
bool KeyAt(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase union_all("UNION ALL");
  static const Phrase derived(") AS k ORDER BY");
  static const Phrase offset("OFFSET ? ROWS FETCH NEXT 1 ROWS ONLY");
  KeyAtQuery query;
  if (!cursor.Keyword("select") || !KeyTextList(cursor, &query.select) ||
      !cursor.Keyword("from") || !cursor.Punct("(")) {
    return false;
  }
  do {
    std::vector<std::string> keys;
    std::string schema, table;
    KeyPiece piece;
    if (!cursor.Keyword("select") || !NameList(cursor, &keys) || !cursor.Keyword("from") ||
        !TableName(cursor, &schema, &table) || !Piece(cursor, &piece)) {
      return false;
    }
    query.schema = std::move(schema);
    query.table = std::move(table);
    query.pieces.push_back(std::move(piece));
  } while (cursor.Match(union_all));
  std::vector<SqlValue> values;
  if (!cursor.Match(derived) || !NameList(cursor, &query.key_columns) ||
      !cursor.Match(offset, &values) || !cursor.End()) {
    return false;
  }
  query.offset = std::move(values[0]);
  *out = std::move(query);
  return true;
}

// SELECT TOP (1) key texts FROM table ORDER BY keys DESC
bool LastKey(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase top("SELECT TOP (1)");
  static const Phrase order_by("ORDER BY");
  LastKeyQuery query;
  if (!cursor.Match(top) || !KeyTextList(cursor, &query.select) || !cursor.Keyword("from") ||
      !TableName(cursor, &query.schema, &query.table) || !cursor.Match(order_by) ||
      !NameList(cursor, &query.key_columns, /*descending=*/true) || !cursor.End()) {
    return false;
  }
  *out = std::move(query);
  return true;
}

// A key term of KeySlices: [k], or DATEDIFF(day, '19700101', [k]), a date key's day number.
bool SliceKeyTerm(TokenCursor& cursor, std::string* column, bool* day_number) {
  static const Phrase datediff("DATEDIFF(day, ?,");
  std::vector<SqlValue> origin;
  *day_number = cursor.Match(datediff, &origin);
  if (!*day_number) return cursor.Name(column);
  if (AsText(origin[0]) != std::optional<std::string>("19700101")) return cursor.Reject();
  return cursor.Name(column) && cursor.Punct(")");
}

// SELECT [slice], COUNT_BIG(*) AS [rows], SUM(CAST([k] AS decimal(38,0))) AS [key_sum] FROM
// (SELECT ([k] - ?) / ? AS [slice], [k] AS [k] FROM table WHERE [k] >= ? AND [k] < ?) AS g
// GROUP BY [slice] ORDER BY [slice]; each [k] of a date key DATEDIFF(day, '19700101', [k])
bool KeySlices(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head(
      "SELECT [slice], COUNT_BIG(*) AS [rows], SUM(CAST([k] AS decimal(38,0))) AS [key_sum] FROM (SELECT (");
  static const Phrase minus("- ?) / ? AS [slice],");
  static const Phrase as_k("AS [k] FROM");
  static const Phrase where("WHERE");
  static const Phrase at_least(">= ? AND");
  static const Phrase below("< ?) AS g GROUP BY [slice] ORDER BY [slice]");
  KeySlicesQuery query;
  std::vector<SqlValue> values;
  std::string selected, again, last;
  bool days[4];
  if (!cursor.Match(head) || !SliceKeyTerm(cursor, &query.column, &days[0]) || !cursor.Match(minus, &values) ||
      !SliceKeyTerm(cursor, &selected, &days[1]) || !cursor.Match(as_k) ||
      !TableName(cursor, &query.schema, &query.table) || !cursor.Match(where) ||
      !SliceKeyTerm(cursor, &again, &days[2]) || !cursor.Match(at_least, &values) ||
      !SliceKeyTerm(cursor, &last, &days[3]) || !cursor.Match(below, &values) || !cursor.End()) {
    return false;
  }
  if (selected != query.column || again != query.column || last != query.column) return cursor.Reject();
  if (days[1] != days[0] || days[2] != days[0] || days[3] != days[0]) return cursor.Reject();
  query.day_number = days[0];
  query.start = std::move(values[0]);
  query.width = std::move(values[1]);
  query.from = std::move(values[2]);
  query.end = std::move(values[3]);
  *out = std::move(query);
  return true;
}

// sys.sp_spaceused @objname = ?
bool SpaceUsed(TokenCursor& cursor, RecognizedStatement* out) {
  std::vector<ProcedureArgument> arguments;
  if (!ProcedureCall(cursor, "sp_spaceused", &arguments) || arguments.size() != 1) return false;
  if (!arguments[0].name.empty() && !EqualsIgnoringCase(arguments[0].name, "@objname")) {
    return false;
  }
  *out = SpaceUsedQuery{std::move(arguments[0].value)};
  return true;
}

constexpr Shape kClientShapes[] = {
    TimeZoneSupport, TimeZoneId, MaxLsn, MinLsn, NthCommitAfter, TimeToLsn, CommitTime,
    SourceColumns,
    UserName, ListCaptureInstances, CapturedColumns, DdlHistory, SplitPoints, ChangeRows,
    SpaceUsed, KeyAt, LastKey, KeySlices, SnapshotRows,
};

}  // namespace

std::span<const Shape> ClientShapes() { return kClientShapes; }

bool ProcedureCall(TokenCursor& cursor, std::string_view procedure,
                   std::vector<ProcedureArgument>* arguments) {
  static const Phrase exec("EXEC");
  static const Phrase sys("sys.");
  cursor.Match(exec);
  cursor.Match(sys);
  if (!cursor.Keyword(procedure)) return false;
  while (!cursor.AtEnd()) {
    ProcedureArgument argument;
    const SqlToken* next = cursor.Peek();
    if (next->kind == SqlToken::Kind::kWord && next->text.starts_with('@')) {
      argument.name = next->text;
      cursor.Advance();
      if (!cursor.Punct("=")) return false;
    }
    if (!cursor.Value(&argument.value)) return false;
    arguments->push_back(std::move(argument));
    if (!cursor.AtEnd() && !cursor.Punct(",")) return false;
  }
  return true;
}

}  // namespace mssql_cdc::sim_server
