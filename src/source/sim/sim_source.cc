#include "source/sim/sim_source.h"

#include <algorithm>
#include <map>
#include <type_traits>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/snapshot_read_queue.h"
#include "sim/sqlite.h"
#include "sim/storage.h"
#include "source/column_selection.h"
#include "source/name_match.h"
#include "source/sim/sim_change_reader.h"
#include "source/sim/sim_snapshot_reader.h"

namespace mssql_cdc {
namespace {

std::string CreateHint(const std::string& path) {
  return "create one with `mssql-cdc sim create --db " + path + "`";
}

class SimSource final : public Source {
 public:
  SimSource(std::string path, std::shared_ptr<sim::SqliteDb> db)
      : path_(std::move(path)), db_(std::move(db)) {}

  std::vector<CaptureInstanceInfo> ListCaptureInstances() override { return Listed("", "", ""); }

  std::vector<CaptureInstanceInfo> ListTableInstances(const std::string& source_schema,
                                                      const std::string& source_table) override {
    return Listed("WHERE ct.source_schema = ?1 COLLATE NOCASE AND ct.source_table = ?2 COLLATE NOCASE ",
                  source_schema, source_table);
  }

  // The instances cdc_change_tables holds (those `where` selects, binding ?1 and ?2).
  std::vector<CaptureInstanceInfo> Listed(const std::string& where, const std::string& first,
                                          const std::string& second) {
    sim::Statement q(*db_,
                     "SELECT ct.object_id, ct.capture_instance, ct.source_schema, "
                     "ct.source_table, ct.start_lsn, ct.create_date, ic.column_name "
                     "FROM cdc_change_tables ct "
                     "LEFT JOIN cdc_index_columns ic ON ic.object_id = ct.object_id " + where +
                     "ORDER BY ct.source_schema, ct.source_table, ct.create_date, ct.start_lsn, "
                     "ct.capture_instance, ic.index_ordinal");
    if (!where.empty()) q.BindText(1, first).BindText(2, second);
    std::vector<CaptureInstanceInfo> out;
    std::int64_t current = 0;
    while (q.Step()) {
      const std::int64_t object_id = q.Int(0);
      if (out.empty() || object_id != current) {
        current = object_id;
        CaptureInstanceInfo info;
        info.name = q.Text(1);
        info.source_schema = q.Text(2);
        info.source_table = q.Text(3);
        info.start_lsn = q.LsnAt(4, "cdc_change_tables.start_lsn");
        info.create_date = LocalTime(q.TextView(5), "cdc_change_tables.create_date");
        out.push_back(std::move(info));
      }
      if (!q.IsNull(6)) out.back().index_columns.push_back(q.Text(6));
    }
    return out;
  }

  std::vector<CapturedColumn> CapturedColumns(const std::string& capture_instance) override {
    return ColumnsOf(Resolve(capture_instance));
  }

  std::vector<DdlEvent> DdlHistory(const std::string& capture_instance) override {
    const Instance instance = Resolve(capture_instance);
    return RowsOf("SELECT ddl_lsn, ddl_command, ddl_time FROM cdc_ddl_history "
                  "WHERE object_id = ?1 ORDER BY ddl_lsn",
                  instance.object_id, [&](const sim::Statement& q) {
                    return DdlEvent{q.LsnAt(0, "cdc_ddl_history.ddl_lsn"), q.Text(1),
                                    LocalTime(q.TextView(2), "cdc_ddl_history.ddl_time")};
                  });
  }

  std::string ServerTimeZone() override {
    sim::Statement q(*db_, "SELECT value FROM sim_meta WHERE key = ?1");
    q.BindText(1, sim::kMetaTimeZone);
    if (!q.Step()) {
      throw SourceError("sim database '" + path_ + "' has no time zone (sim_meta '" +
                        std::string(sim::kMetaTimeZone) + "'): " + CreateHint(path_));
    }
    return q.Text(0);
  }

