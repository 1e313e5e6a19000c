#include "source/odbc/statements.h"

#include <fmt/format.h>

#include <initializer_list>

#include "core/errors.h"

namespace mssql_cdc::odbc_sql {
namespace {

bool HasControlCharacter(std::string_view name) {
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7F) return true;
  }
  return false;
}

std::size_t Utf8Length(std::string_view text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

void CheckCaptureInstanceName(std::string_view name) {
  if (name.empty()) {
    throw ConfigError("option captureInstance is empty: give the capture instance's name");
  }
  if (Utf8Length(name) > 100) {
    throw ConfigError(fmt::format(
        "capture instance name '{}' is longer than 100 characters, which SQL Server does not "
        "allow: check option captureInstance",
        name.substr(0, 100)));
  }
  if (HasControlCharacter(name)) {
    throw ConfigError(
        "capture instance name contains a control character: check option captureInstance");
  }
  if (name.find_first_of("[]'\"") != std::string_view::npos) {
    throw ConfigError(fmt::format(
        "capture instance name '{}' contains a bracket or a quote, which no capture instance "
        "name can hold: give the name as sys.sp_cdc_help_change_data_capture lists it, "
        "without [ ] or quotes",
        name));
  }
}

std::string QuoteName(std::string_view name) {
  if (name.empty() || Utf8Length(name) > 128 || HasControlCharacter(name)) {
    throw ConfigError(fmt::format(
        "the server returned the name '{}', which is not a valid SQL Server identifier "
        "(1 to 128 characters, no control characters)",
        name.substr(0, 128)));
  }
  std::string quoted = "[";
  for (char c : name) {
    quoted += c;
    if (c == ']') quoted += ']';
  }
  quoted += ']';
  return quoted;
}

std::string SplitPoints(std::string_view capture_instance, int tiles) {
  CheckCaptureInstanceName(capture_instance);
  if (tiles < 1) throw InternalError("SplitPoints needs at least one tile");
  return fmt::format(
      "SELECT MAX(__$start_lsn) AS b, sys.fn_cdc_increment_lsn(MAX(__$start_lsn)) AS n, "
      "COUNT_BIG(*) AS r FROM (SELECT __$start_lsn, NTILE({}) OVER (ORDER BY __$start_lsn) "
      "AS g FROM cdc.{} WHERE __$start_lsn BETWEEN ? AND ?) x GROUP BY g ORDER BY b",
      tiles, QuoteName(std::string(capture_instance) + "_CT"));
}

std::string NamedParameters(std::string_view sql) {
  std::string out;
  int next = 1;
  char closing = 0;  // the quote that ends the name or string being copied
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (closing != 0) {
      out += c;
      if (c == closing) {
        // A doubled closing character stands for itself.
        if (i + 1 < sql.size() && sql[i + 1] == closing) {
          out += sql[++i];
        } else {
          closing = 0;
        }
      }
    } else if (c == '[' || c == '\'') {
      closing = c == '[' ? ']' : '\'';
      out += c;
    } else if (c == '?') {
      out += "@P" + std::to_string(next++);
    } else {
      out += c;
    }
  }
  return out;
}

std::string ChangeRows(std::string_view capture_instance,
                       const std::vector<std::string>& columns, bool include_command_id) {
  CheckCaptureInstanceName(capture_instance);
  std::string sql =
      "SELECT c.[__$start_lsn], c.[__$seqval], c.[__$operation], ";
  if (include_command_id) sql += "c.[__$command_id], ";
  sql += "m.[tran_end_time]";
  for (const auto& column : columns) {
    sql += ", c.";
    sql += QuoteName(column);
  }
  sql += fmt::format(
      " FROM cdc.{} c JOIN cdc.lsn_time_mapping m ON m.[start_lsn] = c.[__$start_lsn] "
      "WHERE c.[__$start_lsn] BETWEEN ? AND ? ORDER BY c.[__$start_lsn], c.[__$command_id], "
      "c.[__$seqval], c.[__$operation]",
      QuoteName(std::string(capture_instance) + "_CT"));
  return sql;
}

