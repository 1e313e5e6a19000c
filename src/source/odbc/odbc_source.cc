#include "source/odbc/odbc_source.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <map>
#include <mutex>
#include <set>

#include "core/errors.h"
#include "source/key_bounds.h"
#include "source/name_match.h"
#include "source/odbc/bundled_driver.h"
#include "source/odbc/catalog_queries.h"
#include "source/odbc/change_reader.h"
#include "source/column_selection.h"
#include "source/odbc/connection.h"
#include "source/odbc/encryption_probe.h"
#include "source/odbc/failure_errors.h"
#include "source/odbc/failure_kind.h"
#include "source/odbc/odbc_environment.h"
#include "source/odbc/row_batch_reader.h"
#include "source/odbc/snapshot_reader.h"
#include "source/odbc/statement.h"
#include "source/odbc/statements.h"
#include "source/odbc/tds_change_reader.h"
#include "source/odbc/tds_login.h"

namespace mssql_cdc::odbc {
namespace {

// Where the engine's TDS reader gave way to the driver (auto mode), so that later reads go to
// the driver at once: every read after a connection-level cause, else the capture instances
// whose columns it cannot decode. Shared with readers, which may outlive the Source.
class TdsGiveWay {
 public:
  bool Applies(const std::string& capture_instance) {
    std::lock_guard lock(mutex_);
    return every_read_ || instances_.count(capture_instance) != 0;
  }
  void Note(const std::string& capture_instance, const std::string& reason, bool every_read) {
    std::lock_guard lock(mutex_);
    if (every_read_) return;
    if (every_read) {
      every_read_ = true;
      spdlog::warn("odbc: the engine's TDS reader cannot read from this server ({}); change rows "
                   "are read through the ODBC driver", reason);
    } else if (instances_.insert(capture_instance).second) {
      spdlog::warn("odbc: the engine's TDS reader cannot read capture instance '{}' ({}); its "
                   "change rows are read through the ODBC driver", capture_instance, reason);
    }
  }

 private:
  std::mutex mutex_;
  bool every_read_ = false;
  std::set<std::string> instances_;
};

struct SourceSettings {
  std::shared_ptr<ReaderSettings> reader;
  std::shared_ptr<const TdsReaderSettings> tds;  // null: change rows go through the driver
  bool tds_falls_back = true;                     // changeReader=auto
};

class OdbcSource final : public Source {
 public:
  OdbcSource(SourceSettings settings, long long lock_timeout_ms, bool snapshot_isolation)
      : settings_(std::move(settings.reader)),
        tds_(std::move(settings.tds)),
        tds_falls_back_(settings.tds_falls_back),
        lock_timeout_ms_(lock_timeout_ms),
        snapshot_isolation_(snapshot_isolation) {}

  void Connect() {
    Run("connecting to " + settings_->connection->driver.server, std::nullopt,
        [](OdbcConnection&) { return 0; });
  }

  std::vector<CaptureInstanceInfo> ListCaptureInstances() override {
    return Run("listing the capture instances (sys.sp_cdc_help_change_data_capture)",
               std::nullopt, QueryCaptureInstances);
  }

  std::vector<CaptureInstanceInfo> ListTableInstances(const std::string& source_schema,
                                                      const std::string& source_table) override {
    return Run("listing the capture instances of " + source_schema + "." + source_table +
                   " (sys.sp_cdc_help_change_data_capture)",
               std::nullopt, [&](OdbcConnection& connection) {
                 return QueryTableInstances(connection, source_schema, source_table);
               });
  }

  CaptureInstanceInfo ResolveCaptureInstance(const std::string& name) override {
    odbc_sql::CheckCaptureInstanceName(name);
    try {
      return Source::ResolveCaptureInstance(name);
    } catch (const NotFoundError&) {
      // sys.sp_cdc_help_change_data_capture leaves out the instances the login may not read:
      // touching the change table tells a missing grant (229) from a missing instance.
      ThrowIfChangeTableIsDenied(name);
      throw;
    }
  }

