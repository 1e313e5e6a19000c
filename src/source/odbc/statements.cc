#include "source/odbc/statements.h"

#include <fmt/format.h>

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

std::string SnapshotRows(std::string_view schema, std::string_view table,
                         const std::vector<SnapshotColumn>& columns,
                         const std::vector<std::string>& key_columns, bool snapshot_isolation,
                         long long lock_timeout_ms) {
  std::string sql;
  if (lock_timeout_ms >= 0) sql += fmt::format("SET LOCK_TIMEOUT {}; ", lock_timeout_ms);
  if (snapshot_isolation) sql += "SET TRANSACTION ISOLATION LEVEL SNAPSHOT; ";
  sql += "SELECT ";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql += ", ";
    const auto& column = columns[i];
    if (column.present) {
      sql += QuoteName(column.name);
    } else {
      sql += fmt::format("CAST(NULL AS {}) AS {}", column.type.ToString(),
                         QuoteName(column.name));
    }
  }
  sql += fmt::format(" FROM {}.{}", QuoteName(schema), QuoteName(table));
  for (std::size_t i = 0; i < key_columns.size(); ++i) {
    sql += i == 0 ? " ORDER BY " : ", ";
    sql += QuoteName(key_columns[i]);
  }
  return sql;
}

}  // namespace mssql_cdc::odbc_sql
