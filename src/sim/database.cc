#include "sim/database.h"

#include <algorithm>
#include <filesystem>
#include <charconv>
#include <cmath>
#include <set>

#include "core/errors.h"
#include "core/options.h"
#include "sim/access_token.h"
#include "sim/lsn_sequence.h"
#include "sim/storage.h"
#include "sim/value_codec.h"
#include "sim/wire_rows.h"

namespace mssql_cdc::sim {
namespace {

constexpr std::int64_t kMaxRetentionMinutes = 52'494'800;  // sp_cdc_change_job's limit
const std::string kZeroTranId(Lsn::kSize, '\0');

std::string NotASimDatabase(const std::string& path) {
  return path + " is not a mssql-cdc simulated database (no sim_meta format marker): create "
                "one with `mssql-cdc sim create`";
}

std::string FormatSeconds(double seconds) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, seconds).ptr;  // shortest exact form
  return std::string(text, end);
}

Lsn LsnFromBlob(const std::string& blob) { return Lsn::FromBytes(blob.data(), blob.size()); }

std::string Bracketed(const TableName& t) { return "[" + t.schema + "].[" + t.name + "]"; }

std::string ColumnSql(const ColumnDef& c) {
  return QuoteIdent(c.name) + " " + std::string(StorageAffinity(c.type)) +
         (c.nullable ? "" : " NOT NULL");
}

// Checks a column definition a caller built: its name and whether the simulator has its type.
void CheckColumn(const ColumnDef& c) {
  CheckColumnName(c.name, "column name");
  if (c.name.rfind("__$", 0) == 0) {
    throw ConfigError("column name " + c.name + " is reserved for change tables");
  }
  CheckSimulatedType(c.type, c.name);
}

// Whether `path` holds a simulated database: a SQLite file with the format marker.
bool IsSimDatabase(const std::string& path) {
  try {
    SqliteDb db(path, SqliteDb::Mode::kReadWrite);
    Statement st(db, "SELECT value FROM sim_meta WHERE key = 'format'");
    return st.Step() && st.Text(0) == kFormatName;
  } catch (const SourceError&) {
    return false;
  }
}

// Records `ddl`, run on the table `table_object_id` at `lsn` and `time`, in cdc_ddl_history
// once for each of the table's capture instances, as SQL Server does.
void RecordDdl(SqliteDb& db, std::int64_t table_object_id,
               const std::vector<CaptureInstance>& instances, const std::string& ddl,
               const Lsn& lsn, const std::string& time) {
  Statement history(db, "INSERT INTO cdc_ddl_history(source_object_id, object_id, "
                        "required_column_update, ddl_command, ddl_lsn, ddl_time) "
                        "VALUES(?, ?, 0, ?, ?, ?)");
  for (const auto& instance : instances) {
    history.Reset();
    history.BindInt(1, table_object_id)
        .BindInt(2, instance.object_id)
        .BindText(3, ddl)
        .BindLsn(4, lsn)
        .BindText(5, time)
        .Run();
  }
}

void RemoveDatabaseFiles(const std::string& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::remove(path + suffix, ignored);
  }
}

}  // namespace

bool ChangeRow::IsBitSet(int column_ordinal) const {
  if (column_ordinal < 1) return false;
  const std::size_t byte = static_cast<std::size_t>(column_ordinal - 1) / 8;
  if (byte >= update_mask.size()) return false;
  const auto value = static_cast<unsigned char>(update_mask[update_mask.size() - 1 - byte]);
  return (value >> ((column_ordinal - 1) % 8)) & 1;
}

bool LsnTimeEntry::is_idle() const {
  return std::all_of(tran_id.begin(), tran_id.end(), [](char c) { return c == 0; });
}

SimDatabase::SimDatabase(std::unique_ptr<SqliteDb> db, SourceClock clock)
    : db_(std::move(db)), catalog_(*db_), clock_(std::move(clock)) {}

SimDatabase::~SimDatabase() = default;

std::unique_ptr<SimDatabase> SimDatabase::Create(const std::string& path,
                                                 const CreateOptions& options) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0) {
    if (IsSimDatabase(path)) {
      throw ConfigError(path + " is already a simulated database: use it as it is, or delete "
                               "the file to start over");
    }
    throw ConfigError(path + " exists and is not a simulated database: refusing to overwrite "
                             "it; choose another path");
  }
  CheckIdentifier(options.database_name, "database name");
  CheckIdleInterval(options.idle_entry_seconds);
  SourceClock clock = SourceClock::ForWindowsZone(options.time_zone);
  try {
    auto db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kCreate);
    db->EnableWal();
    {
      WriteTransaction tx(*db);
      db->Exec(kCatalogSchema);
      Catalog catalog(*db);
      catalog.SetMeta(kMetaFormat, kFormatName);
      catalog.SetMeta(kMetaFormatVersion, std::to_string(kFormatVersion));
      catalog.SetMeta(kMetaDatabaseName, options.database_name);
      catalog.SetMeta(kMetaTimeZone, clock.name());
      catalog.SetMeta(kMetaProductMajorVersion, "16");
      catalog.SetMeta(kMetaLastLsn, options.first_lsn.value_or(LsnSequence::Initial()).ToString());
      catalog.SetMeta(kMetaLastTranId, "1000");
      catalog.SetMeta(kMetaNextObjectId, "245575913");
      catalog.SetMeta(kMetaLastRowversion, "2000");
      catalog.SetMeta(kMetaClockMode, options.clock == ClockMode::kManual ? "manual" : "real");
      catalog.SetMeta(kMetaManualClock, FormatDateTime(options.manual_start.value, 6));
      if (options.wire_rows) catalog.SetMeta(kMetaWireRows, "1");
      catalog.SetMeta(kMetaIdleEntrySeconds, FormatSeconds(options.idle_entry_seconds));
      tx.Commit();
    }
    return std::unique_ptr<SimDatabase>(new SimDatabase(std::move(db), clock));
  } catch (...) {
    RemoveDatabaseFiles(path);
    throw;
  }
}

