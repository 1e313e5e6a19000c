// The source options, typed and validated once (docs/reference/options.md): SourceOptions
// from an Options set, plus this engine's `user`, `password` and `simPath`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lsn.h"
#include "core/options.h"

namespace mssql_cdc {

enum class Backend { kOdbc, kSim };

// Backend fake (mssql_cdc.fake) is backend sim reading the simulated database a
// FakeCdcDatabase keeps in the directory fakePath names, under this file name.
inline constexpr std::string_view kFakeDatabaseFileName = "database.sim";
std::string FakeDatabaseFile(const std::string& fake_path);
enum class SchemaChangePolicy { kClassify, kFail };
enum class IsolationLevel { kReadCommitted, kSnapshot };
// Who reads change rows with backend odbc: the engine's own TDS reader where it can (auto),
// always (tds), or the ODBC driver (driver). Decision 0008.
enum class ChangeReaderChoice { kAuto, kTds, kDriver };
std::string_view BackendName(Backend backend);                 // "odbc", "sim"
std::string_view SchemaChangePolicyName(SchemaChangePolicy p);  // "classify", "fail"
std::string_view IsolationLevelName(IsolationLevel level);      // "readCommitted", "snapshot"
// The isolation a read at `level` asks SQL Server for (SET TRANSACTION ISOLATION LEVEL), or
// none: read committed is every connection's default, so it is not asked for.
std::optional<std::string_view> IsolationAsked(IsolationLevel level);
std::string_view ChangeReaderName(ChangeReaderChoice choice);   // "auto", "tds", "driver"

// Where a new checkpoint starts: the table's earliest change, the newest at query start, or
// just after a given LSN (that LSN counts as already processed).
struct StartingLsn {
  enum class Kind { kEarliest, kLatest, kLsn };
  Kind kind = Kind::kEarliest;
  Lsn lsn;  // meaningful for kLsn only

  std::string ToString() const;  // "earliest", "latest" or the LSN's text
  friend bool operator==(const StartingLsn&, const StartingLsn&) = default;
};

// The source options, typed. Fields left at their defaults were not given (or given as the
// default); optional fields are empty when not given.
struct SourceOptions {
  std::string capture_instance;
  std::string connection_string;  // secret; empty with backend sim
  std::optional<std::string> user;
  std::optional<std::string> password;  // secret
  // An Entra ID access token, given to ODBC Driver 18 instead of a login and password; secret.
  std::optional<std::string> access_token;
  Backend backend = Backend::kOdbc;
  std::string source_time_zone = "auto";  // a Windows zone name or "auto"; checked by the clock
  std::int64_t connect_timeout_seconds = 30;
  std::optional<std::int64_t> lock_timeout_ms;  // empty: wait for locks forever
  std::optional<StartingLsn> starting_lsn;      // empty: not given, which means earliest
  std::optional<std::int64_t> max_commits_per_batch;  // empty: no limit
  std::optional<std::int64_t> num_partitions;         // empty: auto
  std::int64_t arrow_batch_size = 10000;
  bool fail_on_data_loss = true;
  bool include_command_id = true;
  std::optional<std::string> columns;  // Spark DDL, parsed where the schema is known
  std::optional<std::string> metrics_path;
  SchemaChangePolicy schema_change_policy = SchemaChangePolicy::kClassify;
  IsolationLevel isolation_level = IsolationLevel::kReadCommitted;
  ChangeReaderChoice change_reader = ChangeReaderChoice::kAuto;
  std::optional<std::string> snapshot_chunks;  // JSON text, checked to be [[chunk, lo, hi], ...]
  std::optional<std::vector<std::string>> snapshot_keys;
  std::optional<Lsn> snapshot_lsn;
  std::optional<std::string> sim_path;  // the simulated database file, backend sim
  // Names given that no option has, as spelt; each is logged once per process as a WARNING.
  std::vector<std::string> unknown;

  // Validates every option and throws ConfigError at the first bad one. kNotNeeded: the
  // options of a connection that lists the capture instances rather than reading one.
  enum class CaptureInstanceRule { kRequired, kNotNeeded };
  static SourceOptions Parse(const Options& options, CaptureInstanceRule rule = CaptureInstanceRule::kRequired);

  // The starting position to use: the given one, or earliest.
  StartingLsn starting_position() const {
    return starting_lsn.value_or(StartingLsn{});
  }

  // Every option with its value, secrets as ***, for logs and debugging.
  std::string Redacted() const;
};

}  // namespace mssql_cdc