  std::vector<CapturedColumn> CapturedColumns(const std::string& capture_instance) override {
    return ColumnsOf(ResolveCaptureInstance(capture_instance));
  }

  std::vector<DdlEvent> DdlHistory(const std::string& capture_instance) override {
    const std::string name = ResolveCaptureInstance(capture_instance).name;
    return Run("reading the DDL history of capture instance '" + name + "'", std::nullopt,
               [&](OdbcConnection& connection) { return QueryDdlHistory(connection, name); });
  }

  std::string ServerTimeZone() override {
    const auto zone = Run("asking the server's time zone", std::nullopt, QueryTimeZone);
    if (!zone || zone->empty()) {
      throw ConfigError(
          "the server does not report its time zone (CURRENT_TIMEZONE_ID() needs SQL Server "
          "2022 or Azure SQL): set the sourceTimeZone option to the Windows name of the "
          "server's time zone, e.g. sourceTimeZone=UTC or sourceTimeZone=Pacific Standard "
          "Time");
    }
    return *zone;
  }

  Lsn MinLsn(const std::string& capture_instance) override {
    odbc_sql::CheckCaptureInstanceName(capture_instance);
    return Run("asking the minimum LSN of capture instance '" + capture_instance + "'",
               std::nullopt,
               [&](OdbcConnection& connection) { return QueryMinLsn(connection, capture_instance); });
  }

  std::optional<double> RoundTripMs() override {
    return Run("timing a round trip (SELECT 1)", std::nullopt, TimeRoundTrip);
  }

  std::optional<Lsn> MaxLsn() override {
    return Run("asking the maximum LSN", std::nullopt, QueryMaxLsn);
  }

  std::optional<Lsn> NthCommitAfter(const Lsn& after, std::int64_t n) override {
    if (n < 1) throw ConfigError("the commit count must be at least 1, got " + std::to_string(n));
    return Run("finding the commit " + std::to_string(n) + " after " + after.ToString(),
               std::nullopt,
               [&](OdbcConnection& connection) { return QueryNthCommitAfter(connection, after, n); });
  }

  std::optional<LocalMicros> CommitTime(const Lsn& lsn) override {
    return Run("asking the commit time of " + lsn.ToString(), std::nullopt,
               [&](OdbcConnection& connection) {
                 return QueryCommitTime(connection, odbc_sql::kCommitTime, lsn);
               });
  }

  std::optional<Lsn> LastCommitAtOrBefore(LocalMicros time) override {
    return Run("mapping the time " + FormatIsoMillis(time.value) + " to an LSN", std::nullopt,
               [&](OdbcConnection& connection) { return QueryTimeToLsn(connection, time); });
  }

  std::optional<LocalMicros> CommitTimeAtOrBefore(const Lsn& lsn) override {
    return Run("asking the commit time at or before " + lsn.ToString(), std::nullopt,
               [&](OdbcConnection& connection) {
                 return QueryCommitTime(connection, odbc_sql::kCommitTimeAtOrBefore, lsn);
               });
  }

  std::vector<SplitPoint> SplitPoints(const std::string& capture_instance, const Lsn& from,
                                      const Lsn& to, int n) override {
    if (n < 1) throw ConfigError("the split count must be at least 1, got " + std::to_string(n));
    const std::string name = ResolveCaptureInstance(capture_instance).name;
    return Run("splitting the change rows of capture instance '" + name + "'", name,
               [&](OdbcConnection& connection) {
                 return QuerySplitPoints(connection, name, from, to, n);
               });
  }