std::unique_ptr<SimDatabase> SimDatabase::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw SourceError(path + " does not exist: create a simulated database with "
                             "`mssql-cdc sim create --db " + path + "`");
  }
  std::unique_ptr<SqliteDb> db;
  try {
    db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kReadWrite);
  } catch (const SourceError& e) {
    throw SourceError(std::string(e.what()) + " (create one with `mssql-cdc sim create`)");
  }
  std::optional<std::string> format, version;
  try {
    Catalog catalog(*db);
    format = catalog.GetMeta(kMetaFormat);
    version = catalog.GetMeta(kMetaFormatVersion);
  } catch (const SourceError&) {
    throw SourceError(NotASimDatabase(path));
  }
  if (!format || *format != kFormatName) throw SourceError(NotASimDatabase(path));
  int format_version = 0;
  try {
    format_version = version ? std::stoi(*version) : 0;
  } catch (const std::exception&) {
  }
  if (format_version < 1 || format_version > kFormatVersion) {
    throw SourceError(path + " has simulated-database format version " +
                      version.value_or("(none)") + "; this build reads version " +
                      std::to_string(kFormatVersion) +
                      ": use the mssql-cdc that wrote it, or create a new database");
  }
  db->EnableWal();
  Catalog catalog(*db);
  SourceClock clock = SourceClock::ForWindowsZone(catalog.RequireMeta(kMetaTimeZone));
  return std::unique_ptr<SimDatabase>(new SimDatabase(std::move(db), clock));
}

std::string SimDatabase::database_name() { return catalog_.RequireMeta(kMetaDatabaseName); }

// ---- clock ----

ClockMode SimDatabase::clock_mode() {
  return catalog_.RequireMeta(kMetaClockMode) == "manual" ? ClockMode::kManual : ClockMode::kReal;
}

UtcMicros SimDatabase::NowUtc() {
  if (clock_mode() == ClockMode::kReal) return mssql_cdc::NowUtc();
  const std::string text = catalog_.RequireMeta(kMetaManualClock);
  auto micros = ParseDateTime(text);
  if (!micros) throw SourceError(path() + ": malformed manual clock '" + text + "'");
  return UtcMicros{*micros};
}

void SimDatabase::SetManualClock(UtcMicros now) {
  WriteTransaction tx(*db_);
  catalog_.SetMeta(kMetaClockMode, "manual");
  catalog_.SetMeta(kMetaManualClock, FormatDateTime(now.value, 6));
  tx.Commit();
}

void SimDatabase::AdvanceClock(std::int64_t micros) {
  if (micros < 0) throw ConfigError("the clock only moves forward; got a negative step");
  WriteTransaction tx(*db_);
  if (clock_mode() != ClockMode::kManual) {
    throw ConfigError(path() + " runs on the real clock; switch to the manual clock (sim "
                               "clock --set ...) before advancing it");
  }
  const UtcMicros now = NowUtc();
  catalog_.SetMeta(kMetaManualClock, FormatDateTime(now.value + micros, 6));
  tx.Commit();
}

void SimDatabase::UseRealClock() {
  WriteTransaction tx(*db_);
  catalog_.SetMeta(kMetaClockMode, "real");
  tx.Commit();
}

std::string SimDatabase::ServerTime(UtcMicros utc) const {
  return FormatServerDatetime(clock_.ToLocal(utc));
}

// ---- DDL ----

Lsn SimDatabase::CommitMetadataChange() {
  LsnSequence sequence = catalog_.LoadLsnSequence();
  const Lsn lsn = sequence.SkipThenNext(2);
  catalog_.StoreLsnSequence(sequence);
  const std::string now = ServerTime(NowUtc());
  catalog_.AddLsnTimeEntry(lsn, now, now, catalog_.AllocateTranId());
  return lsn;
}

void SimDatabase::CreateTable(const TableDef& table) {
  CheckIdentifier(table.name.schema, "schema name");
  CheckIdentifier(table.name.name, "table name");
  if (SameName(table.name.schema, "cdc")) {
    throw ConfigError("the cdc schema is reserved for change data capture; put " +
                      table.name.name + " in another schema, e.g. dbo");
  }
  if (table.columns.empty()) throw ConfigError("table " + table.name.ToString() + " has no columns");
  if (table.columns.size() > 1024) {
    throw ConfigError("table " + table.name.ToString() + " has more than 1024 columns");
  }
  std::vector<ColumnDef> columns = table.columns;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    CheckColumn(columns[i]);
    for (std::size_t j = 0; j < i; ++j) {
      if (SameName(columns[i].name, columns[j].name)) {
        throw ConfigError("table " + table.name.ToString() + ": column " + columns[i].name +
                          " is declared twice");
      }
    }
  }
  if (table.primary_key.empty()) {
    throw ConfigError("table " + table.name.ToString() +
                      " needs a primary key (--key COLUMN): the simulator updates and deletes "
                      "rows by key");
  }
  std::vector<int> key_ordinal(columns.size(), 0);
  for (std::size_t k = 0; k < table.primary_key.size(); ++k) {
    const std::string& key = table.primary_key[k];
    auto it = std::find_if(columns.begin(), columns.end(),
                           [&](const ColumnDef& c) { return SameName(c.name, key); });
    if (it == columns.end()) {
      throw ConfigError("table " + table.name.ToString() + ": key column " + key +
                        " is not one of its columns");
    }
    const std::size_t index = static_cast<std::size_t>(it - columns.begin());
    if (key_ordinal[index] != 0) {
      throw ConfigError("table " + table.name.ToString() + ": key column " + key +
                        " is named twice");
    }
    if (IsLob(it->type) || IsRowversion(it->type)) {
      throw ConfigError("table " + table.name.ToString() + ": column " + it->name + " of type " +
                        it->type.ToString() + " cannot be part of a primary key");
    }
    key_ordinal[index] = static_cast<int>(k + 1);
    it->nullable = false;  // a primary key makes its columns NOT NULL
  }

  WriteTransaction tx(*db_);
  if (catalog_.FindTable(table.name)) {
    throw ConfigError("there is already a table named " + table.name.ToString() + " in " +
                      path());
  }
  const std::int64_t object_id = catalog_.NextObjectId();
  Statement add_table(*db_, "INSERT INTO sim_tables(object_id, schema_name, table_name, "
                            "create_date, next_column_id) VALUES(?, ?, ?, ?, ?)");
  add_table.BindInt(1, object_id)
      .BindText(2, table.name.schema)
      .BindText(3, table.name.name)
      .BindText(4, ServerTime(NowUtc()))
      .BindInt(5, static_cast<std::int64_t>(columns.size()) + 1)
      .Run();
  std::string sql = "CREATE TABLE " +
                    QuoteIdent(SourceTableStorageName(table.name.schema, table.name.name)) + "(";
  Statement add_column(*db_, "INSERT INTO sim_columns(object_id, column_id, name, type, "
                             "is_nullable, is_computed, key_ordinal) VALUES(?, ?, ?, ?, ?, 0, ?)");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    add_column.Reset();
    add_column.BindInt(1, object_id)
        .BindInt(2, static_cast<std::int64_t>(i + 1))
        .BindText(3, columns[i].name)
        .BindText(4, columns[i].type.ToString())
        .BindInt(5, columns[i].nullable ? 1 : 0)
        .BindInt(6, key_ordinal[i])
        .Run();
    sql += ColumnSql(columns[i]) + ", ";
  }
  sql += "PRIMARY KEY(";
  for (std::size_t k = 0; k < table.primary_key.size(); ++k) {
    auto it = std::find_if(columns.begin(), columns.end(), [&](const ColumnDef& c) {
      return SameName(c.name, table.primary_key[k]);
    });
    sql += (k ? ", " : "") + QuoteIdent(it->name);
  }
  sql += "))";
  db_->Exec(sql);
  tx.Commit();
}

