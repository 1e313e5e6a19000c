// The Source interface: everything the engine reads from a SQL Server CDC database.
//
// A Source answers the questions the reference library asks through T-SQL (reference-design
// 3.6): capture instances and their columns, min and max LSN, commits of
// cdc.lsn_time_mapping, split points for commit-aligned ranges, change rows of an LSN range
// and current rows of a source table. Backends: `sim` (the simulated database file, read
// directly) and, later, `odbc`. Commit times come back as the source clock read them; the
// engine converts them to UTC with a SourceClock (core/timezone.h), one rule for every
// backend.
//
// A Source object is used by one thread at a time; open one per reading thread.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/type_fwd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/int128.h"
#include "core/lsn.h"
#include "core/sql_type.h"
#include "core/time.h"

namespace mssql_cdc {

class SourceClock;

// One row of sys.sp_cdc_help_change_data_capture.
struct CaptureInstanceInfo {
  std::string name;
  std::string source_schema;
  std::string source_table;
  Lsn start_lsn;                           // low end of the validity interval (min LSN)
  LocalMicros create_date;                 // server clock
  std::vector<std::string> index_columns;  // key columns, in index order
};

// One row of sys.sp_cdc_get_captured_columns.
struct CapturedColumn {
  std::string name;
  int column_ordinal = 0;  // 1-based position among the captured columns
  int column_id = 0;       // sys.columns.column_id in the source table
  SqlType type;
};

// One commit-aligned tile of a range: rows with __$start_lsn <= bound; the next tile starts
// at `next` (= increment(bound)).
struct SplitPoint {
  Lsn bound;
  Lsn next;
  std::int64_t rows = 0;
};

// One row of sys.sp_cdc_get_ddl_history.
struct DdlEvent {
  Lsn ddl_lsn;
  std::string ddl_command;
  LocalMicros ddl_time;
};

// Variable-length bytes after which a record batch of the readers ends (batch_bytes).
inline constexpr std::int64_t kDefaultBatchDataBytes = 16LL << 20;

// What a change read measured of its own connection, filled as it reads.
struct ReadWaits {
  // Milliseconds the read was blocked waiting for the server's bytes on a socket of its own
  // (the engine's TDS reader); nullopt where it had none to measure (the sim backend, reads
  // through an ODBC driver).
  std::optional<double> network_wait_ms;
  // Which reader read the rows: "tds" (the engine's own TDS reader), "tds+tls" (the same over
  // an encrypted connection) or "driver" (the ODBC driver); nullopt for the sim file.
  std::optional<std::string> reader;
};

struct ChangeReadRequest {
  std::string capture_instance;
  Lsn from;  // inclusive
  Lsn to;    // inclusive
  // Captured columns to read, in this order, matched like SQL Server names (exact, else
  // ignoring case); empty reads all of them in ordinal order. A name the instance does not
  // capture throws ConfigError naming it and the columns the instance does capture: a column
  // that exists in another instance of the table is the caller's to fill with NULLs.
  std::vector<std::string> columns;
  bool include_command_id = true;  // false leaves the column out; the order still uses it
  std::int64_t batch_rows = 10'000;  // rows per record batch at most, >= 1
  // A batch also ends once its variable-length data (text, binary) passes this many bytes,
  // so that wide rows make small batches; a single longer value still makes a batch of one.
  std::int64_t batch_bytes = kDefaultBatchDataBytes;
  // Optional: where the reader records what it waited on the network.
  std::shared_ptr<ReadWaits> waits;
};

// Current rows of a source table. Bounds follow snapshotChunks: `lo` inclusive, `hi`
// exclusive, a scalar for a one-column key, a list for a composite one, null for an open end.
struct SnapshotReadRequest {
  std::string capture_instance;  // names the table and its captured columns
  std::vector<std::string> columns;  // empty: every captured column
  std::vector<std::string> key_columns;  // empty: the instance's index columns
  nlohmann::json lo;  // null: from the start
  nlohmann::json hi;  // null: to the end
  Lsn snapshot_lsn;   // stamped as _start_lsn
  UtcMicros snapshot_commit_ts;  // stamped as _commit_ts
  std::int64_t batch_rows = 10'000;
  std::int64_t batch_bytes = kDefaultBatchDataBytes;  // as ChangeReadRequest::batch_bytes
};

// A question about the key of a capture instance's source table, asked to plan the ranges a
// snapshot reads. Keys come back as snapshotChunks bounds: a JSON scalar for a one-column
// key, a list for a composite one; an integer for the integer types, else the text the
// server's CAST turns back into the same value ("0x..." for binary types).
struct KeyQuery {
  std::string capture_instance;
  std::vector<std::string> key_columns;  // empty: the instance's index columns
};

// The rows of one slice of a grid over an integer or date key (Source::CountKeySlices), and the sum of
// their keys: what reconcile compares with the lake's same sum, so that a key replaced by
// another in one slice is seen where a count alone would match.
struct SliceCount {
  std::int64_t slice = 0;
  std::int64_t rows = 0;
  Int128 key_sum = 0;
};

// How long a Source trusts the capture instances it listed.
inline constexpr std::chrono::seconds kInstanceListKept{5};

class Source {
 public:
  virtual ~Source() = default;