  Lsn MinLsn(const std::string& capture_instance) override {
    // capture_instance is COLLATE NOCASE and unique, as names are in SQL Server's default
    // collation; an unknown instance gives zero, like sys.fn_cdc_get_min_lsn.
    sim::Statement q(*db_, "SELECT start_lsn FROM cdc_change_tables WHERE capture_instance = ?1");
    q.BindText(1, capture_instance);
    if (!q.Step() || q.IsNull(0)) return Lsn();
    return q.LsnAt(0, "cdc_change_tables.start_lsn");
  }

  std::optional<Lsn> MaxLsn() override {
    sim::Statement q(*db_, "SELECT MAX(start_lsn) FROM cdc_lsn_time_mapping");
    if (!q.Step() || q.IsNull(0)) return std::nullopt;
    return q.LsnAt(0, "cdc_lsn_time_mapping.start_lsn");
  }

  std::optional<Lsn> NthCommitAfter(const Lsn& after, std::int64_t n) override {
    if (n < 1) throw ConfigError("the commit count must be at least 1, got " + std::to_string(n));
    sim::Statement q(*db_,
                     "SELECT MAX(start_lsn) FROM (SELECT start_lsn FROM cdc_lsn_time_mapping "
                     "WHERE start_lsn > ?1 ORDER BY start_lsn LIMIT ?2)");
    q.BindLsn(1, after);
    q.BindInt(2, n);
    if (!q.Step() || q.IsNull(0)) return std::nullopt;
    return q.LsnAt(0, "cdc_lsn_time_mapping.start_lsn");
  }

  std::optional<LocalMicros> CommitTime(const Lsn& lsn) override {
    sim::Statement q(*db_, "SELECT tran_end_time FROM cdc_lsn_time_mapping WHERE start_lsn = ?1");
    q.BindLsn(1, lsn);
    if (!q.Step()) return std::nullopt;
    return LocalTime(q.TextView(0), "cdc_lsn_time_mapping.tran_end_time");
  }

  std::optional<Lsn> LastCommitAtOrBefore(LocalMicros time) override {
    // Times are stored as "YYYY-MM-DD HH:MM:SS.fff": text order is time order.
    sim::Statement q(*db_,
                     "SELECT start_lsn FROM cdc_lsn_time_mapping WHERE tran_end_time <= ?1 "
                     "ORDER BY start_lsn DESC LIMIT 1");
    q.BindText(1, FormatDateTime(time.value, 3));
    if (!q.Step() || q.IsNull(0)) return std::nullopt;
    return q.LsnAt(0, "cdc_lsn_time_mapping.start_lsn");
  }

  std::optional<LocalMicros> CommitTimeAtOrBefore(const Lsn& lsn) override {
    sim::Statement q(*db_,
                     "SELECT tran_end_time FROM cdc_lsn_time_mapping WHERE start_lsn <= ?1 "
                     "ORDER BY start_lsn DESC LIMIT 1");
    q.BindLsn(1, lsn);
    if (!q.Step()) return std::nullopt;
    return LocalTime(q.TextView(0), "cdc_lsn_time_mapping.tran_end_time");
  }