namespace {

// A clustered (WITHOUT ROWID) table keeps a row whole in its b-tree page up to about 1,000
// bytes on 4 KiB pages; longer ones spill into overflow pages.
constexpr int kClusteredRowBytes = 900;

// The bytes a change row of `instance` may take as stored, from its declared types: text at
// its declared length (nvarchar at up to 3 UTF-8 bytes a character), a (max) column at 64 bytes
// (a long value overflows in any layout), the rest at their text or integer form.
int StoredRowBytes(const CaptureInstance& instance) {
  int bytes = 48;  // __$start_lsn, __$seqval, __$operation, __$update_mask, __$command_id
  for (const auto& column : instance.columns) {
    const SqlType& type = column.type;
    const bool wide_chars = type.IsOneOf({SqlTypeKind::kNChar, SqlTypeKind::kNVarChar});
    if (type.IsMax() || IsLob(type)) {
      bytes += 64;
    } else if (type.max_length > 0) {
      bytes += type.max_length * (wide_chars ? 3 : 1);
    } else if (type.IsOneOf({SqlTypeKind::kDecimal, SqlTypeKind::kNumeric})) {
      bytes += type.precision + 2;
    } else {
      bytes += 36;  // dates and times as text, uniqueidentifier; numbers take less
    }
  }
  return bytes;
}

}  // namespace

void SimDatabase::CreateChangeTable(const CaptureInstance& instance) {
  const std::string name = ChangeTableStorageName(instance.name);
  std::string sql = "CREATE TABLE " + QuoteIdent(name) +
                    "(\"__$start_lsn\" BLOB NOT NULL, \"__$end_lsn\" BLOB, "
                    "\"__$seqval\" BLOB NOT NULL, \"__$operation\" INTEGER NOT NULL, "
                    "\"__$update_mask\" BLOB";
  for (const auto& c : instance.columns) {
    sql += ", " + QuoteIdent(c.name) + " " + std::string(StorageAffinity(c.type));
  }
  sql += ", \"__$command_id\" INTEGER NOT NULL";
  const std::string order = "\"__$start_lsn\", \"__$command_id\", \"__$seqval\", \"__$operation\"";
  const bool clustered = StoredRowBytes(instance) <= kClusteredRowBytes;
  // A wire row is no longer than its change row as stored: the two share the layout.
  if (KeepsWireRows(*db_)) CreateWireTable(*db_, instance, clustered);
  if (clustered) {
    // Clustered on the order change reads ask for, as SQL Server's change tables are: a range
    // is then read in one pass over the table, not through an index and a lookup per row.
    db_->Exec(sql + ", PRIMARY KEY(" + order + ")) WITHOUT ROWID");
  } else {
    // Rows this wide would overflow a clustered table's pages (SQLite keeps at most about a
    // quarter of a page of an index entry in place), costing more than the index lookup.
    db_->Exec(sql + ")");
    db_->Exec("CREATE INDEX " + QuoteIdent(ChangeTableIndexName(instance.name)) + " ON " +
              QuoteIdent(name) + "(" + order + ")");
  }
}

