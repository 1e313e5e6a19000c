// Change rows, streamed from the change table of sim/storage.h straight into the result set:
// the odbc backend's join of a change table to cdc.lsn_time_mapping, and
// cdc.fn_cdc_get_all_changes_<capture_instance>. Both read in the order of the change table's
// index with statements prepared once per connection, and pass each stored value as it is.
// The first, asked for every captured column as the odbc backend asks, reads the wire table
// of sim/wire_rows.h instead where the file keeps one, and copies the values as encoded.
#include <cstring>

#include "core/errors.h"
#include "core/time.h"
#include "sim/storage.h"
#include "sim/wire_rows.h"
#include "sim_server/answers.h"
#include "sim_server/at_time_zone.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/stored_value.h"

namespace mssql_cdc::sim_server {
namespace {

using sim::QuoteIdent;

constexpr std::string_view kIndexOrder =
    " ORDER BY \"__$start_lsn\", \"__$command_id\", \"__$seqval\", \"__$operation\"";

// The captured columns named, in the order named; 207 for one the instance does not capture.
std::vector<const sim::CapturedColumnInfo*> NamedColumns(const sim::CaptureInstance& instance,
                                                         const std::vector<std::string>& names) {
  std::vector<const sim::CapturedColumnInfo*> columns;
  for (const std::string& name : names) {
    const sim::CapturedColumnInfo* found = nullptr;
    for (const auto& column : instance.columns) {
      if (EqualsIgnoringCase(column.name, name)) found = &column;
    }
    if (found == nullptr) throw SqlError(errors::InvalidColumnName(name));
    columns.push_back(found);
  }
  return columns;
}

std::string ColumnsSql(const std::vector<const sim::CapturedColumnInfo*>& columns) {
  std::string sql;
  for (const auto* column : columns) sql += ", " + QuoteIdent(column->name);
  return sql;
}

// The 10 bytes of an LSN column of the current row; SourceError when it is not 10 bytes.
const char* LsnBytes(sqlite3_stmt* row, int column, const char* what) {
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(row, column));
  if (sqlite3_column_bytes(row, column) != static_cast<int>(Lsn::kSize) || bytes == nullptr) {
    throw SourceError(std::string(what) + " is not a 10-byte binary value: the file is not a "
                                          "sim database this build can read");
  }
  return bytes;
}

// Walks cdc_lsn_time_mapping in LSN order alongside the change rows, as a merge join: each
// entry is read once however many change rows share its LSN.
class CommitCursor {
 public:
  explicit CommitCursor(sim::Statement& entries) : entries_(entries) {}

  // Moves to `lsn`; false when lsn_time_mapping has no entry there, as the inner join
  // leaves such change rows out.
  bool SeekTo(const char* lsn) {
    while (!done_ && (!has_entry_ || std::memcmp(lsn_, lsn, Lsn::kSize) < 0)) {
      if (!entries_.Step()) {
        done_ = true;
        break;
      }
      std::memcpy(lsn_, LsnBytes(entries_.raw(), 0, "cdc_lsn_time_mapping.start_lsn"), Lsn::kSize);
      time_.assign(entries_.TextView(1));
      has_entry_ = true;
    }
    return has_entry_ && std::memcmp(lsn_, lsn, Lsn::kSize) == 0;
  }
  std::string_view time() const { return time_; }

 private:
  sim::Statement& entries_;
  bool has_entry_ = false;
  bool done_ = false;
  char lsn_[Lsn::kSize] = {};
  std::string time_;
};

// Whether `columns` are every captured column of `instance` in ordinal order, the values its
// wire rows hold.
bool IsEveryColumnInOrder(const sim::CaptureInstance& instance,
                          const std::vector<const sim::CapturedColumnInfo*>& columns) {
  if (columns.size() != instance.columns.size()) return false;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] != &instance.columns[i]) return false;
  }
  return true;
}

// The captured values of the change row whose key the wire row `wire` holds, read from the
// change table: for a wire row without values (sim/wire_rows.h).
void PassChangeTableValues(Session& session, const sim::CaptureInstance& instance,
                           const std::vector<const sim::CapturedColumnInfo*>& columns,
                           sqlite3_stmt* wire, tds::ResultSet& rows) {
  StatementLease values = session.statements().Prepare(
      "SELECT " + ColumnsSql(columns).substr(2) + " FROM " +
      QuoteIdent(sim::ChangeTableStorageName(instance.name)) +
      " WHERE \"__$start_lsn\" = ?1 AND \"__$seqval\" = ?2 AND \"__$operation\" = ?3 AND "
      "\"__$command_id\" = ?4");
  values->BindBlob(1, sqlite3_column_blob(wire, 0), Lsn::kSize)
      .BindBlob(2, sqlite3_column_blob(wire, 1),
                static_cast<std::size_t>(sqlite3_column_bytes(wire, 1)))
      .BindInt(3, sqlite3_column_int64(wire, 2))
      .BindInt(4, sqlite3_column_int64(wire, 3));
  if (!values->Step()) {
    throw SourceError("change table " + sim::ChangeTableStorageName(instance.name) +
                      " has no row for one of its wire rows: the file is damaged");
  }
  for (int i = 0; i < static_cast<int>(columns.size()); ++i) PassStoredValue(values->raw(), i, rows);
}