  std::vector<SplitPoint> SplitPoints(const std::string& capture_instance, const Lsn& from,
                                      const Lsn& to, int n) override {
    if (n < 1) throw ConfigError("the split count must be at least 1, got " + std::to_string(n));
    const Instance instance = Resolve(capture_instance);
    // What the reference's T-SQL (NTILE, then GROUP BY tile) answers: the rows in LSN order cut
    // into n tiles, the first (count % n) of them one row longer, each reported with its last
    // row's LSN and its size; a commit whose rows straddle two tiles is in both, and the
    // planner merges such tiles. Found by counting, then one pass over the LSN index: SQLite's
    // NTILE copies every row of the range first (26 s for 20,000,000 rows, against 3).
    const std::string table = sim::QuoteIdent(sim::ChangeTableStorageName(instance.info.name));
    sim::Statement count(*db_, "SELECT COUNT(*) FROM " + table +
                                   " WHERE \"__$start_lsn\" BETWEEN ?1 AND ?2");
    count.BindLsn(1, from);
    count.BindLsn(2, to);
    const std::int64_t rows = count.Step() ? count.Int(0) : 0;
    std::vector<SplitPoint> out;
    if (rows == 0) return out;
    const std::int64_t tiles = std::min<std::int64_t>(n, rows);
    std::vector<std::int64_t> ends;  // 1-based position of each tile's last row
    for (std::int64_t t = 0, end = 0; t < tiles; ++t) {
      end += rows / tiles + (t < rows % tiles ? 1 : 0);
      ends.push_back(end);
    }
    sim::Statement scan(*db_, "SELECT \"__$start_lsn\" FROM " + table +
                                  " WHERE \"__$start_lsn\" BETWEEN ?1 AND ?2 ORDER BY \"__$start_lsn\"");
    scan.BindLsn(1, from);
    scan.BindLsn(2, to);
    std::int64_t position = 0;
    std::size_t next = 0;
    while (next < ends.size() && scan.Step()) {
      if (++position != ends[next]) continue;
      const Lsn bound = scan.LsnAt(0, "__$start_lsn");
      const std::int64_t size = ends[next] - (next == 0 ? 0 : ends[next - 1]);
      out.push_back(SplitPoint{bound, bound.Increment(), size});
      ++next;
    }
    return out;
  }

  std::unique_ptr<arrow::RecordBatchReader> ReadChanges(const ChangeReadRequest& request,
                                                         const SourceClock& clock) override {
    const Instance instance = Resolve(request.capture_instance);
    SimChangeQuery query;
    query.path = path_;
    query.capture_instance = instance.info.name;
    query.columns = SelectColumns(ColumnsOf(instance), request.columns, instance.info.name);
    query.from = request.from;
    query.to = request.to;
    query.include_command_id = request.include_command_id;
    query.batch_rows = request.batch_rows;
    query.batch_bytes = request.batch_bytes;
    return MakeSimChangeReader(query, clock);
  }

  std::unique_ptr<arrow::RecordBatchReader> ReadSnapshot(
      const SnapshotReadRequest& request) override {
    // A transaction a test scheduled between the snapshot's stamp and its SELECT commits now.
    if (sim::HasQueuedBeforeSnapshotRead(*db_)) {
      sim::CommitQueuedBeforeSnapshotRead(*sim::SimDatabase::Open(path_));
    }
    const Instance instance = Resolve(request.capture_instance);
    SimSnapshotQuery query;
    query.path = path_;
    query.capture_instance = request.capture_instance;  // the name as configured
    query.columns = SelectColumns(ColumnsOf(instance), request.columns, instance.info.name);
    query.lo = request.lo;
    query.hi = request.hi;
    query.snapshot_lsn = request.snapshot_lsn;
    query.snapshot_commit_ts = request.snapshot_commit_ts;
    query.batch_rows = request.batch_rows;
    query.batch_bytes = request.batch_bytes;

    const Table table = TableOf(instance);
    query.table = sim::SourceTableStorageName(table.schema, table.name);
    for (const auto& column : query.columns) {
      // Matched by column_id: a column dropped from the table reads NULL, a renamed one
      // reads under its new name.
      const auto live = std::find_if(table.columns.begin(), table.columns.end(),
                                     [&](const TableColumn& c) { return c.column_id == column.column_id; });
      query.table_columns.push_back(live == table.columns.end()
                                        ? std::nullopt
                                        : std::optional<std::string>(live->name));
    }
    query.key = KeyOf(instance, table, request.key_columns);
    return MakeSimSnapshotReader(query);
  }

  std::optional<nlohmann::json> KeyAt(const KeyQuery& request, const nlohmann::json& from,
                                      std::int64_t offset) override {
    return SimKeyAt(*db_, KeyTableOf(request), from, offset);
  }