std::string SimDatabase::EnableCdc(const TableName& table, const EnableCdcOptions& options) {
  const std::string name =
      options.capture_instance.empty() ? table.DefaultCaptureInstance() : options.capture_instance;
  CheckIdentifier(name, "capture instance name", 100);
  if (!options.role_name.empty()) CheckIdentifier(options.role_name, "role name");

  WriteTransaction tx(*db_);
  const TableInfo info = catalog_.LoadTable(table);
  const auto existing = catalog_.InstancesOf(info.object_id);
  if (existing.size() >= 2) {
    throw ConfigError("two capture instances already exist for source table " +
                      info.name.ToString() + " (" + existing[0].name + ", " + existing[1].name +
                      "); a table can have at most two capture instances: disable the one no "
                      "longer needed and retry (SQL Server error 22962)");
  }
  if (auto other = catalog_.FindInstance(name)) {
    throw ConfigError("could not create capture instance " + name +
                      " because a capture instance of that name already exists (on " +
                      other->table.ToString() +
                      "): give another name with --capture-instance (SQL Server error 22926)");
  }
  CaptureInstance instance;
  instance.name = name;
  instance.table = info.name;
  instance.source_object_id = info.object_id;
  std::vector<const ColumnInfo*> captured;
  if (options.captured_columns.empty()) {
    for (const auto& c : info.columns) captured.push_back(&c);
  } else {
    for (const auto& requested : options.captured_columns) {
      const ColumnInfo* c = info.Find(requested);
      if (!c) {
        throw ConfigError("captured column " + requested + " is not a column of " +
                          info.name.ToString());
      }
      if (std::find(captured.begin(), captured.end(), c) != captured.end()) {
        throw ConfigError("captured column " + requested + " is listed twice");
      }
      captured.push_back(c);
    }
    for (const auto& key : info.key) {
      if (std::none_of(captured.begin(), captured.end(),
                       [&](const ColumnInfo* c) { return SameName(c->name, key); })) {
        throw ConfigError("the captured column list must include the primary key column " + key +
                          " of " + info.name.ToString());
      }
    }
    // Ordinals follow the source table's column order, as SQL Server's do.
    std::sort(captured.begin(), captured.end(),
              [](const ColumnInfo* a, const ColumnInfo* b) { return a->column_id < b->column_id; });
  }
  for (std::size_t i = 0; i < captured.size(); ++i) {
    // A rowversion is captured as binary(8) (cdc.<capture_instance>_CT's type exceptions).
    SqlType type = IsRowversion(captured[i]->type) ? SqlType::Parse("binary(8)") : captured[i]->type;
    instance.columns.push_back(
        CapturedColumnInfo{captured[i]->name, captured[i]->column_id, type, static_cast<int>(i + 1)});
  }
  instance.index_columns = info.key;
  const Lsn enabled_at = CommitMetadataChange();
  // Beside another instance of the table, the new one's start_lsn reads zero until the
  // capture process reaches its enable (the next commit or idle entry), as SQL Server's does;
  // a table's first instance starts at once.
  const bool pending = !existing.empty();
  instance.start_lsn = pending ? Lsn() : enabled_at;
  instance.object_id = catalog_.NextObjectId();
  instance.create_date = ServerTime(NowUtc());

  Statement add(*db_,
                "INSERT INTO cdc_change_tables(object_id, capture_instance, source_object_id, "
                "source_schema, source_table, start_lsn, end_lsn, supports_net_changes, "
                "has_drop_pending, role_name, index_name, filegroup_name, create_date, "
                "partition_switch) VALUES(?, ?, ?, ?, ?, ?, NULL, 1, 0, ?, ?, NULL, ?, 0)");
  add.BindInt(1, instance.object_id)
      .BindText(2, instance.name)
      .BindInt(3, info.object_id)
      .BindText(4, info.name.schema)
      .BindText(5, info.name.name)
      .BindBlob(6, instance.start_lsn.data(), Lsn::kSize);
  if (options.role_name.empty()) {
    add.BindNull(7);
  } else {
    add.BindText(7, options.role_name);
  }
  add.BindText(8, "PK_" + info.name.name).BindText(9, instance.create_date).Run();
  Statement add_column(*db_, "INSERT INTO cdc_captured_columns(object_id, column_name, "
                             "column_id, column_type, column_ordinal, is_computed) "
                             "VALUES(?, ?, ?, ?, ?, 0)");
  for (const auto& c : instance.columns) {
    add_column.Reset();
    add_column.BindInt(1, instance.object_id)
        .BindText(2, c.name)
        .BindInt(3, c.column_id)
        .BindText(4, c.type.ToString())
        .BindInt(5, c.ordinal)
        .Run();
  }
  Statement add_index(*db_, "INSERT INTO cdc_index_columns(object_id, column_name, "
                            "index_ordinal, column_id) VALUES(?, ?, ?, ?)");
  for (std::size_t k = 0; k < info.key.size(); ++k) {
    add_index.Reset();
    add_index.BindInt(1, instance.object_id)
        .BindText(2, info.key[k])
        .BindInt(3, static_cast<std::int64_t>(k + 1))
        .BindInt(4, info.Find(info.key[k])->column_id)
        .Run();
  }
  CreateChangeTable(instance);
  if (pending) catalog_.AddPendingEnable(instance.object_id, enabled_at);
  tx.Commit();
  return instance.name;
}

void SimDatabase::DisableCdc(std::string_view capture_instance) {
  WriteTransaction tx(*db_);
  const CaptureInstance instance = catalog_.LoadInstance(capture_instance);
  db_->Exec("DROP TABLE " + QuoteIdent(ChangeTableStorageName(instance.name)));
  db_->Exec("DROP TABLE IF EXISTS " + QuoteIdent(WireTableStorageName(instance.name)));
  for (const char* table : {"cdc_change_tables", "cdc_captured_columns", "cdc_index_columns"}) {
    Statement st(*db_, "DELETE FROM " + std::string(table) + " WHERE object_id = ?");
    st.BindInt(1, instance.object_id).Run();
  }
  Statement history(*db_, "DELETE FROM cdc_ddl_history WHERE object_id = ?");
  history.BindInt(1, instance.object_id).Run();
  tx.Commit();
}

void SimDatabase::AddColumn(const TableName& table, const ColumnDef& column) {
  CheckColumn(column);
  WriteTransaction tx(*db_);
  const TableInfo info = catalog_.LoadTable(table);
  if (info.Find(column.name)) {
    throw ConfigError("table " + info.name.ToString() + " already has a column named " +
                      column.name);
  }
  if (!column.nullable && RowCount(info.name) > 0) {
    throw ConfigError("cannot add NOT NULL column " + column.name + " to " +
                      info.name.ToString() +
                      ", which has rows (SQL Server needs a DEFAULT then, which the simulator "
                      "does not model): add it as NULL");
  }
  Statement next(*db_, "SELECT next_column_id FROM sim_tables WHERE object_id = ?");
  next.BindInt(1, info.object_id);
  next.Step();
  const std::int64_t column_id = next.Int(0);
  Statement add(*db_, "INSERT INTO sim_columns(object_id, column_id, name, type, is_nullable, "
                      "is_computed, key_ordinal) VALUES(?, ?, ?, ?, ?, 0, 0)");
  add.BindInt(1, info.object_id)
      .BindInt(2, column_id)
      .BindText(3, column.name)
      .BindText(4, column.type.ToString())
      .BindInt(5, column.nullable ? 1 : 0)
      .Run();
  Statement bump(*db_, "UPDATE sim_tables SET next_column_id = ? WHERE object_id = ?");
  bump.BindInt(1, column_id + 1).BindInt(2, info.object_id).Run();
  // SQLite cannot add a NOT NULL column without a default; the catalog carries nullability.
  ColumnDef stored = column;
  stored.nullable = true;
  db_->Exec("ALTER TABLE " + QuoteIdent(SourceTableStorageName(info.name.schema, info.name.name)) +
            " ADD COLUMN " + ColumnSql(stored));
  const std::string ddl = "ALTER TABLE " + Bracketed(info.name) + " ADD [" + column.name + "] " +
                          column.type.ToString() + (column.nullable ? " NULL" : " NOT NULL");
  const auto instances = catalog_.InstancesOf(info.object_id);
  if (!instances.empty()) {
    const Lsn lsn = CommitMetadataChange();
    RecordDdl(*db_, info.object_id, instances, ddl, lsn, ServerTime(NowUtc()));
  }
  tx.Commit();
}

