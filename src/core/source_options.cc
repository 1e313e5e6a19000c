#include "core/source_options.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/option_words.h"
#include "core/user_text.h"
#include "core/utf8.h"

namespace mssql_cdc {
namespace {

// The camelCase spelling of a known option, for messages.
std::string_view Spelling(std::string_view lower) {
  return KnownSourceOptionSpelling(lower).value_or(lower);
}

// Names each unknown option has been warned about in this process (lower case), so a
// thousand streams sharing one options map log the warning once, not a thousand times.
std::mutex warned_mutex;
std::set<std::string, std::less<>>& WarnedNames() {
  static std::set<std::string, std::less<>> names;
  return names;
}

void WarnUnknownOnce(const std::string& name) {
  {
    std::lock_guard lock(warned_mutex);
    if (!WarnedNames().insert(AsciiLower(name)).second) return;
  }
  spdlog::warn("unknown source option '{}' is ignored; known options: {}", name,
               JoinNames(kSourceOptionNames));
}

// Reads the source options one by one; each accessor throws a ConfigError naming the option.
class Reader {
 public:
  explicit Reader(const Options& options) : options_(options) {}

  std::optional<std::string> Raw(std::string_view lower) const { return options_.Get(lower); }

  // The value, or nullopt when absent. Refuses values that are empty or only spaces: an
  // empty value is almost always a template or variable that did not fill in.
  std::optional<std::string> Text(std::string_view lower, std::string_view how) const {
    auto value = options_.Get(lower);
    if (value && TrimAsciiSpace(*value).empty()) {
      throw ConfigError(fmt::format("option {} is empty: give {}, or omit the option",
                                    Spelling(lower), how));
    }
    return value;
  }

  std::optional<bool> Bool(std::string_view lower) const {
    auto value = options_.Get(lower);
    if (!value) return std::nullopt;
    if (auto b = ParseBoolWord(*value)) return b;
    throw ConfigError(fmt::format(
        "option {} must be a boolean, got {}: give true/1/yes/y or false/0/no/n (any case)",
        Spelling(lower), QuoteUserText(*value)));
  }

  // A whole number >= `minimum`; `accepted` says what is accepted, for the message.
  std::optional<std::int64_t> Int(std::string_view lower, std::int64_t minimum,
                                  std::string_view accepted) const {
    auto value = options_.Get(lower);
    if (!value) return std::nullopt;
    auto number = ParseInt(*value);
    if (!number || *number < minimum) {
      throw ConfigError(fmt::format("option {} must be {}, got {}", Spelling(lower), accepted,
                                    QuoteUserText(*value)));
    }
    return number;
  }

  static std::optional<std::int64_t> ParseInt(std::string_view text) {
    text = TrimAsciiSpace(text);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    if (text.empty()) return std::nullopt;
    std::int64_t number = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return number;
  }

 private:
  const Options& options_;
};

// Decodes UTF-8 into code points; nullopt when the bytes are not valid UTF-8.
std::optional<std::vector<char32_t>> DecodeUtf8(std::string_view text) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < text.size();) {
    const long cp = DecodeUtf8At(text, i);
    if (cp < 0) return std::nullopt;
    out.push_back(static_cast<char32_t>(cp));
  }
  return out;
}

std::string ParseCaptureInstance(const std::optional<std::string>& value) {
  if (!value || value->empty()) {
    throw ConfigError(
        "option captureInstance is required: give the CDC capture instance to read, e.g. "
        "dbo_orders (SQL Server names it <schema>_<table> by default)");
  }
  constexpr std::size_t kMaxChars = 100;
  auto chars = DecodeUtf8(*value);
  if (!chars) {
    throw ConfigError(fmt::format("option captureInstance {} is not valid UTF-8", QuoteUserText(*value)));
  }
  if (chars->size() > kMaxChars) {
    throw ConfigError(fmt::format(
        "option captureInstance {} has {} characters: a capture instance name has at most {}",
        QuoteUserText(*value), chars->size(), kMaxChars));
  }
  for (char32_t c : *chars) {
    if (c == U']' || c < 0x20 || (c >= 0x7F && c <= 0x9F)) {
      throw ConfigError(fmt::format(
          "option captureInstance {} contains ']' or a control character: a capture instance "
          "name may hold any other character",
          QuoteUserText(*value)));
    }
  }
  return *value;
}

}  // namespace