  std::unique_ptr<arrow::RecordBatchReader> ReadChanges(const ChangeReadRequest& request,
                                                         const SourceClock& clock) override {
    const CaptureInstanceInfo instance = ResolveCaptureInstance(request.capture_instance);
    const std::string& name = instance.name;
    ChangeReadPlan plan;
    plan.capture_instance = name;
    plan.columns = SelectColumns(ColumnsOf(instance), request.columns, name);
    plan.from = request.from;
    plan.to = request.to;
    plan.include_command_id = request.include_command_id;
    plan.batch_rows = request.batch_rows;
    plan.batch_bytes = request.batch_bytes;
    plan.waits = request.waits;
    plan.fetch.utf8_char_data = settings_->connection->driver.utf8_char_data;
    plan.fetch.numeric_struct_binary = settings_->connection->driver.freetds;
    if (tds_ == nullptr || give_way_->Applies(name)) {
      if (plan.waits) plan.waits->reader = "driver";
      return MakeChangeReader(settings_, plan, clock);
    }
    TdsFallback fallback;
    if (tds_falls_back_) {
      fallback.make_reader = [settings = settings_, plan, clock] {
        if (plan.waits) plan.waits->reader = "driver";
        return MakeChangeReader(settings, plan, clock);
      };
      fallback.on_fallback = [give_way = give_way_, name](const std::string& reason, bool every_read) {
        give_way->Note(name, reason, every_read);
      };
    }
    return MakeTdsChangeReader(tds_, plan, clock, std::move(fallback));
  }

  std::unique_ptr<arrow::RecordBatchReader> ReadSnapshot(const SnapshotReadRequest& request) override {
    const CaptureInstanceInfo instance = ResolveCaptureInstance(request.capture_instance);
    SnapshotReadPlan plan;
    plan.capture_instance_stamp = request.capture_instance;  // as configured, like the sim backend
    plan.schema = instance.source_schema;
    plan.table = instance.source_table;
    plan.columns = SelectColumns(ColumnsOf(instance), request.columns, instance.name);
    std::vector<std::string> live = TableColumns(instance);
    plan.key = KeyOf(instance, request.key_columns, live);
    if (live.empty()) {
      // Readable but not described: take the captured names as they are.
      for (const auto& column : plan.columns) live.push_back(column.name);
    }
    for (const auto& column : plan.columns) {
      // A captured column dropped from the table reads as a typed NULL.
      const int i = FindName(live, column.name);
      plan.table_columns.push_back(
          odbc_sql::SnapshotColumn{i >= 0 ? live[i] : column.name, column.type, i >= 0});
    }
    auto texts = [&](const nlohmann::json& bound, const char* which) {
      std::vector<std::string> parts;
      for (const auto& part : KeyBoundParts(bound, plan.key.size(), which)) {
        parts.push_back(KeyPartText(part));
      }
      return parts;
    };
    if (!request.lo.is_null()) plan.lo = texts(request.lo, "lo");
    if (!request.hi.is_null()) plan.hi = texts(request.hi, "hi");
    plan.snapshot_isolation = snapshot_isolation_;
    plan.lock_timeout_ms = lock_timeout_ms_;
    plan.snapshot_lsn = request.snapshot_lsn;
    plan.snapshot_commit_ts = request.snapshot_commit_ts;
    plan.batch_rows = request.batch_rows;
    plan.batch_bytes = request.batch_bytes;
    plan.fetch.utf8_char_data = settings_->connection->driver.utf8_char_data;
    plan.fetch.numeric_struct_binary = settings_->connection->driver.freetds;
    return MakeSnapshotReader(settings_, plan);
  }

  std::optional<nlohmann::json> KeyAt(const KeyQuery& query, const nlohmann::json& from,
                                      std::int64_t offset) override {
    if (offset < 0) {
      throw ConfigError("a key seek's offset must be >= 0, got " + std::to_string(offset));
    }
    const CaptureInstanceInfo instance = ResolveCaptureInstance(query.capture_instance);
    const auto key = KeyOf(instance, query.key_columns, TableColumns(instance));
    std::vector<std::string> parts;
    if (!from.is_null()) {
      for (const auto& part : KeyBoundParts(from, key.size(), "from")) {
        parts.push_back(KeyPartText(part));
      }
    }
    const auto statement = odbc_sql::KeyAt(instance.source_schema, instance.source_table, key,
                                           !from.is_null(), snapshot_isolation_, lock_timeout_ms_);
    return RunOnTable(instance, "seeking the key of", [&](OdbcConnection& connection) {
      OdbcStatement seek(connection);
      SQLUSMALLINT index = 1;
      for (const auto& parameter : statement.parameters) seek.BindText(index++, parts[parameter.part]);
      seek.BindInt64(index, offset);
      return KeyRow(seek, statement.sql, key);
    });
  }