namespace {

std::string SessionSettings(bool snapshot_isolation, long long lock_timeout_ms) {
  std::string sql;
  if (lock_timeout_ms >= 0) sql += fmt::format("SET LOCK_TIMEOUT {}; ", lock_timeout_ms);
  if (snapshot_isolation) sql += "SET TRANSACTION ISOLATION LEVEL SNAPSHOT; ";
  return sql;
}

bool IsBinaryKey(const SqlType& type) {
  return type.IsOneOf({SqlTypeKind::kBinary, SqlTypeKind::kVarBinary});
}

// A bound part, given as text, in the key column's type.
std::string CastParameter(const SqlType& type) {
  if (IsBinaryKey(type)) return fmt::format("CONVERT({}, ?, 1)", type.ToString());
  return fmt::format("CAST(? AS {})", type.ToString());
}

// A key column as the text CastParameter reads back to the same value.
std::string KeyText(const KeyColumn& column) {
  const std::string name = QuoteName(column.name);
  const SqlType& type = column.type;
  if (IsBinaryKey(type)) return fmt::format("CONVERT(varchar(max), {}, 1)", name);
  if (type.family() == SqlTypeFamily::kTemporal) {
    return fmt::format("CONVERT(varchar(40), {}, 126)", name);
  }
  if (type.IsOneOf({SqlTypeKind::kMoney, SqlTypeKind::kSmallMoney})) {
    return fmt::format("CONVERT(varchar(40), {}, 2)", name);
  }
  return fmt::format("CAST({} AS nvarchar(4000))", name);
}

std::string KeyList(const std::vector<KeyColumn>& key, std::string_view suffix = "") {
  std::string out;
  for (const auto& column : key) {
    if (!out.empty()) out += ", ";
    out += QuoteName(column.name);
    out += suffix;
  }
  return out;
}

struct Condition {
  std::size_t column;
  std::string_view op;
  BoundParameter::Bound bound;
};
using Piece = std::vector<Condition>;

// The pieces of lo <= key < hi: the lo side's (key shares lo's first i parts and is above its
// next, or at or above it for the last part) crossed with the hi side's (key shares hi's first
// j parts and is below its next). The pieces of each side are disjoint, so their crossing
// covers the range once.
std::vector<Piece> RangePieces(std::size_t n, bool has_lo, bool has_hi) {
  using Bound = BoundParameter::Bound;
  auto side = [n](Bound bound) {
    std::vector<Piece> pieces;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = bound == Bound::kLo ? n - 1 - k : k;  // in key order
      Piece piece;
      for (std::size_t p = 0; p < i; ++p) piece.push_back({p, "=", bound});
      std::string_view op = bound == Bound::kHi ? "<" : (i == n - 1 ? ">=" : ">");
      piece.push_back({i, op, bound});
      pieces.push_back(std::move(piece));
    }
    return pieces;
  };
  const std::vector<Piece> lo = has_lo ? side(Bound::kLo) : std::vector<Piece>{Piece{}};
  const std::vector<Piece> hi = has_hi ? side(Bound::kHi) : std::vector<Piece>{Piece{}};
  std::vector<Piece> pieces;
  for (const auto& a : lo) {
    for (const auto& b : hi) {
      Piece piece = a;
      piece.insert(piece.end(), b.begin(), b.end());
      pieces.push_back(std::move(piece));
    }
  }
  return pieces;
}

// " WHERE [k1] = CAST(? AS int) AND ...", its parameters appended to `parameters`.
std::string WhereOf(const Piece& piece, const std::vector<KeyColumn>& key,
                    std::vector<BoundParameter>* parameters) {
  std::string sql;
  for (const auto& condition : piece) {
    sql += sql.empty() ? " WHERE " : " AND ";
    const KeyColumn& column = key[condition.column];
    sql += fmt::format("{} {} {}", QuoteName(column.name), condition.op, CastParameter(column.type));
    parameters->push_back(BoundParameter{condition.bound, condition.column});
  }
  return sql;
}

void RequireKey(const std::vector<KeyColumn>& key, bool bounded) {
  if (key.empty() && bounded) {
    throw ConfigError("a table without a key cannot be read in ranges: read it whole");
  }
  for (const auto& column : key) {
    if (bounded && !CanBoundRange(column.type)) {
      throw ConfigError(fmt::format("key column '{}' is {}, which cannot bound a range: read the "
                                    "table whole, or give snapshotKeys of other types",
                                    column.name, column.type.ToString()));
    }
  }
}

}  // namespace