std::string FakeDatabaseFile(const std::string& fake_path) {
  return fake_path + (fake_path.ends_with('/') ? "" : "/") + std::string(kFakeDatabaseFileName);
}

namespace {

Backend ParseBackend(const std::optional<std::string>& value) {
  if (!value) return Backend::kOdbc;
  std::string word = AsciiLower(TrimAsciiSpace(*value));
  if (word == "odbc" || word == "mssql-python" || word == "arrow-odbc") return Backend::kOdbc;
  if (word == "sim" || word == "fake") return Backend::kSim;  // fake: a sim file in fakePath
  throw ConfigError(fmt::format(
      "unknown backend {}: give odbc (the default; mssql-python and arrow-odbc are read as "
      "odbc), sim, or fake",
      QuoteUserText(*value)));
}

StartingLsn ParseStartingLsn(const std::string& value) {
  std::string word = AsciiLower(TrimAsciiSpace(value));
  if (word == "earliest") return {StartingLsn::Kind::kEarliest, {}};
  if (word == "latest") return {StartingLsn::Kind::kLatest, {}};
  try {
    return {StartingLsn::Kind::kLsn, Lsn::ParseLenient(TrimAsciiSpace(value))};
  } catch (const ConfigError&) {
    throw ConfigError(fmt::format(
        "option startingLsn {} is not valid: give earliest, latest, or an LSN of 1 to 20 hex "
        "digits with or without 0x, e.g. 0x0000002A000001000001",
        QuoteUserText(value)));
  }
}

Lsn ParseSnapshotLsn(const std::string& value) {
  try {
    return Lsn::ParseLenient(TrimAsciiSpace(value));
  } catch (const ConfigError&) {
    throw ConfigError(fmt::format(
        "option snapshotLsn {} is not an LSN: give 1 to 20 hex digits with or without 0x, "
        "e.g. 0x0000002A000001000001",
        QuoteUserText(value)));
  }
}

nlohmann::json ParseJson(std::string_view name, const std::string& text, std::string_view shape) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Only the position: the parser's own message quotes the text, which may hold key values.
    throw ConfigError(fmt::format("option {} is not valid JSON (error at byte {}): give {}", name,
                                  e.byte, shape));
  }
}

std::vector<std::string> ParseSnapshotKeys(const std::string& text) {
  constexpr std::string_view kShape = R"(a JSON list of column names, e.g. ["order_id"])";
  nlohmann::json json = ParseJson("snapshotKeys", text, kShape);
  if (!json.is_array() || json.empty()) {
    throw ConfigError(fmt::format("option snapshotKeys {} is not a non-empty list: give {}",
                                  QuoteUserText(text), kShape));
  }
  std::vector<std::string> keys;
  for (const auto& item : json) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      throw ConfigError(fmt::format(
          "option snapshotKeys {} holds an item that is not a non-empty string: give {}",
          QuoteUserText(text), kShape));
    }
    std::string key = item.get<std::string>();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
      throw ConfigError(fmt::format("option snapshotKeys names column {} twice", QuoteUserText(key)));
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

