// A simulated SQL Server database with Change Data Capture, kept in one SQLite file (layout:
// sim/storage.h). It behaves as SQL Server's CDC does (spec part A): every committed
// transaction that touches a tracked table gets one commit LSN larger than any before, and
// each of its row changes a change row per capture instance, ordered by __$seqval and
// __$command_id, updates as a before (3) and after (4) image; cdc.lsn_time_mapping records
// each commit with its local begin and end time; idle entries move the max LSN without
// changes; cleanup by retention raises each instance's min LSN and deletes what lies below.
// At most two capture instances per table; a capture instance keeps the columns it was
// enabled with.
//
// The file is in WAL mode, so readers in other processes see each commit whole while a
// writer runs. A SimDatabase is one connection: use it from one thread at a time.
//
// Time comes from the machine (real clock) or from a manual clock kept in the file, which
// only moves when set or advanced, for deterministic runs.
#pragma once

#include <cstdint>
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/time.h"
#include "core/timezone.h"
#include "sim/catalog.h"
#include "sim/schema.h"
#include "sim/sqlite.h"
#include "sim/value.h"

namespace mssql_cdc::sim {

class Transaction;

enum class ClockMode { kReal, kManual };

inline constexpr double kDefaultIdleEntrySeconds = 305;
// ConfigError unless an idle-entry interval is from a millisecond (lsn_time_mapping's
// resolution) to a day.
void CheckIdleInterval(double seconds);

struct CreateOptions {
  std::string database_name = "sim";
  std::string time_zone = "UTC";        // a Windows time-zone name
  ClockMode clock = ClockMode::kReal;
  UtcMicros manual_start;               // the manual clock's first reading
  bool wire_rows = true;                // keep change rows as sim serve sends them too
  // How long the capture process waits on a quiet database before an idle entry; SQL Server
  // 2022 writes one about every 305 s (measured, not documented by Microsoft).
  double idle_entry_seconds = kDefaultIdleEntrySeconds;
  // Where the log starts (LsnSequence::Initial() when absent): every commit's LSN is larger.
  std::optional<Lsn> first_lsn;
};

// Options of sys.sp_cdc_enable_table.
struct EnableCdcOptions {
  std::string capture_instance;               // empty: <schema>_<table>
  std::vector<std::string> captured_columns;  // empty: every column
  std::string role_name;                      // empty: no gating role
};

// One row of a change table.
struct ChangeRow {
  Lsn start_lsn;
  Seqval seqval;
  int operation = 0;         // 1 delete, 2 insert, 3 update before, 4 update after
  std::string update_mask;   // big-endian bytes, ordinal 1 = lowest bit of the last byte
  int command_id = 0;
  std::vector<Value> values;  // the captured columns in ordinal order, as stored

  // Whether the mask has the bit of `column_ordinal` (sys.fn_cdc_is_bit_set).
  bool IsBitSet(int column_ordinal) const;
};

// One row of cdc.lsn_time_mapping.
struct LsnTimeEntry {
  Lsn start_lsn;
  std::string tran_begin_time;  // server local time "YYYY-MM-DD HH:MM:SS.fff"
  std::string tran_end_time;
  std::string tran_id;          // 10 bytes; all zero for an idle entry
  bool is_idle() const;
};

struct DdlHistoryEntry {
  std::string capture_instance;
  std::string ddl_command;
  Lsn ddl_lsn;
  std::string ddl_time;
};

struct CleanupResult {
  std::optional<Lsn> low_water_mark;  // nullopt when lsn_time_mapping was empty
  std::int64_t change_rows_deleted = 0;
  std::int64_t lsn_time_entries_deleted = 0;
};

class SimDatabase {
 public:
  // Creates a new file. Throws ConfigError when `path` exists (a simulated database or any
  // other file: nothing is overwritten) or a setting is invalid.
  static std::unique_ptr<SimDatabase> Create(const std::string& path,
                                             const CreateOptions& options = {});
  // Opens an existing file. Throws SourceError when it is missing, is not a simulated
  // database, or was written by a newer format version.
  static std::unique_ptr<SimDatabase> Open(const std::string& path);

  ~SimDatabase();

