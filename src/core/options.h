// Source options and to_delta parameters, parsed and validated once.
//
// `Options` is a set of string-valued options whose names are case-insensitive; a set that
// names one option twice (spelled differently only in case) is refused. `SourceOptions` is
// the typed, validated form of the source options of reference-features.md section 2.2 (plus
// this engine's `user`, `password` and `simPath`); `StreamParams` and `Trigger` are the
// parameters of to_delta (sections 2.3 and 2.4). Every refusal is a ConfigError that names
// the option, the value given and what is accepted.
//
// Secrets: the values of `password` and `connectionString` never appear in an error message,
// a log line or a description produced here; they are shown as "***".
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ascii.h"
#include "core/lsn.h"

namespace mssql_cdc {

// Every source option this engine knows, as users write them. Docs headings use these;
// names are compared in ASCII lower case (IsKnownSourceOption, KnownSourceOptionSpelling).
inline constexpr std::array<std::string_view, 25> kSourceOptionNames = {
    "captureInstance", "connectionString", "user",            "password",
    "accessToken",
    "backend",         "sourceTimeZone",   "connectTimeout",  "lockTimeoutMs",
    "startingLsn",     "maxCommitsPerBatch", "numPartitions", "failOnDataLoss",
    "includeCommandId", "columns",         "arrowBatchSize",  "metricsPath",
    "schemaChangePolicy", "isolationLevel", "snapshotChunks", "snapshotKeys",
    "snapshotLsn",     "fakePath",         "simPath",         "changeReader",
};


bool IsKnownSourceOption(std::string_view name);
// The camelCase spelling of a known option named in any case or with underscores left out
// (e.g. "startinglsn"); nullopt for an unknown name.
std::optional<std::string_view> KnownSourceOptionSpelling(std::string_view name);
// Whether an option's value must never be shown: `password`, `connectionString`, and, since
// a misspelt secret is still a secret, any name that mentions a password, pwd, secret or token.
bool IsSecretOptionName(std::string_view name);
// Whether text can be an access token (the accessToken option, the simulator's token logins):
// printable ASCII without spaces, as an Entra ID token (a JSON Web Token) is, and all that
// Driver 18 can pass, since it widens each byte to UTF-16.
bool IsAccessTokenText(std::string_view text);

// String options with case-insensitive names. Keeps each name as given and the given order.
class Options {
 public:
  using Entry = std::pair<std::string, std::string>;

  Options() = default;
  // Throw ConfigError when two names are equal ignoring case (the message names both
  // spellings, never the values).
  explicit Options(const std::map<std::string, std::string>& options);
  explicit Options(std::vector<Entry> options);
  Options(std::initializer_list<Entry> options);

  std::optional<std::string> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // These options with `overrides` applied: an override replaces the option of the same name
  // ignoring case (taking the override's spelling); new names are added at the end.
  Options MergedWith(const Options& overrides) const;

  // "name=value, ..." with secret values shown as ***.
  std::string Redacted() const;

 private:
  const Entry* Find(std::string_view name) const;
  void Add(std::string name, std::string value);

  std::vector<Entry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;  // lower-case name -> entries_ index
};

enum class Backend { kOdbc, kSim };
enum class SchemaChangePolicy { kClassify, kFail };
enum class IsolationLevel { kReadCommitted, kSnapshot };
// Who reads change rows with backend odbc: the engine's own TDS reader where it can (auto),
// always (tds), or the ODBC driver (driver). Decision 0008.
enum class ChangeReaderChoice { kAuto, kTds, kDriver };
std::string_view BackendName(Backend backend);                 // "odbc", "sim"
std::string_view SchemaChangePolicyName(SchemaChangePolicy p);  // "classify", "fail"
std::string_view IsolationLevelName(IsolationLevel level);      // "readCommitted", "snapshot"
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

// How often a stream runs a micro-batch (reference-features.md 2.4).
class Trigger {
 public:
  enum class Kind {
    kDefault,         // back to back, polling an idle source
    kAvailableNow,    // read up to the max LSN seen at start, then stop
    kProcessingTime,  // one batch per interval until stopped
  };

  Trigger() = default;
  static Trigger Default() { return Trigger(); }
  static Trigger AvailableNow() { return Trigger(Kind::kAvailableNow, {}); }
  // Throws ConfigError when `interval` is negative.
  static Trigger ProcessingTime(std::chrono::milliseconds interval);