// Checks [[chunk, lo, hi], ...] and returns how many key columns the bounds have (0 when
// every bound is open). Messages name entries by position and never show bounds: they are
// source key values, which may be personal identifiers.
std::size_t CheckSnapshotChunks(const std::string& text) {
  constexpr std::string_view kShape =
      "a JSON list of [chunk, lo, hi] entries, e.g. [[0, null, 1000], [1, 1000, null]]: chunk "
      "a whole number, lo inclusive, hi exclusive, each a value, a list of values for a "
      "composite key, or null for an open end";
  nlohmann::json json = ParseJson("snapshotChunks", text, kShape);
  if (!json.is_array() || json.empty()) {
    throw ConfigError(fmt::format(
        "option snapshotChunks is not a non-empty list: give {}, or omit the option to read "
        "the whole table",
        kShape));
  }
  std::set<std::int64_t> chunks;
  std::optional<std::size_t> arity;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const auto& entry = json[i];
    auto bad = [&](std::string_view what) {
      return ConfigError(
          fmt::format("option snapshotChunks entry {} {}: give {}", i, what, kShape));
    };
    if (!entry.is_array() || entry.size() != 3) throw bad("is not [chunk, lo, hi]");
    const auto& chunk = entry[0];
    // An unsigned JSON number beyond int64 would wrap in get<int64_t>, so test it first.
    bool in_range = chunk.is_number_unsigned()
                        ? chunk.get<std::uint64_t>() <= INT32_MAX
                        : chunk.is_number_integer() && chunk.get<std::int64_t>() >= INT32_MIN &&
                              chunk.get<std::int64_t>() <= INT32_MAX;
    if (!in_range) {
      throw bad("has a chunk number that is not a whole number in the INT range");
    }
    if (!chunks.insert(chunk.get<std::int64_t>()).second) {
      throw bad(fmt::format("repeats chunk number {}", chunk.get<std::int64_t>()));
    }
    for (std::size_t b = 1; b <= 2; ++b) {
      const auto& bound = entry[b];
      if (bound.is_null()) continue;
      std::size_t n = 1;
      if (bound.is_array()) {
        if (bound.empty()) throw bad("has an empty list as a bound");
        for (const auto& part : bound) {
          if (part.is_array() || part.is_object()) {
            throw bad("has a nested list or object in a bound");
          }
        }
        n = bound.size();
      } else if (bound.is_object()) {
        throw bad("has an object as a bound");
      }
      if (arity && *arity != n) throw bad("has bounds with a different number of key columns");
      arity = n;
    }
  }
  return arity.value_or(0);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SourceOptions

std::string_view BackendName(Backend backend) {
  return backend == Backend::kSim ? "sim" : "odbc";
}

std::string_view SchemaChangePolicyName(SchemaChangePolicy p) {
  return p == SchemaChangePolicy::kFail ? "fail" : "classify";
}

std::optional<std::string_view> IsolationAsked(IsolationLevel level) {
  if (level == IsolationLevel::kSnapshot) return "snapshot";
  return std::nullopt;
}

std::string_view IsolationLevelName(IsolationLevel level) {
  return level == IsolationLevel::kSnapshot ? "snapshot" : "readCommitted";
}

std::string_view ChangeReaderName(ChangeReaderChoice choice) {
  switch (choice) {
    case ChangeReaderChoice::kTds: return "tds";
    case ChangeReaderChoice::kDriver: return "driver";
    case ChangeReaderChoice::kAuto: break;
  }
  return "auto";
}

std::string StartingLsn::ToString() const {
  switch (kind) {
    case Kind::kEarliest: return "earliest";
    case Kind::kLatest: return "latest";
    case Kind::kLsn: return lsn.ToString();
  }
  return "earliest";
}