  std::optional<nlohmann::json> LastKey(const KeyQuery& query) override {
    const CaptureInstanceInfo instance = ResolveCaptureInstance(query.capture_instance);
    const auto key = KeyOf(instance, query.key_columns, TableColumns(instance));
    const std::string sql = odbc_sql::LastKey(instance.source_schema, instance.source_table, key,
                                              snapshot_isolation_, lock_timeout_ms_);
    return RunOnTable(instance, "reading the last key of", [&](OdbcConnection& connection) {
      OdbcStatement last(connection);
      return KeyRow(last, sql, key);
    });
  }

  std::vector<SliceCount> CountKeySlices(const KeyQuery& query, std::int64_t start,
                                         std::int64_t width, std::int64_t slices) override {
    const CaptureInstanceInfo instance = ResolveCaptureInstance(query.capture_instance);
    const auto key = KeyOf(instance, query.key_columns, TableColumns(instance));
    if (key.size() != 1 || !IsSliceableKeyType(key[0].type)) {
      throw ConfigError("table " + instance.source_schema + "." + instance.source_table +
                        ": a grid of key slices needs a key of one integer or date column");
    }
    const std::int64_t end = SliceGridEnd(start, width, slices);
    const std::string sql = odbc_sql::KeySlices(instance.source_schema, instance.source_table,
                                                key[0], snapshot_isolation_, lock_timeout_ms_);
    return RunOnTable(instance, "counting the key slices of", [&](OdbcConnection& connection) {
      OdbcStatement count(connection);
      count.BindInt64(1, start);
      count.BindInt64(2, width);
      count.BindInt64(3, start);
      count.BindInt64(4, end);
      std::vector<SliceCount> out;
      if (!count.Execute(sql)) return out;
      const auto slice = count.RequireColumn("slice", "the key slice counts");
      const auto rows = count.RequireColumn("rows", "the key slice counts");
      const auto key_sum = count.RequireColumn("key_sum", "the key slice counts");
      while (count.Fetch()) {
        // In column order: ODBC Driver 18 reads unbound columns forward only.
        const std::int64_t at = count.GetInt(slice).value_or(0);
        const std::int64_t in_slice = count.GetInt(rows).value_or(0);
        const auto sum_text = count.GetText(key_sum);
        const auto sum = ParseInt128(sum_text.value_or("0"));
        if (!sum) throw SourceError("the key slice counts: key_sum is not an integer: " + *sum_text);
        out.push_back(SliceCount{at, in_slice, *sum});
      }
      return out;
    });
  }

  std::int64_t RowEstimate(const std::string& capture_instance) override {
    const CaptureInstanceInfo instance = ResolveCaptureInstance(capture_instance);
    const std::string object =
        odbc_sql::QuoteName(instance.source_schema) + "." + odbc_sql::QuoteName(instance.source_table);
    return RunOnTable(instance, "counting the rows of", [&](OdbcConnection& connection) {
      OdbcStatement space(connection);
      space.BindText(1, object);
      if (!space.Execute(odbc_sql::kSpaceUsed) || !space.Fetch()) {
        throw SourceError("sys.sp_spaceused answered nothing for table " + object);
      }
      const auto rows = space.GetText(space.RequireColumn("rows", "sys.sp_spaceused"));
      return ParseRowCount(rows.value_or(""), object);
    });
  }