  const std::string& path() const { return db_->path(); }
  std::string database_name();
  const SourceClock& clock() const { return clock_; }
  std::string time_zone() const { return clock_.name(); }

  // ---- the clock ----
  ClockMode clock_mode();
  // The current instant: the machine's, or the manual clock's.
  UtcMicros NowUtc();
  // Switches to the manual clock at `now`.
  void SetManualClock(UtcMicros now);
  // Moves the manual clock forward. Throws ConfigError under the real clock or for a
  // negative step.
  void AdvanceClock(std::int64_t micros);
  void UseRealClock();

  // ---- DDL ----
  // CREATE TABLE with a primary key. Throws ConfigError for bad names, types or keys; nothing
  // is created then.
  void CreateTable(const TableDef& table);
  // sys.sp_cdc_enable_table. Returns the capture instance's name. Its start_lsn is the commit
  // LSN of the enabling transaction, which gets an lsn_time_mapping entry.
  std::string EnableCdc(const TableName& table, const EnableCdcOptions& options = {});
  // sys.sp_cdc_disable_table for one capture instance: drops it and its change table.
  void DisableCdc(std::string_view capture_instance);
  // ALTER TABLE ADD. Existing capture instances do not capture the column; the DDL is
  // recorded in cdc.ddl_history of each. A NOT NULL column needs an empty table.
  void AddColumn(const TableName& table, const ColumnDef& column);
  // ALTER TABLE DROP COLUMN (not of a key column). Capture instances keep the column; their
  // later rows hold NULL for it.
  void DropColumn(const TableName& table, std::string_view column);
  // ALTER TABLE ALTER COLUMN `column.name` to `column.type` and nullability (not of a key
  // column). As SQL Server does, every stored value is converted, and the capture instances
  // that capture the column take the new type in their change tables and
  // sys.sp_cdc_get_captured_columns; the DDL is recorded in cdc.ddl_history of each. Throws
  // ConfigError, changing nothing, when a stored value does not fit the new type, a NOT NULL
  // column holds NULLs, or the change moves the column to another storage class (integers to
  // text, say), which the simulator does not model.
  void AlterColumn(const TableName& table, const ColumnDef& column);

  // ---- DML ----
  // A transaction whose begin time is now. Statements run at Commit (see Transaction).
  std::unique_ptr<Transaction> Begin();

  // Loads rows into a table as a bulk load before CDC was enabled on it does: the source rows
  // only, no change rows, no LSN, in one write transaction. row_of(i) for i in
  // [first, first + count) gives each row as Begin's inserts take them. Throws ConfigError,
  // writing nothing, when the table has a capture instance (load first, then enable CDC), a
  // rowversion column, or a row does not fit its columns. For tests and benchmarks of
  // snapshots of big tables.
  void LoadRows(const TableName& table, std::int64_t first, std::int64_t count,
                const std::function<Row(std::int64_t)>& row_of);

  // ---- the capture process ----
  // An idle entry: a new LSN in lsn_time_mapping with tran_id zero and no change rows.
  Lsn WriteIdleEntry();
  // The interval of the capture process's idle entries (CreateOptions::idle_entry_seconds;
  // the default in files made before it was kept).
  double idle_entry_seconds();
  // The idle entries the capture process writes on a quiet database, up to now: one at each
  // `interval_seconds` (default: idle_entry_seconds()) after the last lsn_time_mapping entry,
  // stamped with that moment, in one transaction. Nothing while the database has no capture
  // instance or no entry yet; at most the last 1,000 of a longer gap (a clock set far ahead).
  // Returns how many it wrote. Throws ConfigError for an interval not above 0.
  std::int64_t WriteDueIdleEntries(std::optional<double> interval_seconds = std::nullopt);
  // The instant of the last lsn_time_mapping entry: its local time, read in the hour repeated
  // after a fall-back as the entries before it in LSN order say (CommitTimeConverter); nullopt
  // for none.
  std::optional<UtcMicros> LastEntryUtc();
  // sys.sp_cdc_cleanup_change_table for every instance with a retention in minutes
  // (0 to 52494800): the low-water mark is the first lsn_time_mapping entry whose
  // tran_end_time is at or after (commit time of the max LSN - retention).
  CleanupResult Cleanup(std::int64_t retention_minutes);
  // sys.sp_cdc_cleanup_change_table(@capture_instance, @low_water_mark): raises the
  // instance's min LSN to the mark, deletes its change rows below it and the lsn_time_mapping
  // entries below every instance's min LSN. NotFoundError for an unknown instance.
  CleanupResult CleanupInstance(std::string_view capture_instance, const Lsn& low_water_mark);