  // sys.sp_cdc_help_change_data_capture: all instances, or those of one table.
  virtual std::vector<CaptureInstanceInfo> ListCaptureInstances() = 0;
  // The instances of one source table (names matched ignoring case), as the procedure lists
  // them with @source_schema and @source_name: what every batch planning asks, so that a
  // database of a thousand instances is not listed whole for each. By default the whole list,
  // filtered.
  virtual std::vector<CaptureInstanceInfo> ListTableInstances(const std::string& source_schema,
                                                              const std::string& source_table);
  // The instance named `name`: the exact name first, else the one name equal ignoring case,
  // else, for a default name <schema>_<table> no instance has any more, the newest instance of
  // that table. Throws NotFoundError listing the instances there are; ConfigError when two names differ
  // only in case. The list is kept for a few seconds (kInstanceListKept): a database of a
  // thousand instances answers a batch's questions without listing them all for each, and a
  // name not in the kept list is looked up in a new one before it is refused.
  virtual CaptureInstanceInfo ResolveCaptureInstance(const std::string& name);
  virtual std::vector<CapturedColumn> CapturedColumns(const std::string& capture_instance) = 0;
  virtual std::vector<DdlEvent> DdlHistory(const std::string& capture_instance) = 0;

  // SERVERPROPERTY/CURRENT_TIMEZONE_ID(): the Windows zone name of the server clock.
  virtual std::string ServerTimeZone() = 0;

  // Milliseconds of one round trip on this Source's connection (SELECT 1); nullopt for a
  // backend with no server to reach (sim reads its file directly).
  virtual std::optional<double> RoundTripMs() { return std::nullopt; }

  // sys.fn_cdc_get_min_lsn(ci): zero when the instance does not exist.
  virtual Lsn MinLsn(const std::string& capture_instance) = 0;
  // sys.fn_cdc_get_max_lsn(): nullopt when lsn_time_mapping is empty.
  virtual std::optional<Lsn> MaxLsn() = 0;
  // The n-th commit (lsn_time_mapping entry, idle ones included) after `after`, or the last
  // one when fewer than n follow; nullopt when none follows. n >= 1.
  virtual std::optional<Lsn> NthCommitAfter(const Lsn& after, std::int64_t n) = 0;
  // sys.fn_cdc_map_time_to_lsn('largest less than or equal', time): the last entry of
  // lsn_time_mapping (idle ones included) whose tran_end_time is at or before `time` (server
  // clock); nullopt when none is that old.
  virtual std::optional<Lsn> LastCommitAtOrBefore(LocalMicros time) = 0;
  // tran_end_time of the entry at `lsn` (exact), or of the last entry at or before it.
  virtual std::optional<LocalMicros> CommitTime(const Lsn& lsn) = 0;
  virtual std::optional<LocalMicros> CommitTimeAtOrBefore(const Lsn& lsn) = 0;
  // NTILE(n) over the instance's change rows in [from, to] by __$start_lsn: per tile its
  // largest commit LSN, the next LSN and its row count, ordered by bound. Empty when the range
  // holds no rows.
  virtual std::vector<SplitPoint> SplitPoints(const std::string& capture_instance,
                                              const Lsn& from, const Lsn& to, int n) = 0;