 private:
  // Runs `attempt` on the Source's connection, retrying transient failures on a new one and
  // turning the last failure into the engine's error. `change_table_of` names the instance
  // whose change table the statement reads.
  template <typename Attempt>
  auto Run(const std::string& action, const std::optional<std::string>& change_table_of,
           Attempt&& attempt) -> decltype(attempt(std::declval<OdbcConnection&>())) {
    FailureContext context;
    context.action = action;
    context.change_table_of = change_table_of;
    return RunIn(std::move(context), std::forward<Attempt>(attempt));
  }

  // As Run, with what a failure message may name given in `context`.
  template <typename Attempt>
  auto RunIn(FailureContext context, Attempt&& attempt)
      -> decltype(attempt(std::declval<OdbcConnection&>())) {
    context.login = settings_->connection->driver.login;
    context.access_token = settings_->connection->driver.access_token.has_value();
    context.database_user = [this] { return DatabaseUser(); };
    for (int retries = 0;;) {
      if (connection_ == nullptr) connection_ = settings_->slot->Take();
      const bool connecting = connection_ == nullptr;
      try {
        if (connecting) connection_ = std::make_unique<OdbcConnection>(settings_->connection);
        auto result = attempt(*connection_);
        // Idle between questions, where this Source's readers can take it.
        settings_->slot->GiveBack(std::move(connection_));
        return result;
      } catch (const OdbcFailure& failure) {
        const bool dead = connection_ != nullptr && connection_->IsDead();
        if (connecting && retries == 0 && Classify(failure, dead) == FailureKind::kTransient) {
          ThrowIfEncryptionIsRefused(failure);
        }
        FailureContext failed = context;
        failed.connection_dead = dead;
        settings_->retry.RetryOrThrow(retries, failure, dead, std::move(failed));
        connection_.reset();
      }
    }
  }

  // A driver that requires encryption fails to connect to a server without it as it fails
  // to reach a server that is down. Asking the server tells them apart, so that the message
  // says what to change rather than retrying a failure no retry mends.
  void ThrowIfEncryptionIsRefused(const OdbcFailure& failure) const {
    const DriverConnection& driver = settings_->connection->driver;
    if (!driver.requires_encryption || driver.port == 0) return;
    const auto answer = ServerEncryption(driver.host, driver.port, std::chrono::seconds(5));
    if (answer != tds::Encryption::kNotSupported) return;
    ThrowEncryptionUnavailable(driver.server, driver.encryption_setting,
                               "the driver said: " + failure.Details());
  }

  std::optional<std::string> DatabaseUser() {
    if (connection_ == nullptr) return std::nullopt;
    try {
      return QueryUserName(*connection_);
    } catch (const std::exception&) {
      return std::nullopt;  // the GRANT then names the login
    }
  }

  void ThrowIfChangeTableIsDenied(const std::string& name) {
    try {
      Run("reading the change table of capture instance '" + name + "'", name,
          [&](OdbcConnection& connection) { return QuerySplitPoints(connection, name, Lsn(), Lsn(), 1); });
    } catch (const PermissionError&) {
      throw;
    } catch (const Error&) {
      // Missing, or unreadable for another reason: the NotFoundError says more.
    }
  }

  // sys.columns shows nothing of a table that is gone or that the login may not read; the
  // table itself tells which: 208 (NotFoundError) or 229 (PermissionError with the GRANT).
  void ThrowIfTableIsUnreadable(const CaptureInstanceInfo& instance,
                                const std::vector<std::string>& key) {
    const std::string object =
        odbc_sql::QuoteName(instance.source_schema) + "." + odbc_sql::QuoteName(instance.source_table);
    std::vector<odbc_sql::SnapshotColumn> columns;
    for (const auto& name : key) columns.push_back(odbc_sql::SnapshotColumn{name, SqlType{}, true});
    const std::string sql = odbc_sql::SnapshotRows(instance.source_schema, instance.source_table,
                                                   columns, key, false, -1);
    FailureContext context;
    context.action = "reading table " + object;
    context.source_table = object;
    try {
      RunIn(std::move(context), [&](OdbcConnection& connection) {
        OdbcStatement statement(connection);
        statement.Execute(sql);  // the first rows or the error; the rest is cancelled
        return 0;
      });
    } catch (const NotFoundError&) {
      throw NotFoundError("the source table " + instance.source_schema + "." +
                          instance.source_table + " of capture instance '" + instance.name +
                          "' no longer exists");
    }
  }

