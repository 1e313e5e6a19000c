// The shapes of the statements of source/odbc/statements.h. The fixed ones are matched
// against the constants themselves, so a change there changes what is recognised here; the
// built ones (split points, change rows, snapshot rows) by their pieces, capturing names,
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

bool SnapshotRows(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase order_by("ORDER BY");
  SnapshotRowsQuery query;
  if (!cursor.Keyword("select")) return false;
  do {
    SnapshotColumnRef column;
    if (!SnapshotColumn(cursor, &column)) return false;
    query.columns.push_back(std::move(column));
  } while (cursor.Punct(","));
  std::string first;
  if (!cursor.Keyword("from") || !cursor.Name(&first)) return false;
  if (cursor.Punct(".")) {
    query.schema = std::move(first);
    if (!cursor.Name(&query.table)) return false;
  } else {
    query.schema = "dbo";
    query.table = std::move(first);
  }
  if (cursor.Match(order_by)) {
    do {
      std::string key;
      if (!cursor.Name(&key)) return false;
      query.key_columns.push_back(std::move(key));
    } while (cursor.Punct(","));
  }
  if (!cursor.End()) return false;
  *out = std::move(query);
  return true;
}

constexpr Shape kShapes[] = {
    TimeZoneSupport, TimeZoneId, MaxLsn, MinLsn, NthCommitAfter, CommitTime, SourceColumns,
    UserName, ListCaptureInstances, CapturedColumns, DdlHistory, SplitPoints, ChangeRows,
    SnapshotRows,
};

}  // namespace

std::span<const Shape> ClientShapes() { return kShapes; }

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