  std::optional<nlohmann::json> LastKey(const KeyQuery& request) override {
    return SimLastKey(*db_, KeyTableOf(request));
  }

  std::vector<SliceCount> CountKeySlices(const KeyQuery& request, std::int64_t start,
                                         std::int64_t width, std::int64_t slices) override {
    return SimCountKeySlices(*db_, KeyTableOf(request), start, width, slices);
  }

  std::vector<std::string> TableColumns(const std::string& capture_instance) override {
    std::vector<std::string> names;
    for (const auto& column : TableOf(Resolve(capture_instance)).columns) names.push_back(column.name);
    return names;
  }

  std::int64_t RowEstimate(const std::string& capture_instance) override {
    const Table table = TableOf(Resolve(capture_instance));
    return SimRowCount(*db_, sim::SourceTableStorageName(table.schema, table.name));
  }

 protected:
  std::string HowToListCaptureInstances() const override {
    return "list them with `mssql-cdc sim info --db " + path_ + "`";
  }

 private:
  struct Instance {
    CaptureInstanceInfo info;
    std::int64_t object_id = 0;
    std::int64_t source_object_id = 0;
  };
  struct TableColumn {
    int column_id = 0;
    std::string name;
    SqlType type;
  };
  struct Table {
    std::string schema;
    std::string name;
    std::vector<TableColumn> columns;  // live columns, by column_id
  };

  // The rows of `sql`, whose ?1 is `object_id`, each made by `make_row(statement)`.
  template <typename MakeRow,
            typename Row = std::invoke_result_t<MakeRow&, const sim::Statement&>>
  std::vector<Row> RowsOf(std::string_view sql, std::int64_t object_id, MakeRow make_row) {
    sim::Statement q(*db_, sql);
    q.BindInt(1, object_id);
    std::vector<Row> out;
    while (q.Step()) out.push_back(make_row(q));
    return out;
  }

  Instance Resolve(const std::string& name) {
    Instance instance;
    instance.info = ResolveCaptureInstance(name);
    sim::Statement q(*db_,
                     "SELECT object_id, source_object_id FROM cdc_change_tables "
                     "WHERE capture_instance = ?1");
    q.BindText(1, instance.info.name);
    if (!q.Step()) {
      throw NotFoundError("capture instance '" + instance.info.name +
                          "' was disabled while it was being read; " + HowToListCaptureInstances());
    }
    instance.object_id = q.Int(0);
    instance.source_object_id = q.Int(1);
    return instance;
  }

  std::vector<CapturedColumn> ColumnsOf(const Instance& instance) {
    return RowsOf("SELECT column_name, column_ordinal, column_id, column_type "
                  "FROM cdc_captured_columns WHERE object_id = ?1 ORDER BY column_ordinal",
                  instance.object_id, [&](const sim::Statement& q) {
                    CapturedColumn column;
                    column.name = q.Text(0);
                    column.column_ordinal = static_cast<int>(q.Int(1));
                    column.column_id = static_cast<int>(q.Int(2));
                    column.type = StoredType(q.TextView(3), "column '" + column.name +
                                                                "' of capture instance '" +
                                                                instance.info.name + "'");
                    return column;
                  });
  }

  Table TableOf(const Instance& instance) {
    Table table;
    sim::Statement t(*db_, "SELECT schema_name, table_name FROM sim_tables WHERE object_id = ?1");
    t.BindInt(1, instance.source_object_id);
    if (!t.Step()) {
      throw NotFoundError("the source table " + instance.info.source_schema + "." +
                          instance.info.source_table + " of capture instance '" +
                          instance.info.name + "' no longer exists");
    }
    table.schema = t.Text(0);
    table.name = t.Text(1);
    table.columns = RowsOf(
        "SELECT column_id, name, type FROM sim_columns WHERE object_id = ?1 ORDER BY column_id",
        instance.source_object_id, [&](const sim::Statement& c) {
          TableColumn column;
          column.column_id = static_cast<int>(c.Int(0));
          column.name = c.Text(1);
          column.type = StoredType(c.TextView(2), "column '" + column.name + "' of table " +
                                                      table.schema + "." + table.name);
          return column;
        });
    return table;
  }