  // A Spark interval string: one or more "<number> <unit>" parts, units millisecond, second,
  // minute, hour, day, week (singular or plural, any case) or ms, optionally after the word
  // "interval": "1 minute", "10 seconds", "500 ms", "1 hour 30 minutes". Fractions are
  // allowed and rounded to a millisecond.
  static Trigger ParseProcessingTime(std::string_view interval);

  // The keyword form of DataStreamWriter.trigger: {"availableNow": "true"} or
  // {"processingTime": "1 minute"}; no keywords gives Default. Names match ignoring case.
  static Trigger FromKeywords(const Options& keywords);

  // One string, for the command line and config files: "availableNow", "default", or a
  // processing-time interval, bare or after "processingTime=" ("processingTime=1 minute").
  static Trigger Parse(std::string_view text);

  Kind kind() const { return kind_; }
  std::chrono::milliseconds interval() const { return interval_; }  // kProcessingTime only
  std::string ToString() const;  // "default", "availableNow", "processingTime=60000ms"
  friend bool operator==(const Trigger&, const Trigger&) = default;

 private:
  Trigger(Kind kind, std::chrono::milliseconds interval) : kind_(kind), interval_(interval) {}

  Kind kind_ = Kind::kDefault;
  std::chrono::milliseconds interval_{0};
};

// The parameters of to_delta, as its keywords are spelt.
inline constexpr std::array<std::string_view, 11> kStreamParamNames = {
    "target",    "app_id",       "checkpoint",   "facts_table",
    "trigger",   "query_name",   "bootstrap",    "on_data_loss",
    "resnapshot_interval_days", "snapshot_on_switch", "snapshot",
};
// Whether `name` (any case) is one of kStreamParamNames.
bool IsStreamParamName(std::string_view name);

enum class OnDataLoss { kFail, kResnapshot };
enum class SnapshotMode { kFull, kChunked };
std::string_view OnDataLossName(OnDataLoss value);    // "fail", "resnapshot"
std::string_view SnapshotModeName(SnapshotMode mode);  // "full", "chunked"
// Exact words, as the reference's literals: "fail" | "resnapshot", "full" | "chunked".
OnDataLoss ParseOnDataLoss(std::string_view text);
SnapshotMode ParseSnapshotMode(std::string_view text);

// The parameters of to_delta (reference-features.md 2.3).
struct StreamParams {
  std::string target;      // bronze table: a name, or a path when it has '/' or ':'
  std::string app_id;      // sink identity, stable for the checkpoint's life
  std::string checkpoint;  // checkpoint location
  std::optional<std::string> facts_table;
  Trigger trigger;
  std::optional<std::string> query_name;  // empty: the sink id
  bool bootstrap = false;
  OnDataLoss on_data_loss = OnDataLoss::kFail;
  double resnapshot_interval_days = 7.0;
  bool snapshot_on_switch = false;
  SnapshotMode snapshot = SnapshotMode::kFull;

  // From string values named like to_delta's keywords (any case): target, app_id,
  // checkpoint, facts_table, trigger (as Trigger::Parse), query_name, bootstrap,
  // on_data_loss, resnapshot_interval_days, snapshot_on_switch, snapshot. An unknown name
  // is a ConfigError. Calls Validate().
  static StreamParams Parse(const Options& params);

  // The rules that need no source options, in the reference's order: required values,
  // resnapshot_interval_days >= 0, chunked needs facts_table, snapshot_on_switch excludes
  // chunked, resnapshot needs a local checkpoint and a facts table.
  void Validate() const;
};

// Validates a stream's parameters together with its source options: StreamParams::Validate,
// then snapshot_on_switch with a URI checkpoint needs metricsPath, resnapshot needs
// failOnDataLoss true, and bootstrap excludes startingLsn.
void ValidateStreamConfig(const SourceOptions& source, const StreamParams& params);
// ValidateStreamConfig and what Spark mode asks beyond it: a re-snapshotting stream's
// checkpoint is read by Spark and by the engine, so it must be a path both resolve alike (a
// local or Volume path; a native stream's may be any URI its store opens).
void ValidateSparkStreamConfig(const SourceOptions& source, const StreamParams& params);

}  // namespace mssql_cdc