RangeStatement SnapshotRangeRows(std::string_view schema, std::string_view table,
                                 const std::vector<SnapshotColumn>& columns,
                                 const std::vector<KeyColumn>& key, bool has_lo, bool has_hi,
                                 bool snapshot_isolation, long long lock_timeout_ms) {
  RequireKey(key, has_lo || has_hi);
  std::string select = "SELECT ";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) select += ", ";
    const auto& column = columns[i];
    if (column.present) {
      select += QuoteName(column.name);
    } else {
      select += fmt::format("CAST(NULL AS {}) AS {}", column.type.ToString(),
                            QuoteName(column.name));
    }
  }
  select += fmt::format(" FROM {}.{}", QuoteName(schema), QuoteName(table));
  RangeStatement statement;
  statement.sql = SessionSettings(snapshot_isolation, lock_timeout_ms);
  const std::vector<Piece> pieces = RangePieces(key.size(), has_lo, has_hi);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) statement.sql += " UNION ALL ";
    statement.sql += select + WhereOf(pieces[i], key, &statement.parameters);
  }
  if (pieces.size() == 1 && !key.empty()) statement.sql += " ORDER BY " + KeyList(key);
  return statement;
}

std::string SnapshotRows(std::string_view schema, std::string_view table,
                         const std::vector<SnapshotColumn>& columns,
                         const std::vector<std::string>& key_columns, bool snapshot_isolation,
                         long long lock_timeout_ms) {
  std::vector<KeyColumn> key;
  for (const auto& name : key_columns) key.push_back(KeyColumn{name, SqlType{}});
  return SnapshotRangeRows(schema, table, columns, key, false, false, snapshot_isolation,
                           lock_timeout_ms)
      .sql;
}

RangeStatement KeyAt(std::string_view schema, std::string_view table,
                     const std::vector<KeyColumn>& key, bool has_from, bool snapshot_isolation,
                     long long lock_timeout_ms) {
  RequireKey(key, true);
  const std::string from = fmt::format("SELECT {} FROM {}.{}", KeyList(key), QuoteName(schema),
                                       QuoteName(table));
  RangeStatement statement;
  std::string pieces;
  for (const Piece& piece : RangePieces(key.size(), has_from, false)) {
    if (!pieces.empty()) pieces += " UNION ALL ";
    pieces += from + WhereOf(piece, key, &statement.parameters);
  }
  std::string text;
  for (const auto& column : key) text += (text.empty() ? "" : ", ") + KeyText(column);
  statement.sql = SessionSettings(snapshot_isolation, lock_timeout_ms) +
                  fmt::format("SELECT {} FROM ({}) AS k ORDER BY {} OFFSET ? ROWS FETCH NEXT 1 "
                              "ROWS ONLY",
                              text, pieces, KeyList(key));
  return statement;
}

std::string LastKey(std::string_view schema, std::string_view table,
                    const std::vector<KeyColumn>& key, bool snapshot_isolation,
                    long long lock_timeout_ms) {
  RequireKey(key, true);
  std::string text;
  for (const auto& column : key) text += (text.empty() ? "" : ", ") + KeyText(column);
  return SessionSettings(snapshot_isolation, lock_timeout_ms) +
         fmt::format("SELECT TOP (1) {} FROM {}.{} ORDER BY {}", text, QuoteName(schema),
                     QuoteName(table), KeyList(key, " DESC"));
}

std::string KeySlices(std::string_view schema, std::string_view table, const KeyColumn& key,
                      bool snapshot_isolation, long long lock_timeout_ms) {
  // A date counts as its day number since 1970-01-01 (negative before). The expression is
  // repeated rather than filtered once in the derived table: Tier 1 is one scan of the key.
  const std::string name = key.type.kind() == SqlTypeKind::kDate
                               ? "DATEDIFF(day, '19700101', " + QuoteName(key.name) + ")"
                               : QuoteName(key.name);
  // A derived table: GROUP BY cannot repeat an expression that holds parameters.
  return SessionSettings(snapshot_isolation, lock_timeout_ms) +
         fmt::format("SELECT [slice], COUNT_BIG(*) AS [rows], SUM(CAST([k] AS decimal(38,0))) AS "
                     "[key_sum] FROM (SELECT ({} - ?) / ? AS [slice], {} AS [k] FROM {}.{} WHERE {} "
                     ">= ? AND {} < ?) AS g GROUP BY [slice] ORDER BY [slice]",
                     name, name, QuoteName(schema), QuoteName(table), name, name);
}

}  // namespace mssql_cdc::odbc_sql