  // Change rows of [from, to] joined to their commit times, in the output schema (six
  // metadata columns, then the captured columns), ordered by (_start_lsn, _command_id,
  // _seqval, _operation). `clock` converts commit times to UTC. Request errors (unknown
  // instance or column, bad batch_rows) throw here; failures while reading come back from
  // ReadNext as a Status carrying the Error (core/arrow_status.h: ThrowIfError).
  // The reader keeps what it needs of the Source alive; it may outlive the Source.
  virtual std::unique_ptr<arrow::RecordBatchReader> ReadChanges(const ChangeReadRequest& request,
                                                                 const SourceClock& clock) = 0;
  // Current rows in the output schema as operation-0 rows stamped with the snapshot LSN, in
  // key order, `lo <= key < hi`. A captured column dropped from the table reads NULL. Errors
  // as for ReadChanges; bounds that do not fit the key throw ConfigError.
  virtual std::unique_ptr<arrow::RecordBatchReader> ReadSnapshot(
      const SnapshotReadRequest& request) = 0;

  // Keyset seeks over the source table's key, read as the snapshot reads (its isolation level
  // and lock timeout). KeyAt: the key `offset` rows into key order from `from` (inclusive;
  // null: the first key), so offset 0 is the first key at or after it; nullopt when fewer
  // rows follow. The server reads `offset` keys of the narrowest index that holds them.
  // LastKey: the largest key; nullopt for an empty table. A key column the table lacks, or a
  // bound that does not fit the key, throws ConfigError.
  virtual std::optional<nlohmann::json> KeyAt(const KeyQuery& query, const nlohmann::json& from,
                                              std::int64_t offset) = 0;
  virtual std::optional<nlohmann::json> LastKey(const KeyQuery& query) = 0;
  // Rows and key sums per slice of a grid over a one-column integer key, or a date key as its
  // day number since 1970-01-01, in one GROUP BY on the server: slice i holds the keys in
  // [start + i * width, start + (i + 1) * width), for i in [0, slices); empty slices are left
  // out, the others come in slice order. The chunk plan of a chunked snapshot packs slices of
  // an integer key into chunks; reconcile's Tier 1 compares them. ConfigError for a key of
  // several columns or of another type, width < 1 or slices < 1, or a grid whose end passes
  // bigint's.
  virtual std::vector<SliceCount> CountKeySlices(const KeyQuery& query, std::int64_t start,
                                                 std::int64_t width, std::int64_t slices) = 0;
  // sys.sp_spaceused's row count of the instance's source table: what the metadata holds,
  // no scan, so it may lag the table.
  virtual std::int64_t RowEstimate(const std::string& capture_instance) = 0;
  // The names of the columns the instance's source table has now, in column order: a
  // captured column may have been dropped since, or renamed. Empty when the table is
  // readable but its columns are not described to this login.
  virtual std::vector<std::string> TableColumns(const std::string& capture_instance) = 0;

 protected:
  // How a user lists the capture instances there are, for the NotFoundError of
  // ResolveCaptureInstance.
  virtual std::string HowToListCaptureInstances() const;

 private:
  std::vector<CaptureInstanceInfo> listed_;
  std::optional<std::chrono::steady_clock::time_point> listed_at_;
};

}  // namespace mssql_cdc