SourceOptions SourceOptions::Parse(const Options& options, CaptureInstanceRule rule) {
  Reader r(options);
  SourceOptions o;

  for (const auto& [name, value] : options.entries()) {
    // The reference library's option that runs a Python function for each token: known, so
    // that it is refused rather than ignored (a stream that ignored it would log in without
    // the token).
    if (AsciiLower(name) == "tokenprovider") {
      throw ConfigError(fmt::format(
          "option {} (mssql-cdc-pyspark's 'package.module:function' that returns an access token) "
          "is not supported: get the token in your job and pass it as accessToken",
          name));
    }
    if (!IsKnownSourceOption(name)) {
      o.unknown.push_back(name);
      WarnUnknownOnce(name);
    }
  }

  if (rule == CaptureInstanceRule::kRequired || r.Raw("captureinstance")) {
    o.capture_instance = ParseCaptureInstance(r.Raw("captureinstance"));
  }
  o.backend = ParseBackend(r.Raw("backend"));
  const bool fake = r.Raw("backend") && AsciiLower(TrimAsciiSpace(*r.Raw("backend"))) == "fake";

  if (auto cs = r.Raw("connectionstring")) {
    // The value is a secret: messages about it name the option only.
    if (cs->find('\0') != std::string::npos) {
      throw ConfigError(
          "option connectionString contains a NUL character: give ODBC keyword=value pairs "
          "separated by ';'");
    }
    o.connection_string = *cs;
  }
  if (o.backend == Backend::kOdbc && TrimAsciiSpace(o.connection_string).empty()) {
    throw ConfigError(
        "option connectionString is required with backend odbc: give ODBC keyword=value "
        "pairs, e.g. Server=host,1433;Database=db;Encrypt=yes (with user and password "
        "options), or use backend=sim with simPath");
  }
  o.user = r.Text("user", "the SQL Server login name");
  if (auto password = r.Raw("password")) {
    // Only an exactly empty password is refused: spaces may be part of a real one.
    if (password->empty()) {
      throw ConfigError(
          "option password is empty: give the login's password, or omit the option");
    }
    if (password->find('\0') != std::string::npos) {
      throw ConfigError("option password contains a NUL character, which no login can have");
    }
    o.password = *password;
  }
  if (auto token = r.Raw("accesstoken")) {
    if (o.backend != Backend::kOdbc) {
      throw ConfigError(fmt::format(
          "option accessToken is only read by backend odbc, but backend is {}: remove it",
          BackendName(o.backend)));
    }
    if (token->empty()) {
      throw ConfigError("option accessToken is empty: give the Entra ID access token, or omit "
                        "the option");
    }
    if (!IsAccessTokenText(*token)) {
      throw ConfigError(
          "option accessToken holds a space, a control character or a non-ASCII character, "
          "which no Entra ID access token has: give the token alone (not 'Bearer <token>', "
          "no line break at its end)");
    }
    if (o.user || o.password) {
      throw ConfigError(
          "option accessToken is given together with user or password: an access token "
          "logs in on its own; keep either the token or the login and password");
    }
    o.access_token = *token;
  }

  o.sim_path = r.Text("simpath", "the path of a simulated database file");
  const auto fake_path = r.Text("fakepath", "the directory of a mssql_cdc.fake.FakeCdcDatabase");
  if (fake) {
    if (!fake_path) {
      throw ConfigError(
          "option fakePath is required with backend fake: give the directory a "
          "mssql_cdc.fake.FakeCdcDatabase was made in");
    }
    if (o.sim_path) {
      throw ConfigError("backend fake reads fakePath, not simPath: remove simPath, or use backend=sim");
    }
    o.sim_path = FakeDatabaseFile(*fake_path);
  } else if (fake_path) {
    throw ConfigError("option fakePath is only read by backend fake: add backend=fake, or remove fakePath");
  }
  if (o.backend == Backend::kSim && !o.sim_path) {
    throw ConfigError(
        "option simPath is required with backend sim: give the path of the simulated "
        "database file (mssql-cdc sim creates one)");
  }
  if (o.backend != Backend::kSim && o.sim_path) {
    throw ConfigError(fmt::format(
        "option simPath is only read by backend sim, but backend is {}: add backend=sim, or "
        "remove simPath",
        BackendName(o.backend)));
  }

  if (auto tz = r.Text("sourcetimezone",
                       "auto or a Windows time-zone name, e.g. UTC or E. South America "
                       "Standard Time")) {
    o.source_time_zone = std::string(TrimAsciiSpace(*tz));
  }
  if (auto v = r.Int("connecttimeout", 0, "a whole number of seconds, 0 or more")) {
    o.connect_timeout_seconds = *v;
  }
  o.lock_timeout_ms = r.Int("locktimeoutms", 0,
                            "a whole number of milliseconds, 0 or more (0 fails at the first "
                            "lock), or omitted to wait for locks");
  if (auto v = r.Raw("startinglsn")) o.starting_lsn = ParseStartingLsn(*v);
  o.max_commits_per_batch = r.Int("maxcommitsperbatch", 1,
                                  "a whole number of commits, 1 or more, or omitted for no "
                                  "limit");
  if (auto v = r.Raw("numpartitions"); v && AsciiLower(TrimAsciiSpace(*v)) != "auto") {
    o.num_partitions = r.Int("numpartitions", 1, "auto or a whole number, 1 or more");
  }
  if (auto v = r.Int("arrowbatchsize", 1, "a whole number of rows, 1 or more")) {
    o.arrow_batch_size = *v;
  }
  if (auto v = r.Bool("failondataloss")) o.fail_on_data_loss = *v;
  if (auto v = r.Bool("includecommandid")) o.include_command_id = *v;
  o.columns = r.Text("columns",
                     "a Spark DDL column list, e.g. order_id INT, amount DECIMAL(18,2)");
  o.metrics_path = r.Text("metricspath", "a directory path or URI");

  if (auto v = r.Raw("schemachangepolicy")) {
    std::string word = AsciiLower(TrimAsciiSpace(*v));
    if (word == "classify") {
      o.schema_change_policy = SchemaChangePolicy::kClassify;
    } else if (word == "fail") {
      o.schema_change_policy = SchemaChangePolicy::kFail;
    } else {
      throw ConfigError(fmt::format(
          "option schemaChangePolicy must be classify or fail (any case), got {}", QuoteUserText(*v)));
    }
  }
  if (auto v = r.Raw("isolationlevel")) {
    std::string word = AsciiLower(TrimAsciiSpace(*v));
    if (word == "readcommitted") {
      o.isolation_level = IsolationLevel::kReadCommitted;
    } else if (word == "snapshot") {
      o.isolation_level = IsolationLevel::kSnapshot;
    } else {
      throw ConfigError(fmt::format(
          "option isolationLevel must be readCommitted or snapshot (any case), got {}",
          QuoteUserText(*v)));
    }
  }

  if (auto v = r.Raw("changereader")) {
    const std::string word = AsciiLower(TrimAsciiSpace(*v));
    if (word == "auto") {
      o.change_reader = ChangeReaderChoice::kAuto;
    } else if (word == "tds") {
      o.change_reader = ChangeReaderChoice::kTds;
    } else if (word == "driver") {
      o.change_reader = ChangeReaderChoice::kDriver;
    } else {
      throw ConfigError(fmt::format(
          "option changeReader must be auto, tds or driver (any case), got {}", QuoteUserText(*v)));
    }
    if (o.backend != Backend::kOdbc && o.change_reader != ChangeReaderChoice::kAuto) {
      throw ConfigError(fmt::format(
          "option changeReader is only read by backend odbc, but backend is {}: remove it",
          BackendName(o.backend)));
    }
  }

  if (auto v = r.Raw("snapshotkeys")) o.snapshot_keys = ParseSnapshotKeys(*v);
  if (auto v = r.Raw("snapshotchunks")) {
    std::size_t arity = CheckSnapshotChunks(*v);
    if (o.snapshot_keys && arity != 0 && arity != o.snapshot_keys->size()) {
      throw ConfigError(fmt::format(
          "option snapshotChunks has bounds of {} key column(s) but snapshotKeys names {}: "
          "give one bound value per key column",
          arity, o.snapshot_keys->size()));
    }
    o.snapshot_chunks = *v;
  }
  if (auto v = r.Raw("snapshotlsn")) o.snapshot_lsn = ParseSnapshotLsn(*v);
  return o;
}