  // The snapshot key: `wanted` (empty: the instance's index columns) matched to the table's
  // columns; empty for a keyless table.
  std::vector<SimKeyColumn> KeyOf(const Instance& instance, const Table& table,
                                  const std::vector<std::string>& wanted) const {
    std::vector<std::string> names;
    for (const auto& column : table.columns) names.push_back(column.name);
    std::vector<SimKeyColumn> key;
    for (const auto& name : wanted.empty() ? instance.info.index_columns : wanted) {
      const int i = FindName(names, name);
      if (i < 0) {
        throw ConfigError("key column '" + name + "' is not a column of table " + table.schema +
                          "." + table.name + "; it has: " + JoinNames(names));
      }
      key.push_back(SimKeyColumn{table.columns[i].name, table.columns[i].type});
    }
    return key;
  }

  SimKeyTable KeyTableOf(const KeyQuery& request) {
    const Instance instance = Resolve(request.capture_instance);
    const Table table = TableOf(instance);
    return SimKeyTable{sim::SourceTableStorageName(table.schema, table.name),
                       KeyOf(instance, table, request.key_columns)};
  }

  LocalMicros LocalTime(std::string_view text, const char* what) const {
    const auto micros = ParseDateTime(text);
    if (!micros) {
      throw SourceError(std::string(what) + " '" + std::string(text) + "' in sim database '" +
                        path_ + "' is not a time 'YYYY-MM-DD HH:MM:SS.fff'");
    }
    return LocalMicros{*micros};
  }

  SqlType StoredType(std::string_view text, const std::string& what) const {
    try {
      return SqlType::Parse(text);
    } catch (const ConfigError& e) {
      throw SourceError(what + " in sim database '" + path_ + "' has a malformed type: " +
                        e.what());
    }
  }

  std::string path_;
  std::shared_ptr<sim::SqliteDb> db_;
};

}  // namespace

std::unique_ptr<Source> OpenSimSource(const std::string& path) {
  std::shared_ptr<sim::SqliteDb> db;
  try {
    db = sim::SqliteDb::OpenReadOnly(path);
  } catch (const SourceError& e) {
    throw SourceError(std::string(e.what()) + ": " + CreateHint(path));
  }
  std::map<std::string, std::string, std::less<>> meta;
  try {
    sim::Statement q(*db, "SELECT key, value FROM sim_meta WHERE key IN (?1, ?2)");
    q.BindText(1, sim::kMetaFormat);
    q.BindText(2, sim::kMetaFormatVersion);
    while (q.Step()) meta[q.Text(0)] = q.Text(1);
  } catch (const SourceError& e) {
    throw SourceError("'" + path + "' is not a mssql-cdc sim database (" + e.what() + "): " +
                      CreateHint(path) + ", or give the path of one");
  }
  const auto format = meta.find(sim::kMetaFormat);
  if (format == meta.end() || format->second != sim::kFormatName) {
    throw SourceError("'" + path + "' is not a mssql-cdc sim database (its sim_meta has no '" +
                      std::string(sim::kMetaFormat) + "' = '" + std::string(sim::kFormatName) +
                      "'): " + CreateHint(path) + ", or give the path of one");
  }
  const auto version = meta.find(sim::kMetaFormatVersion);
  const std::string found = version == meta.end() ? "none" : version->second;
  if (found != std::to_string(sim::kFormatVersion)) {
    throw SourceError("sim database '" + path + "' has format version " + found +
                      ", and this build reads version " + std::to_string(sim::kFormatVersion) +
                      ": recreate it with `mssql-cdc sim create --db " + path +
                      "` (after moving the old file away)");
  }
  return std::make_unique<SimSource>(path, std::move(db));
}

}  // namespace mssql_cdc