void SimDatabase::DropColumn(const TableName& table, std::string_view column) {
  WriteTransaction tx(*db_);
  const TableInfo info = catalog_.LoadTable(table);
  const ColumnInfo* c = info.Find(column);
  if (!c) {
    throw ConfigError("table " + info.name.ToString() + " has no column named " +
                      std::string(column));
  }
  if (c->key_ordinal > 0) {
    throw ConfigError("cannot drop column " + c->name + " of " + info.name.ToString() +
                      ": it is part of the primary key");
  }
  const std::string name = c->name;
  Statement remove(*db_, "DELETE FROM sim_columns WHERE object_id = ? AND column_id = ?");
  remove.BindInt(1, info.object_id).BindInt(2, c->column_id).Run();
  db_->Exec("ALTER TABLE " + QuoteIdent(SourceTableStorageName(info.name.schema, info.name.name)) +
            " DROP COLUMN " + QuoteIdent(name));
  const auto instances = catalog_.InstancesOf(info.object_id);
  if (!instances.empty()) {
    const Lsn lsn = CommitMetadataChange();
    const std::string ddl = "ALTER TABLE " + Bracketed(info.name) + " DROP COLUMN [" + name + "]";
    RecordDdl(*db_, info.object_id, instances, ddl, lsn, ServerTime(NowUtc()));
  }
  tx.Commit();
}

namespace {

// Converts the stored values of `column` in `storage` to `type` in place, one distinct value
// at a time (change tables have no rowid); `what` names the table in the error of a value that
// does not fit.
void ConvertStoredValues(SqliteDb& db, const std::string& storage, const std::string& column,
                         const SqlType& type, const std::string& what) {
  Statement read(db, "SELECT DISTINCT " + QuoteIdent(column) + " FROM " + QuoteIdent(storage) +
                         " WHERE " + QuoteIdent(column) + " IS NOT NULL");
  std::vector<std::pair<Value, Value>> changed;
  while (read.Step()) {
    const Value stored = read.Get(0);
    Value converted;
    try {
      converted = EncodeValue(type, stored, column);
    } catch (const ConfigError& e) {
      throw ConfigError("cannot alter column " + column + " to " + type.ToString() + ": " +
                        what + " holds a value that does not fit (" + e.what() +
                        "); SQL Server refuses the statement too (error 8115 or 2628), and "
                        "nothing was changed");
    }
    if (!(converted == stored)) changed.emplace_back(stored, std::move(converted));
  }
  Statement write(db, "UPDATE " + QuoteIdent(storage) + " SET " + QuoteIdent(column) +
                          " = ?1 WHERE " + QuoteIdent(column) + " = ?2");
  for (const auto& [stored, converted] : changed) {
    write.Reset();
    write.Bind(1, converted).Bind(2, stored).Run();
  }
}

}  // namespace

void SimDatabase::AlterColumn(const TableName& table, const ColumnDef& column) {
  CheckColumn(column);
  WriteTransaction tx(*db_);
  const TableInfo info = catalog_.LoadTable(table);
  const ColumnInfo* c = info.Find(column.name);
  if (!c) {
    throw ConfigError("table " + info.name.ToString() + " has no column named " + column.name);
  }
  if (c->key_ordinal > 0) {
    throw ConfigError("cannot alter column " + c->name + " of " + info.name.ToString() +
                      ": it is part of the primary key, whose index depends on it (SQL Server "
                      "error 5074)");
  }
  if (IsRowversion(c->type) || IsRowversion(column.type)) {
    throw ConfigError("cannot alter column " + c->name + " of " + info.name.ToString() +
                      " to or from rowversion: SQL Server refuses it (error 4928)");
  }
  if (StorageAffinity(c->type) != StorageAffinity(column.type)) {
    throw ConfigError("the simulator does not model altering column " + c->name + " from " +
                      c->type.ToString() + " to " + column.type.ToString() +
                      ", which changes how its values are stored; alter it within the integer, "
                      "floating-point, binary or character/decimal/date types");
  }
  const std::string name = c->name;
  const std::string source_storage = SourceTableStorageName(info.name.schema, info.name.name);
  if (!column.nullable) {
    Statement nulls(*db_, "SELECT count(*) FROM " + QuoteIdent(source_storage) + " WHERE " +
                              QuoteIdent(name) + " IS NULL");
    nulls.Step();
    if (nulls.Int(0) > 0) {
      throw ConfigError("cannot alter column " + name + " of " + info.name.ToString() +
                        " to NOT NULL: " + std::to_string(nulls.Int(0)) +
                        " rows hold NULL in it (SQL Server error 515); nothing was changed");
    }
  }
  ConvertStoredValues(*db_, source_storage, name, column.type, info.name.ToString());
  Statement retype(*db_, "UPDATE sim_columns SET type = ?, is_nullable = ? "
                         "WHERE object_id = ? AND column_id = ?");
  retype.BindText(1, column.type.ToString())
      .BindInt(2, column.nullable ? 1 : 0)
      .BindInt(3, info.object_id)
      .BindInt(4, c->column_id)
      .Run();
  const auto instances = catalog_.InstancesOf(info.object_id);
  const bool wire_rows = KeepsWireRows(*db_);
  for (const auto& instance : instances) {
    const auto captured = std::find_if(instance.columns.begin(), instance.columns.end(),
                                       [&](const CapturedColumnInfo& x) { return x.column_id == c->column_id; });
    if (captured == instance.columns.end()) continue;
    ConvertStoredValues(*db_, ChangeTableStorageName(instance.name), captured->name, column.type,
                        "change table cdc." + instance.name + "_CT");
    Statement recapture(*db_, "UPDATE cdc_captured_columns SET column_type = ? "
                              "WHERE object_id = ? AND column_id = ?");
    recapture.BindText(1, column.type.ToString())
        .BindInt(2, instance.object_id)
        .BindInt(3, c->column_id)
        .Run();
    // The wire form of the stored rows follows the old type: they are served from the change
    // table from now on.
    if (wire_rows) {
      db_->Exec("UPDATE " + QuoteIdent(WireTableStorageName(instance.name)) +
                " SET \"__$values\" = NULL");
    }
  }
  if (!instances.empty()) {
    const Lsn lsn = CommitMetadataChange();
    const std::string ddl = "ALTER TABLE " + Bracketed(info.name) + " ALTER COLUMN [" + name +
                            "] " + column.type.ToString() + (column.nullable ? " NULL" : " NOT NULL");
    RecordDdl(*db_, info.object_id, instances, ddl, lsn, ServerTime(NowUtc()));
  }
  tx.Commit();
}

// ---- DML and the capture process ----