// 0.8.0's per-row commit time on a server whose offset changes in the range
// (ChangeRowsQuery::ZonedCommitTimes).
class ZonedRows {
 public:
  explicit ZonedRows(const ChangeRowsQuery::ZonedCommitTimes& times)
      : zone_(AtTimeZone(AsText(times.zone).value_or(""))) {
    for (const auto& [lsn, time] : times.drops) {
      const auto at = AsLsn(lsn);
      const auto text = AsText(time);
      if (!at || !text) continue;  // a NULL matches no row
      const auto local = ParseDateTime(*text);
      if (!local) throw SqlError(errors::DateConversionFailed());
      drops_.emplace_back(*at, local.value());
    }
  }
  // The UTC instant of a commit at `lsn` whose tran_end_time is `local`.
  std::int64_t Utc(const Lsn& lsn, LocalMicros local) const {
    for (const auto& [at, time] : drops_) {
      if (at <= lsn && time > local.value - 3 * kMicrosPerHour) {
        const LocalMicros later{local.value + 3 * kMicrosPerHour};
        return local.value - zone_.OffsetMinutesAt(zone_.ToUtc(later)) * kMicrosPerMinute;
      }
    }
    return zone_.ToUtc(local).value;
  }

 private:
  SourceClock zone_;
  std::vector<std::pair<Lsn, std::int64_t>> drops_;
};

}  // namespace

void Answer(Session& session, const ChangeRowsQuery& query, tds::ReplyWriter& reply) {
  const auto instance = FindChangeTable(session.catalog(), query.change_table);
  if (!instance) throw SqlError(errors::InvalidObjectName("cdc." + query.change_table));
  const auto columns = NamedColumns(*instance, query.columns);
  if (!session.access().CanReadChangeTable(instance->name)) {
    throw SqlError(errors::SelectPermissionDenied(instance->name + "_CT",
                                                  session.database_name(), "cdc"));
  }
  const auto from = AsLsn(query.from);
  const auto to = AsLsn(query.to);

  // 0.8.0 asks for LSNs as text and the commit time as datetime2(3), under names of its own.
  const bool text = query.reference_projection;
  std::vector<tds::ResultColumn> result = {
      Column(text ? "_start_lsn" : "__$start_lsn", text ? types::LsnText() : types::Binary10(), text),
      Column(text ? "_seqval" : "__$seqval", text ? types::LsnText() : types::Binary10(), text),
      Column(text ? "_operation" : "__$operation", types::Int(), false)};
  if (query.include_command_id) result.push_back(Column(text ? "_command_id" : "__$command_id", types::Int(), false));
  result.push_back(text ? Column("_commit_ts", types::Datetime2_3()) : Column("tran_end_time", types::Datetime(), false));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    result.push_back(Column(query.columns[i], columns[i]->type));
  }
  tds::ResultSet& rows = reply.BeginResult(result);
  if (!from || !to) return;  // BETWEEN NULL: no rows

  const bool from_wire = !text && rows.TakesEncodedValues() && IsEveryColumnInOrder(*instance, columns) &&
                         sim::KeepsWireRows(session.db());
  const std::string table = QuoteIdent(from_wire ? sim::WireTableStorageName(instance->name)
                                                 : sim::ChangeTableStorageName(instance->name));
  StatementLease changes = session.statements().Prepare(
      "SELECT \"__$start_lsn\", \"__$seqval\", \"__$operation\", \"__$command_id\"" +
      (from_wire ? std::string(", \"__$values\"") : ColumnsSql(columns)) + " FROM " + table +
      " WHERE \"__$start_lsn\" BETWEEN ?1 AND ?2" + std::string(kIndexOrder));
  StatementLease commits = session.statements().Prepare(
      "SELECT start_lsn, tran_end_time FROM cdc_lsn_time_mapping "
      "WHERE start_lsn BETWEEN ?1 AND ?2 ORDER BY start_lsn");
  changes->BindLsn(1, *from).BindLsn(2, *to);
  commits->BindLsn(1, *from).BindLsn(2, *to);

  CommitCursor commit(*commits);
  const auto zoned = query.zoned ? std::optional<ZonedRows>(ZonedRows(*query.zoned)) : std::nullopt;
  sqlite3_stmt* row = changes->raw();
  const int column_count = static_cast<int>(columns.size());
  char row_lsn[Lsn::kSize] = {};
  bool has_row_lsn = false;
  bool row_has_commit = false;
  // 0.8.0 asks on a server in another zone: the commit time converted, once per commit.
  const bool converts = query.commit_minutes_added != 0 || zoned.has_value();
  std::string converted;
  while (changes->Step()) {
    const char* lsn = LsnBytes(row, 0, "__$start_lsn");
    if (!has_row_lsn || std::memcmp(lsn, row_lsn, Lsn::kSize) != 0) {
      std::memcpy(row_lsn, lsn, Lsn::kSize);
      has_row_lsn = true;
      row_has_commit = commit.SeekTo(row_lsn);
      if (row_has_commit && converts) {
        const auto local = ParseDateTime(std::string(commit.time()));
        if (!local) throw InternalError("cdc_lsn_time_mapping.tran_end_time: not a time");
        const std::int64_t utc = zoned ? zoned->Utc(Lsn::FromBytes(row_lsn, Lsn::kSize), LocalMicros{*local})
                                       : *local + query.commit_minutes_added * kMicrosPerMinute;
        converted = FormatDateTime(utc, 3);
      }
    }
    if (!row_has_commit) continue;
    if (text) {
      rows.Text(Lsn::FromBytes(lsn, Lsn::kSize).ToString());
      rows.Text(Lsn::FromBytes(LsnBytes(row, 1, "__$seqval"), Lsn::kSize).ToString());
    } else {
      rows.Binary(std::string_view(lsn, Lsn::kSize));
      PassStoredValue(row, 1, rows);
    }
    rows.Int(sqlite3_column_int64(row, 2));
    if (query.include_command_id) rows.Int(sqlite3_column_int64(row, 3));
    rows.Text(converts ? std::string_view(converted) : commit.time());
    if (!from_wire) {
      for (int i = 0; i < column_count; ++i) PassStoredValue(row, 4 + i, rows);
    } else if (sqlite3_column_type(row, 4) != SQLITE_NULL) {
      const auto* encoded = static_cast<const char*>(sqlite3_column_blob(row, 4));
      rows.EncodedValues(
          std::string_view(encoded, static_cast<std::size_t>(sqlite3_column_bytes(row, 4))),
          columns.size());
    } else {
      PassChangeTableValues(session, *instance, columns, row, rows);
    }
    rows.EndRow();
  }
}