  // ---- reads ----
  std::vector<TableName> Tables();
  TableInfo Table(const TableName& table);
  std::vector<CaptureInstance> CaptureInstances();
  CaptureInstance Instance(std::string_view capture_instance);
  // sys.fn_cdc_get_max_lsn(): nullopt while lsn_time_mapping is empty.
  std::optional<Lsn> MaxLsn();
  // sys.fn_cdc_get_min_lsn(ci): zero when the instance does not exist.
  Lsn MinLsn(std::string_view capture_instance);
  // Every change row of the instance, ordered by (__$start_lsn, __$command_id, __$seqval,
  // __$operation).
  std::vector<ChangeRow> ChangeRows(std::string_view capture_instance);
  std::int64_t ChangeRowCount(std::string_view capture_instance);
  // Change rows per __$operation (1 to 4).
  std::map<int, std::int64_t> OperationCounts(std::string_view capture_instance);
  std::vector<LsnTimeEntry> LsnTimeMapping();
  std::vector<DdlHistoryEntry> DdlHistory(std::string_view capture_instance);
  // Current rows of a source table, by primary key, with every live column.
  std::vector<Row> Rows(const TableName& table);
  std::int64_t RowCount(const TableName& table);

  // ---- logins of the TDS front end (`mssql-cdc sim serve`) ----
  // Adds a login; a db owner reads everything, another login needs grants (Grant) to read
  // change and source tables. Throws ConfigError when the login exists, the name is not a
  // regular identifier, or the password is empty or longer than 128 characters.
  void AddLogin(const std::string& name, const std::string& password, bool is_db_owner);
  // Adds a login that connects with `access_token` instead of a password, as an Entra ID
  // login does; the file keeps only the token's digest. Throws ConfigError as AddLogin does,
  // and when the token is empty, not ASCII, or already another login's.
  void AddTokenLogin(const std::string& name, const std::string& access_token, bool is_db_owner);
  // GRANT SELECT on `object` to `login`: "cdc.<capture_instance>_CT" or "schema.table".
  // Returns the object's name as the catalog spells it. Throws ConfigError for an unknown
  // login or object.
  std::string Grant(const std::string& login, const std::string& object);
  // The login when `password` is its password, else nullopt.
  std::optional<LoginInfo> Authenticate(const std::string& user, const std::string& password);
  // The login `access_token` belongs to, else nullopt (expiry is the caller's to check).
  std::optional<LoginInfo> AuthenticateToken(const std::string& access_token);
  // Whether `login` was granted SELECT on `object` (as Grant returned it).
  bool HasGrant(const std::string& login, const std::string& object);

  // For Transaction and the workload generator.
  SqliteDb& sqlite() { return *db_; }
  Catalog& catalog() { return catalog_; }
  // The server's local time of `utc`, as lsn_time_mapping records it.
  std::string ServerTime(UtcMicros utc) const;

 private:
  SimDatabase(std::unique_ptr<SqliteDb> db, SourceClock clock);
  // Allocates a commit LSN and a tran id for a metadata transaction and records it in
  // lsn_time_mapping. Runs inside the caller's write transaction.
  Lsn CommitMetadataChange();
  // Raises `instance`'s min LSN to `low_water` when that is higher and deletes its change
  // rows below; returns how many.
  std::int64_t RaiseMinLsn(const CaptureInstance& instance, const Lsn& low_water, bool keeps_wire_rows);
  void CreateChangeTable(const CaptureInstance& instance);

  std::unique_ptr<SqliteDb> db_;
  Catalog catalog_;
  SourceClock clock_;
};

}  // namespace mssql_cdc::sim