Lsn SimDatabase::WriteIdleEntry() {
  WriteTransaction tx(*db_);
  catalog_.ProcessPendingEnables();
  LsnSequence sequence = catalog_.LoadLsnSequence();
  const Lsn lsn = sequence.NextBlock();
  catalog_.StoreLsnSequence(sequence);
  const std::string now = ServerTime(NowUtc());
  catalog_.AddLsnTimeEntry(lsn, now, now, kZeroTranId);
  tx.Commit();
  return lsn;
}

void CheckIdleInterval(double seconds) {
  if (!(seconds >= 0.001 && seconds <= 86'400)) {
    throw ConfigError("the idle-entry interval must be from 0.001 to 86400 seconds, not " + FormatSeconds(seconds));
  }
}

double SimDatabase::idle_entry_seconds() {
  const auto text = catalog_.GetMeta(kMetaIdleEntrySeconds);
  return text ? std::stod(*text) : kDefaultIdleEntrySeconds;
}

std::optional<UtcMicros> SimDatabase::LastEntryUtc() {
  Statement last(*db_, "SELECT tran_end_time FROM cdc_lsn_time_mapping ORDER BY start_lsn DESC LIMIT 1");
  if (!last.Step()) return std::nullopt;
  return CommitInstant(clock_, ParseServerDatetime(last.Text(0)), [&](LocalMicros from) {
    Statement window(*db_,
                     "SELECT tran_end_time FROM cdc_lsn_time_mapping WHERE start_lsn > COALESCE((SELECT "
                     "start_lsn FROM cdc_lsn_time_mapping WHERE tran_end_time <= ?1 ORDER BY start_lsn DESC "
                     "LIMIT 1), x'') ORDER BY start_lsn");
    window.BindText(1, FormatDateTime(from.value, 3));
    std::vector<LocalMicros> times;
    while (window.Step()) times.push_back(ParseServerDatetime(window.Text(0)));
    return times;
  });
}

std::int64_t SimDatabase::WriteDueIdleEntries(std::optional<double> interval_seconds) {
  const double seconds = interval_seconds ? *interval_seconds : idle_entry_seconds();
  CheckIdleInterval(seconds);
  const auto interval = static_cast<std::int64_t>(std::llround(seconds * 1e6));
  constexpr std::int64_t kMostEntries = 1000;
  auto due_after = [&](UtcMicros* last_time) -> std::int64_t {
    const auto last = LastEntryUtc();
    if (!last) return 0;
    *last_time = *last;
    return std::max<std::int64_t>((NowUtc().value - last_time->value) / interval, 0);
  };
  UtcMicros last_time;
  if (due_after(&last_time) == 0) return 0;  // the usual answer, without a write transaction
  WriteTransaction tx(*db_);
  const std::int64_t due = due_after(&last_time);  // again: another client may have written
  if (due == 0 || catalog_.ListInstances().empty()) return 0;
  const std::int64_t skipped = std::max<std::int64_t>(due - kMostEntries, 0);
  catalog_.ProcessPendingEnables();
  LsnSequence sequence = catalog_.LoadLsnSequence();
  for (std::int64_t k = skipped + 1; k <= due; ++k) {
    const std::string at = ServerTime(UtcMicros{last_time.value + k * interval});
    catalog_.AddLsnTimeEntry(sequence.NextBlock(), at, at, kZeroTranId);
  }
  catalog_.StoreLsnSequence(sequence);
  tx.Commit();
  return due - skipped;
}

CleanupResult SimDatabase::Cleanup(std::int64_t retention_minutes) {
  if (retention_minutes < 0 || retention_minutes > kMaxRetentionMinutes) {
    throw ConfigError("retention of " + std::to_string(retention_minutes) +
                      " minutes is out of range: give 0 to " +
                      std::to_string(kMaxRetentionMinutes) + " minutes");
  }
  CleanupResult result;
  WriteTransaction tx(*db_);
  const bool keeps_wire_rows = KeepsWireRows(*db_);
  Statement max(*db_, "SELECT tran_end_time FROM cdc_lsn_time_mapping "
                      "ORDER BY start_lsn DESC LIMIT 1");
  if (!max.Step()) return result;
  const LocalMicros max_time = ParseServerDatetime(max.Text(0));
  // Entries carry whole milliseconds, so comparing with the threshold rounded up to the next
  // millisecond is exact.
  std::int64_t threshold = max_time.value - retention_minutes * kMicrosPerMinute;
  threshold = (threshold + 999) / 1000 * 1000;
  Statement first(*db_, "SELECT start_lsn FROM cdc_lsn_time_mapping WHERE tran_end_time >= ? "
                        "ORDER BY start_lsn LIMIT 1");
  first.BindText(1, FormatDateTime(threshold, 3));
  if (!first.Step()) return result;
  const Lsn low_water = LsnFromBlob(first.Blob(0));
  result.low_water_mark = low_water;
  for (const auto& instance : catalog_.ListInstances()) {
    if (instance.start_lsn.IsZero()) continue;  // an enable capture has not reached: no rows
    result.change_rows_deleted += RaiseMinLsn(instance, low_water, keeps_wire_rows);
  }
  Statement purge(*db_, "DELETE FROM cdc_lsn_time_mapping WHERE start_lsn < ?");
  purge.BindBlob(1, low_water.data(), Lsn::kSize).Run();
  result.lsn_time_entries_deleted = db_->Changes();
  tx.Commit();
  return result;
}

CleanupResult SimDatabase::CleanupInstance(std::string_view capture_instance, const Lsn& low_water_mark) {
  CleanupResult result;
  WriteTransaction tx(*db_);
  const CaptureInstance target = Instance(capture_instance);
  result.low_water_mark = low_water_mark;
  result.change_rows_deleted = RaiseMinLsn(target, low_water_mark, KeepsWireRows(*db_));
  // lsn_time_mapping keeps what any instance may still read.
  std::optional<Lsn> lowest;
  for (const auto& instance : catalog_.ListInstances()) {
    if (instance.start_lsn.IsZero()) continue;
    const Lsn start = instance.name == target.name ? std::max(instance.start_lsn, low_water_mark) : instance.start_lsn;
    if (!lowest || start < *lowest) lowest = start;
  }
  if (lowest) {
    Statement purge(*db_, "DELETE FROM cdc_lsn_time_mapping WHERE start_lsn < ?");
    purge.BindBlob(1, lowest->data(), Lsn::kSize).Run();
    result.lsn_time_entries_deleted = db_->Changes();
  }
  tx.Commit();
  return result;
}

std::int64_t SimDatabase::RaiseMinLsn(const CaptureInstance& instance, const Lsn& low_water, bool keeps_wire_rows) {
  const Lsn start = std::max(instance.start_lsn, low_water);
  if (start != instance.start_lsn) {
    Statement raise(*db_, "UPDATE cdc_change_tables SET start_lsn = ? WHERE object_id = ?");
    raise.BindBlob(1, start.data(), Lsn::kSize).BindInt(2, instance.object_id).Run();
  }
  Statement purge(*db_, "DELETE FROM " + QuoteIdent(ChangeTableStorageName(instance.name)) +
                            " WHERE \"__$start_lsn\" < ?");
  purge.BindBlob(1, start.data(), Lsn::kSize).Run();
  const std::int64_t deleted = db_->Changes();
  if (keeps_wire_rows) {
    Statement purge_wire(*db_, "DELETE FROM " + QuoteIdent(WireTableStorageName(instance.name)) +
                                   " WHERE \"__$start_lsn\" < ?");
    purge_wire.BindBlob(1, start.data(), Lsn::kSize).Run();
  }
  return deleted;
}

// ---- logins ----

void SimDatabase::AddLogin(const std::string& name, const std::string& password,
                           bool is_db_owner) {
  CheckIdentifier(name, "login name");
  if (password.empty()) throw ConfigError("login " + name + " needs a password; it is empty");
  if (password.size() > 128) {
    throw ConfigError("the password of login " + name +
                      " is longer than 128 characters, which a TDS login cannot carry");
  }
  WriteTransaction tx(*db_);
  if (auto existing = catalog_.FindLogin(name)) {
    throw ConfigError("login " + existing->name + " already exists in " + path() +
                      ": choose another name");
  }
  catalog_.InsertLogin(name, password, is_db_owner);
  tx.Commit();
}

void SimDatabase::AddTokenLogin(const std::string& name, const std::string& access_token,
                                bool is_db_owner) {
  CheckIdentifier(name, "login name");
  if (access_token.empty()) throw ConfigError("the access token of login " + name + " is empty");
  if (!IsAccessTokenText(access_token)) {
    throw ConfigError("the access token of login " + name +
                      " holds a character other than printable ASCII, which no access "
                      "token has: check the variable it was read from");
  }
  const std::string digest = AccessTokenDigest(access_token);
  WriteTransaction tx(*db_);
  if (auto existing = catalog_.FindLogin(name)) {
    throw ConfigError("login " + existing->name + " already exists in " + path() +
                      ": choose another name");
  }
  if (auto holder = catalog_.AuthenticateToken(digest)) {
    throw ConfigError("that access token already belongs to login " + holder->name +
                      ": give each token login a token of its own");
  }
  catalog_.InsertLogin(name, "", is_db_owner);
  catalog_.InsertLoginToken(name, digest);
  tx.Commit();
}

std::optional<LoginInfo> SimDatabase::AuthenticateToken(const std::string& access_token) {
  return catalog_.AuthenticateToken(AccessTokenDigest(access_token));
}

std::string SimDatabase::Grant(const std::string& login, const std::string& object) {
  WriteTransaction tx(*db_);
  const auto grantee = catalog_.FindLogin(login);
  if (!grantee) {
    throw ConfigError("there is no login named " + login + " in " + path() +
                      ": add it with `mssql-cdc sim login add`");
  }
  TableName name;
  try {
    name = ParseTableName(object);
  } catch (const ConfigError& e) {
    throw ConfigError("cannot grant SELECT on '" + object +
                      "': give cdc.<capture_instance>_CT or schema.table (" + e.what() + ")");
  }
  std::string canonical;
  constexpr std::string_view kSuffix = "_CT";
  if (SameName(name.schema, "cdc") && name.name.size() > kSuffix.size() &&
      SameName(std::string_view(name.name).substr(name.name.size() - kSuffix.size()), kSuffix)) {
    const std::string instance = name.name.substr(0, name.name.size() - kSuffix.size());
    const auto found = catalog_.FindInstance(instance);
    if (!found) {
      std::string known;
      for (const auto& ci : catalog_.ListInstances()) {
        known += (known.empty() ? "" : ", ") + ChangeTableStorageName(ci.name);
      }
      throw ConfigError("cannot grant SELECT on " + object + ": there is no capture instance " +
                        instance + " (change tables: " + (known.empty() ? "none" : known) + ")");
    }
    canonical = ChangeTableStorageName(found->name);
  } else {
    const auto found = catalog_.FindTable(name);
    if (!found) {
      std::string known;
      for (const auto& t : catalog_.ListTables()) known += (known.empty() ? "" : ", ") + t.ToString();
      throw ConfigError("cannot grant SELECT on " + object + ": there is no such table (tables: " +
                        (known.empty() ? "none" : known) + "; change tables are cdc.<capture_instance>_CT)");
    }
    canonical = found->name.ToString();
  }
  catalog_.InsertGrant(grantee->name, canonical);
  tx.Commit();
  return canonical;
}

std::optional<LoginInfo> SimDatabase::Authenticate(const std::string& user,
                                                   const std::string& password) {
  return catalog_.Authenticate(user, password);
}

bool SimDatabase::HasGrant(const std::string& login, const std::string& object) {
  return catalog_.HasGrant(login, object);
}

// ---- reads ----

std::vector<TableName> SimDatabase::Tables() { return catalog_.ListTables(); }

TableInfo SimDatabase::Table(const TableName& table) { return catalog_.LoadTable(table); }

void SimDatabase::LoadRows(const TableName& table, std::int64_t first, std::int64_t count,
                           const std::function<Row(std::int64_t)>& row_of) {
  const TableInfo info = catalog_.LoadTable(table);
  for (const auto& instance : CaptureInstances()) {
    if (instance.table.schema == info.name.schema && instance.table.name == info.name.name) {
      throw ConfigError("cannot load rows into " + info.name.ToString() + ": capture instance " +
                        instance.name + " would have to capture them; load the table first, "
                        "then enable CDC");
    }
  }
  std::string columns, marks;
  for (std::size_t i = 0; i < info.columns.size(); ++i) {
    const ColumnInfo& column = info.columns[i];
    if (IsRowversion(column.type)) {
      throw ConfigError("cannot load rows into " + info.name.ToString() + ": column " +
                        column.name + " is a rowversion, which only inserts set");
    }
    columns += (i ? ", " : "") + QuoteIdent(column.name);
    marks += (i ? ", ?" : "?") + std::to_string(i + 1);
  }
  WriteTransaction write(*db_);
  Statement insert(*db_, "INSERT INTO " +
                             QuoteIdent(SourceTableStorageName(info.name.schema, info.name.name)) +
                             "(" + columns + ") VALUES(" + marks + ")");
  for (std::int64_t n = first; n < first + count; ++n) {
    const Row row = row_of(n);
    if (row.size() > info.columns.size()) {
      for (const auto& [name, value] : row) {
        if (!std::any_of(info.columns.begin(), info.columns.end(),
                         [&](const ColumnInfo& c) { return c.name == name; })) {
          throw ConfigError("load into " + info.name.ToString() + ": there is no column " + name);
        }
      }
    }
    for (std::size_t i = 0; i < info.columns.size(); ++i) {
      const ColumnInfo& column = info.columns[i];
      const auto given = row.find(column.name);
      const Value value = given == row.end() ? Value() : EncodeValue(column.type, given->second, column.name);
      if (value.is_null() && !column.nullable) {
        throw ConfigError("load into " + info.name.ToString() + ": column " + column.name +
                          " does not allow NULLs and has no value");
      }
      insert.Bind(static_cast<int>(i) + 1, value);
    }
    insert.Step();
    insert.Reset();
  }
  write.Commit();
}

std::vector<CaptureInstance> SimDatabase::CaptureInstances() { return catalog_.ListInstances(); }

CaptureInstance SimDatabase::Instance(std::string_view capture_instance) {
  return catalog_.LoadInstance(capture_instance);
}

std::optional<Lsn> SimDatabase::MaxLsn() {
  Statement st(*db_, "SELECT max(start_lsn) FROM cdc_lsn_time_mapping");
  if (!st.Step() || st.IsNull(0)) return std::nullopt;
  return LsnFromBlob(st.Blob(0));
}

Lsn SimDatabase::MinLsn(std::string_view capture_instance) {
  auto instance = catalog_.FindInstance(capture_instance);
  return instance ? instance->start_lsn : Lsn();
}

std::vector<ChangeRow> SimDatabase::ChangeRows(std::string_view capture_instance) {
  ReadTransaction snapshot(*db_);
  const CaptureInstance instance = catalog_.LoadInstance(capture_instance);
  std::string sql = "SELECT \"__$start_lsn\", \"__$seqval\", \"__$operation\", "
                    "\"__$update_mask\", \"__$command_id\"";
  for (const auto& c : instance.columns) sql += ", " + QuoteIdent(c.name);
  sql += " FROM " + QuoteIdent(ChangeTableStorageName(instance.name)) +
         " ORDER BY \"__$start_lsn\", \"__$command_id\", \"__$seqval\", \"__$operation\"";
  Statement st(*db_, sql);
  std::vector<ChangeRow> rows;
  while (st.Step()) {
    ChangeRow row;
    row.start_lsn = LsnFromBlob(st.Blob(0));
    row.seqval = LsnFromBlob(st.Blob(1));
    row.operation = static_cast<int>(st.Int(2));
    row.update_mask = st.Blob(3);
    row.command_id = static_cast<int>(st.Int(4));
    for (std::size_t i = 0; i < instance.columns.size(); ++i) {
      row.values.push_back(st.Get(static_cast<int>(i) + 5));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::int64_t SimDatabase::ChangeRowCount(std::string_view capture_instance) {
  const CaptureInstance instance = catalog_.LoadInstance(capture_instance);
  Statement st(*db_, "SELECT count(*) FROM " + QuoteIdent(ChangeTableStorageName(instance.name)));
  st.Step();
  return st.Int(0);
}

std::map<int, std::int64_t> SimDatabase::OperationCounts(std::string_view capture_instance) {
  const CaptureInstance instance = catalog_.LoadInstance(capture_instance);
  Statement st(*db_, "SELECT \"__$operation\", count(*) FROM " +
                         QuoteIdent(ChangeTableStorageName(instance.name)) +
                         " GROUP BY \"__$operation\"");
  std::map<int, std::int64_t> out;
  while (st.Step()) out[static_cast<int>(st.Int(0))] = st.Int(1);
  return out;
}

std::vector<LsnTimeEntry> SimDatabase::LsnTimeMapping() {
  Statement st(*db_, "SELECT start_lsn, tran_begin_time, tran_end_time, tran_id "
                     "FROM cdc_lsn_time_mapping ORDER BY start_lsn");
  std::vector<LsnTimeEntry> out;
  while (st.Step()) {
    out.push_back(LsnTimeEntry{LsnFromBlob(st.Blob(0)), st.Text(1), st.Text(2), st.Blob(3)});
  }
  return out;
}

std::vector<DdlHistoryEntry> SimDatabase::DdlHistory(std::string_view capture_instance) {
  const CaptureInstance instance = catalog_.LoadInstance(capture_instance);
  Statement st(*db_, "SELECT ddl_command, ddl_lsn, ddl_time FROM cdc_ddl_history "
                     "WHERE object_id = ? ORDER BY ddl_lsn");
  st.BindInt(1, instance.object_id);
  std::vector<DdlHistoryEntry> out;
  while (st.Step()) {
    out.push_back(DdlHistoryEntry{instance.name, st.Text(0), LsnFromBlob(st.Blob(1)), st.Text(2)});
  }
  return out;
}

std::vector<Row> SimDatabase::Rows(const TableName& table) {
  ReadTransaction snapshot(*db_);
  const TableInfo info = catalog_.LoadTable(table);
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < info.columns.size(); ++i) {
    sql += (i ? ", " : "") + QuoteIdent(info.columns[i].name);
  }
  sql += " FROM " + QuoteIdent(SourceTableStorageName(info.name.schema, info.name.name)) +
         " ORDER BY ";
  for (std::size_t k = 0; k < info.key.size(); ++k) {
    sql += (k ? ", " : "") + QuoteIdent(info.key[k]);
  }
  Statement st(*db_, sql);
  std::vector<Row> rows;
  while (st.Step()) {
    Row row;
    for (std::size_t i = 0; i < info.columns.size(); ++i) {
      row[info.columns[i].name] = st.Get(static_cast<int>(i));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::int64_t SimDatabase::RowCount(const TableName& table) {
  const TableInfo info = catalog_.LoadTable(table);
  Statement st(*db_, "SELECT count(*) FROM " +
                         QuoteIdent(SourceTableStorageName(info.name.schema, info.name.name)));
  st.Step();
  return st.Int(0);
}

}  // namespace mssql_cdc::sim