void Answer(Session& session, const AllChangesQuery& query, tds::ReplyWriter& reply) {
  const std::string function = "fn_cdc_get_all_changes_" + query.capture_instance;
  const auto instance = FindCaptureInstance(session.catalog(), query.capture_instance);
  if (!instance) throw SqlError(errors::InvalidObjectName("cdc." + function));
  if (!session.access().CanReadChangeTable(instance->name)) {
    throw SqlError(errors::SelectPermissionDenied("fn_cdc_get_all_changes_" + instance->name,
                                                  session.database_name(), "cdc"));
  }
  // Outside the validity interval, or with a bad option, the function fails the way SQL
  // Server's does: with error 313.
  const auto from = AsLsn(query.from);
  const auto to = AsLsn(query.to);
  const auto option = AsText(query.row_filter);
  const bool all = option && EqualsIgnoringCase(*option, "all");
  const bool all_update_old = option && EqualsIgnoringCase(*option, "all update old");
  const auto max_lsn = session.source().MaxLsn();
  if (!from || !to || !max_lsn || (!all && !all_update_old) ||
      *from < session.source().MinLsn(instance->name) || *to > *max_lsn || *from > *to) {
    throw SqlError(errors::InsufficientArguments());
  }

  std::vector<tds::ResultColumn> result = {Column("__$start_lsn", types::Binary10(), false),
                                           Column("__$seqval", types::Binary10(), false),
                                           Column("__$operation", types::Int(), false),
                                           Column("__$update_mask", types::Varbinary128())};
  std::vector<const sim::CapturedColumnInfo*> columns;
  for (const auto& column : instance->columns) {
    result.push_back(Column(column.name, column.type));
    columns.push_back(&column);
  }
  tds::ResultSet& rows = reply.BeginResult(result);
  StatementLease changes = session.statements().Prepare(
      "SELECT \"__$start_lsn\", \"__$seqval\", \"__$operation\", \"__$update_mask\"" +
      ColumnsSql(columns) + " FROM " + QuoteIdent(sim::ChangeTableStorageName(instance->name)) +
      " WHERE \"__$start_lsn\" BETWEEN ?1 AND ?2" +
      (all ? " AND \"__$operation\" <> 3" : "") + std::string(kIndexOrder));
  changes->BindLsn(1, *from).BindLsn(2, *to);
  sqlite3_stmt* row = changes->raw();
  const int width = 4 + static_cast<int>(columns.size());
  while (changes->Step()) {
    rows.Binary(std::string_view(LsnBytes(row, 0, "__$start_lsn"), Lsn::kSize));
    for (int i = 1; i < width; ++i) PassStoredValue(row, i, rows);
    rows.EndRow();
  }
}

}  // namespace mssql_cdc::sim_server