  // The snapshot key: `wanted` (empty: the instance's index columns) matched to the table's
  // `live` columns, typed by the captured columns (a key column no instance captures is
  // typed as the server reports it: not known here, so it cannot bound a range).
  std::vector<odbc_sql::KeyColumn> KeyOf(const CaptureInstanceInfo& instance,
                                         const std::vector<std::string>& wanted,
                                         const std::vector<std::string>& live) {
    const std::vector<std::string>& names = wanted.empty() ? instance.index_columns : wanted;
    if (live.empty() && !names.empty()) ThrowIfTableIsUnreadable(instance, names);
    std::vector<std::string> captured_names;
    const std::vector<CapturedColumn> captured = ColumnsOf(instance);
    for (const auto& c : captured) captured_names.push_back(c.name);
    std::vector<odbc_sql::KeyColumn> key;
    for (const auto& name : names) {
      const int i = FindName(live, name);
      if (i < 0 && !live.empty()) {
        throw ConfigError("key column '" + name + "' is not a column of table " +
                          instance.source_schema + "." + instance.source_table + "; it has: " +
                          JoinNames(live));
      }
      odbc_sql::KeyColumn column{i >= 0 ? live[i] : name, SqlType{}};
      if (const int c = FindName(captured_names, column.name); c >= 0) column.type = captured[c].type;
      key.push_back(std::move(column));
    }
    return key;
  }

  // Runs a key question about the instance's source table; a missing table or grant says so.
  template <typename Attempt>
  auto RunOnTable(const CaptureInstanceInfo& instance, const std::string& action,
                  Attempt&& attempt) -> decltype(attempt(std::declval<OdbcConnection&>())) {
    const std::string object =
        odbc_sql::QuoteName(instance.source_schema) + "." + odbc_sql::QuoteName(instance.source_table);
    FailureContext context;
    context.action = action + " table " + object;
    context.source_table = object;
    return RunIn(std::move(context), std::forward<Attempt>(attempt));
  }

  // The one row of a key statement as a bound (nullopt for none): integer key columns as
  // numbers, the rest as the text the server gave.
  static std::optional<nlohmann::json> KeyRow(OdbcStatement& statement, const std::string& sql,
                                              const std::vector<odbc_sql::KeyColumn>& key) {
    if (!statement.Execute(sql) || !statement.Fetch()) return std::nullopt;
    nlohmann::json parts = nlohmann::json::array();
    for (std::size_t i = 0; i < key.size(); ++i) {
      const auto text = statement.GetText(static_cast<SQLUSMALLINT>(i + 1));
      if (!text) throw SourceError("key column " + key[i].name + " read back NULL");
      if (IsIntegerKeyType(key[i].type)) {
        parts.push_back(ParseRowCount(*text, key[i].name));
      } else {
        parts.push_back(*text);
      }
    }
    if (key.size() == 1) return parts[0];
    return parts;
  }

  // sp_spaceused's text ("12345" padded) or an integer key's text as a number.
  static std::int64_t ParseRowCount(std::string_view text, const std::string& what) {
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      throw SourceError("the server answered '" + std::string(text) + "' for " + what +
                        ", which is not an integer");
    }
    return value;
  }