std::string SourceOptions::Redacted() const {
  auto opt = [](const auto& value) -> std::string {
    if (!value) return "unset";
    return fmt::format("{}", *value);
  };
  std::string keys = "unset";
  if (snapshot_keys) keys = nlohmann::json(*snapshot_keys).dump();
  std::string out = fmt::format(
      "captureInstance={}, connectionString={}, user={}, password={}, accessToken={}, "
      "backend={}, "
      "sourceTimeZone={}, connectTimeout={}, lockTimeoutMs={}, startingLsn={}, "
      "maxCommitsPerBatch={}, numPartitions={}, arrowBatchSize={}, failOnDataLoss={}, "
      "includeCommandId={}, columns={}, metricsPath={}, schemaChangePolicy={}, "
      "isolationLevel={}, changeReader={}, snapshotChunks={}, snapshotKeys={}, snapshotLsn={}, "
      "simPath={}",
      capture_instance, connection_string.empty() ? "unset" : kSecretShown, opt(user),
      password ? kSecretShown : "unset", access_token ? kSecretShown : "unset",
      BackendName(backend), source_time_zone,
      connect_timeout_seconds, opt(lock_timeout_ms),
      starting_lsn ? starting_lsn->ToString() : "earliest (default)", opt(max_commits_per_batch),
      num_partitions ? std::to_string(*num_partitions) : "auto", arrow_batch_size,
      fail_on_data_loss, include_command_id, opt(columns), opt(metrics_path),
      SchemaChangePolicyName(schema_change_policy), IsolationLevelName(isolation_level),
      ChangeReaderName(change_reader), snapshot_chunks ? "given" : "unset", keys,
      snapshot_lsn ? snapshot_lsn->ToString() : "unset", opt(sim_path));
  if (!unknown.empty()) {
    std::string names;
    for (const auto& name : unknown) names += (names.empty() ? "" : ", ") + name;
    out += ", unknown=[" + names + "]";
  }
  return out;
}

}  // namespace mssql_cdc