  // A capture instance's columns never change while it exists: they are asked once per
  // instance (told apart from a later one of the same name by its start LSN).
  std::vector<CapturedColumn> ColumnsOf(const CaptureInstanceInfo& instance) {
    auto cached = columns_.find(instance.name);
    if (cached != columns_.end() && cached->second.first == instance.start_lsn) {
      return cached->second.second;
    }
    const std::string& name = instance.name;
    auto columns =
        Run("reading the captured columns of capture instance '" + name + "'", std::nullopt,
            [&](OdbcConnection& connection) { return QueryCapturedColumns(connection, name); });
    columns_[name] = {instance.start_lsn, columns};
    return columns;
  }

  std::vector<std::string> TableColumns(const std::string& capture_instance) override {
    return TableColumns(ResolveCaptureInstance(capture_instance));
  }

  std::vector<std::string> TableColumns(const CaptureInstanceInfo& instance) {
    const std::string object =
        odbc_sql::QuoteName(instance.source_schema) + "." + odbc_sql::QuoteName(instance.source_table);
    return Run("reading the columns of table " + object, std::nullopt,
               [&](OdbcConnection& connection) { return QueryTableColumns(connection, object); });
  }

  std::shared_ptr<const ReaderSettings> settings_;
  std::shared_ptr<const TdsReaderSettings> tds_;
  bool tds_falls_back_;
  std::shared_ptr<TdsGiveWay> give_way_ = std::make_shared<TdsGiveWay>();
  long long lock_timeout_ms_;
  bool snapshot_isolation_;
  std::unique_ptr<OdbcConnection> connection_;
  std::map<std::string, std::pair<Lsn, std::vector<CapturedColumn>>> columns_;
};

SourceSettings SettingsFor(const SourceOptions& options, const RetryPolicy& retry) {
  auto connection = std::make_shared<ConnectionSettings>();
  std::vector<std::string> drivers = InstalledDrivers();
  if (auto bundled = BundledDriver18()) drivers.push_back(*bundled);
  connection->driver = BuildDriverConnection(options.connection_string, options.user,
                                             options.password, drivers, options.access_token);
  connection->login_timeout_seconds = options.connect_timeout_seconds;
  SourceSettings settings;
  settings.reader = std::make_shared<ReaderSettings>();
  settings.reader->connection = connection;
  settings.reader->retry = retry;
  settings.reader->slot = std::make_shared<ConnectionSlot>();
  if (options.change_reader == ChangeReaderChoice::kDriver) return settings;
  TdsLoginChoice login = TdsLoginFor(options, connection->driver);
  if (!login.login) {
    if (options.change_reader == ChangeReaderChoice::kTds) {
      throw ConfigError("option changeReader is tds, but the engine's TDS reader cannot read "
                        "from this connection: " + login.reason +
                        "; set changeReader=auto (the driver reads where it cannot) or driver");
    }
    spdlog::info("odbc: change rows are read through the ODBC driver: {}", login.reason);
    return settings;
  }
  auto tds = std::make_shared<TdsReaderSettings>();
  tds->login = std::move(*login.login);
  tds->server = connection->driver.server;
  tds->encryption_setting = connection->driver.encryption_setting;
  tds->retry = retry;
  tds->slot = std::make_shared<TdsConnectionSlot>();
  settings.tds = std::move(tds);
  settings.tds_falls_back = options.change_reader == ChangeReaderChoice::kAuto;
  return settings;
}

}  // namespace

void CheckOdbcOptions(const SourceOptions& options) { SettingsFor(options, RetryPolicy{}); }

std::unique_ptr<Source> OpenOdbcSource(const SourceOptions& options, const RetryPolicy& retry) {
  SourceSettings settings = SettingsFor(options, retry);
  const DriverConnection& driver = settings.reader->connection->driver;
  spdlog::debug("odbc: opening a source on {} through driver {}", driver.server,
                driver.driver.empty() ? "of the DSN" : driver.driver);
  auto source = std::make_unique<OdbcSource>(std::move(settings), options.lock_timeout_ms.value_or(-1),
                                             IsolationAsked(options.isolation_level).has_value());
  source->Connect();
  return source;
}

}  // namespace mssql_cdc::odbc
