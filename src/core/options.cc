#include "core/options.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <span>

#include "core/errors.h"
#include "core/user_text.h"

namespace mssql_cdc {
namespace {

constexpr std::string_view kSecretShown = "***";

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  std::size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

std::string JoinNames(std::span<const std::string_view> names) {
  std::string out;
  for (auto name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// The boolean words of section 2.1, any case, spaces around ignored; nullopt for others.
std::optional<bool> ParseBoolWord(std::string_view text) {
  std::string word = AsciiLower(Trim(text));
  if (word == "true" || word == "1" || word == "yes" || word == "y") return true;
  if (word == "false" || word == "0" || word == "no" || word == "n") return false;
  return std::nullopt;
}

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
    if (value && Trim(*value).empty()) {
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
    text = Trim(text);
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
    auto b = static_cast<unsigned char>(text[i]);
    int extra = -1;  // continuation bytes after the lead byte
    if (b < 0x80) {
      extra = 0;
    } else if ((b & 0xE0) == 0xC0) {
      extra = 1;
    } else if ((b & 0xF0) == 0xE0) {
      extra = 2;
    } else if ((b & 0xF8) == 0xF0) {
      extra = 3;
    }
    if (extra < 0 || i + extra >= text.size()) return std::nullopt;
    char32_t cp = extra == 0 ? b : b & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (c & 0x3F);
    }
    constexpr char32_t kMinForLength[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return std::nullopt;
    }
    out.push_back(cp);
    i += extra + 1;
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

Backend ParseBackend(const std::optional<std::string>& value) {
  if (!value) return Backend::kOdbc;
  std::string word = AsciiLower(Trim(*value));
  if (word == "odbc" || word == "mssql-python" || word == "arrow-odbc") return Backend::kOdbc;
  if (word == "sim") return Backend::kSim;
  if (word == "fake") {
    throw ConfigError(
        "option backend 'fake' does not exist in this engine: use backend=sim with simPath "
        "set to a simulated database file");
  }
  throw ConfigError(fmt::format(
      "unknown backend {}: give odbc (the default; mssql-python and arrow-odbc are read as "
      "odbc) or sim",
      QuoteUserText(*value)));
}

StartingLsn ParseStartingLsn(const std::string& value) {
  std::string word = AsciiLower(Trim(value));
  if (word == "earliest") return {StartingLsn::Kind::kEarliest, {}};
  if (word == "latest") return {StartingLsn::Kind::kLatest, {}};
  try {
    return {StartingLsn::Kind::kLsn, Lsn::ParseLenient(Trim(value))};
  } catch (const ConfigError&) {
    throw ConfigError(fmt::format(
        "option startingLsn {} is not valid: give earliest, latest, or an LSN of 1 to 20 hex "
        "digits with or without 0x, e.g. 0x0000002A000001000001",
        QuoteUserText(value)));
  }
}

Lsn ParseSnapshotLsn(const std::string& value) {
  try {
    return Lsn::ParseLenient(Trim(value));
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


std::optional<std::string_view> KnownSourceOptionSpelling(std::string_view name) {
  const std::string lower = AsciiLower(name);
  for (std::string_view known : kSourceOptionNames) {
    if (AsciiLower(known) == lower) return known;
  }
  return std::nullopt;
}

bool IsKnownSourceOption(std::string_view name) {
  return KnownSourceOptionSpelling(name).has_value();
}

bool IsSecretOptionName(std::string_view name) {
  std::string lower = AsciiLower(name);
  if (lower == "connectionstring") return true;
  for (std::string_view word : {"password", "passwd", "pwd", "secret", "token"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

bool IsAccessTokenText(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x21 && byte <= 0x7E;
  });
}

// ---------------------------------------------------------------------------------------------
// Options

Options::Options(const std::map<std::string, std::string>& options) {
  for (const auto& [name, value] : options) Add(name, value);
}

Options::Options(std::vector<Entry> options) {
  for (auto& [name, value] : options) Add(std::move(name), std::move(value));
}

Options::Options(std::initializer_list<Entry> options) {
  for (const auto& [name, value] : options) Add(name, value);
}

void Options::Add(std::string name, std::string value) {
  std::string lower = AsciiLower(name);
  if (auto it = index_.find(lower); it != index_.end()) {
    const std::string& first = entries_[it->second].first;
    if (first == name) {
      throw ConfigError(fmt::format("option {} is given twice: give it once", QuoteUserText(name)));
    }
    throw ConfigError(fmt::format(
        "options {} and {} are the same option (names ignore case): give it once",
        QuoteUserText(first), QuoteUserText(name)));
  }
  index_.emplace(std::move(lower), entries_.size());
  entries_.emplace_back(std::move(name), std::move(value));
}

const Options::Entry* Options::Find(std::string_view name) const {
  auto it = index_.find(AsciiLower(name));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::optional<std::string> Options::Get(std::string_view name) const {
  if (const Entry* entry = Find(name)) return entry->second;
  return std::nullopt;
}

Options Options::MergedWith(const Options& overrides) const {
  Options merged;
  for (const auto& [name, value] : entries_) {
    if (const Entry* over = overrides.Find(name)) {
      merged.Add(over->first, over->second);
    } else {
      merged.Add(name, value);
    }
  }
  for (const auto& [name, value] : overrides.entries_) {
    if (!Find(name)) merged.Add(name, value);
  }
  return merged;
}

std::string Options::Redacted() const {
  std::string out;
  for (const auto& [name, value] : entries_) {
    if (!out.empty()) out += ", ";
    out += name + "=" + (IsSecretOptionName(name) ? std::string(kSecretShown) : value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// SourceOptions

std::string_view BackendName(Backend backend) {
  return backend == Backend::kSim ? "sim" : "odbc";
}

std::string_view SchemaChangePolicyName(SchemaChangePolicy p) {
  return p == SchemaChangePolicy::kFail ? "fail" : "classify";
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
    if (!IsKnownSourceOption(name)) {
      o.unknown.push_back(name);
      WarnUnknownOnce(name);
    }
  }

  if (rule == CaptureInstanceRule::kRequired || r.Raw("captureinstance")) {
    o.capture_instance = ParseCaptureInstance(r.Raw("captureinstance"));
  }
  o.backend = ParseBackend(r.Raw("backend"));

  if (options.Has("fakepath")) {
    throw ConfigError(
        "option fakePath belongs to the reference's fake backend, which this engine does not "
        "have: use backend=sim with simPath set to a simulated database file");
  }

  if (auto cs = r.Raw("connectionstring")) {
    // The value is a secret: messages about it name the option only.
    if (cs->find('\0') != std::string::npos) {
      throw ConfigError(
          "option connectionString contains a NUL character: give ODBC keyword=value pairs "
          "separated by ';'");
    }
    o.connection_string = *cs;
  }
  if (o.backend == Backend::kOdbc && Trim(o.connection_string).empty()) {
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
    o.source_time_zone = std::string(Trim(*tz));
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
  if (auto v = r.Raw("numpartitions"); v && AsciiLower(Trim(*v)) != "auto") {
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
    std::string word = AsciiLower(Trim(*v));
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
    std::string word = AsciiLower(Trim(*v));
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
    const std::string word = AsciiLower(Trim(*v));
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

// ---------------------------------------------------------------------------------------------
// Trigger

namespace {

constexpr std::string_view kIntervalExamples =
    "e.g. '1 minute', '10 seconds', '500 milliseconds', '500 ms', '2 hours', '1 day', "
    "'1 hour 30 minutes'";

std::optional<double> UnitMillis(std::string_view unit) {
  struct UnitSize {
    std::string_view name;
    double millis;
  };
  static constexpr UnitSize kUnits[] = {
      {"ms", 1},
      {"millisecond", 1},
      {"second", 1000},
      {"minute", 60'000},
      {"hour", 3'600'000},
      {"day", 86'400'000},
      {"week", 7 * 86'400'000.0},
  };
  for (const auto& u : kUnits) {
    if (unit == u.name) return u.millis;
    if (u.name != "ms" && unit.size() == u.name.size() + 1 && unit.starts_with(u.name) &&
        unit.back() == 's') {
      return u.millis;
    }
  }
  return std::nullopt;
}

ConfigError BadInterval(std::string_view text, std::string_view why) {
  return ConfigError(fmt::format("trigger processingTime {} {}: give a number and a unit "
                                 "(millisecond, second, minute, hour, day, week, or ms), {}",
                                 QuoteUserText(text), why, kIntervalExamples));
}

}  // namespace

Trigger Trigger::ProcessingTime(std::chrono::milliseconds interval) {
  if (interval.count() < 0) {
    throw ConfigError(fmt::format("trigger processingTime must not be negative, got {} ms",
                                  interval.count()));
  }
  return Trigger(Kind::kProcessingTime, interval);
}

Trigger Trigger::ParseProcessingTime(std::string_view interval) {
  std::string text = AsciiLower(Trim(interval));
  std::string_view rest = text;
  if (rest.starts_with("interval") &&
      (rest.size() == 8 || rest[8] == ' ' || rest[8] == '\t')) {
    rest = Trim(rest.substr(8));
  }
  if (rest.empty()) throw BadInterval(interval, "is empty");
  double total = 0;
  while (!rest.empty()) {
    std::size_t digits = 0;
    while (digits < rest.size() &&
           ((rest[digits] >= '0' && rest[digits] <= '9') || rest[digits] == '.')) {
      ++digits;
    }
    std::string_view number_text = rest.substr(0, digits);
    double number = 0;
    auto [end, error] =
        std::from_chars(number_text.data(), number_text.data() + number_text.size(), number);
    if (digits == 0 || error != std::errc() || end != number_text.data() + number_text.size()) {
      throw BadInterval(interval, "does not start each part with a non-negative number");
    }
    rest = Trim(rest.substr(digits));
    std::size_t letters = 0;
    while (letters < rest.size() && rest[letters] >= 'a' && rest[letters] <= 'z') ++letters;
    std::string_view unit = rest.substr(0, letters);
    if (unit.starts_with("month") || unit.starts_with("year")) {
      throw BadInterval(interval, "uses months or years, which have no fixed length");
    }
    auto millis = UnitMillis(unit);
    if (!millis) {
      throw BadInterval(interval, unit.empty() ? std::string("has a number without a unit")
                                               : fmt::format("has unknown unit '{}'", unit));
    }
    total += number * *millis;
    rest = Trim(rest.substr(letters));
  }
  // About 285 years in milliseconds: beyond it the count would not round-trip through double.
  constexpr double kMaxMillis = 9e12;
  if (total > kMaxMillis) throw BadInterval(interval, "is too long");
  return Trigger(Kind::kProcessingTime, std::chrono::milliseconds(std::llround(total)));
}

Trigger Trigger::FromKeywords(const Options& keywords) {
  if (keywords.empty()) return Default();
  if (keywords.size() > 1) {
    throw ConfigError(fmt::format(
        "trigger has {} keywords ({}): give exactly one, availableNow or processingTime",
        keywords.size(), keywords.Redacted()));
  }
  const auto& [name, value] = keywords.entries().front();
  std::string lower = AsciiLower(name);
  if (lower == "availablenow") {
    if (ParseBoolWord(value) == true) return AvailableNow();
    throw ConfigError(fmt::format(
        "trigger availableNow must be true, got {}: to run without it, give no trigger",
        QuoteUserText(value)));
  }
  if (lower == "processingtime") return ParseProcessingTime(value);
  if (lower == "once") {
    throw ConfigError(
        "trigger once is not supported: use availableNow, which also reads everything "
        "available and stops, in bounded batches");
  }
  if (lower == "continuous") {
    throw ConfigError(
        "trigger continuous is not supported by this source: use processingTime, e.g. "
        "processingTime='10 seconds'");
  }
  throw ConfigError(fmt::format(
      "unknown trigger {}: give availableNow=True or processingTime='<interval>'", QuoteUserText(name)));
}

Trigger Trigger::Parse(std::string_view text) {
  std::string lower = AsciiLower(Trim(text));
  if (lower == "availablenow") return AvailableNow();
  if (lower == "default" || lower == "none") return Default();
  std::string_view rest = Trim(text);
  constexpr std::string_view kPrefix = "processingtime";
  if (lower.starts_with(kPrefix)) {
    rest = Trim(rest.substr(kPrefix.size()));
    if (!rest.empty() && (rest.front() == '=' || rest.front() == ':')) rest.remove_prefix(1);
    return ParseProcessingTime(rest);
  }
  if (!lower.empty() && ((lower[0] >= '0' && lower[0] <= '9') || lower.starts_with("interval"))) {
    return ParseProcessingTime(rest);
  }
  throw ConfigError(fmt::format(
      "trigger {} is not valid: give availableNow, default, or processingTime=<interval> ({})",
      QuoteUserText(text), kIntervalExamples));
}

std::string Trigger::ToString() const {
  switch (kind_) {
    case Kind::kDefault: return "default";
    case Kind::kAvailableNow: return "availableNow";
    case Kind::kProcessingTime: return fmt::format("processingTime={}ms", interval_.count());
  }
  return "default";
}

// ---------------------------------------------------------------------------------------------
// StreamParams

std::string_view OnDataLossName(OnDataLoss value) {
  return value == OnDataLoss::kResnapshot ? "resnapshot" : "fail";
}

std::string_view SnapshotModeName(SnapshotMode mode) {
  return mode == SnapshotMode::kChunked ? "chunked" : "full";
}

OnDataLoss ParseOnDataLoss(std::string_view text) {
  if (text == "fail") return OnDataLoss::kFail;
  if (text == "resnapshot") return OnDataLoss::kResnapshot;
  throw ConfigError(
      fmt::format("on_data_loss must be \"fail\" or \"resnapshot\", got {}", QuoteUserText(text)));
}

SnapshotMode ParseSnapshotMode(std::string_view text) {
  if (text == "full") return SnapshotMode::kFull;
  if (text == "chunked") return SnapshotMode::kChunked;
  throw ConfigError(
      fmt::format("snapshot must be \"full\" or \"chunked\", got {}", QuoteUserText(text)));
}

namespace {

bool ParamBool(std::string_view name, const std::string& value) {
  if (auto b = ParseBoolWord(value)) return *b;
  throw ConfigError(fmt::format(
      "{} must be a boolean, got {}: give true/1/yes/y or false/0/no/n (any case)", name,
      QuoteUserText(value)));
}

// A URI has a scheme of two or more characters before ':' ("s3://", "dbfs:/"); a single
// letter is a Windows drive.
bool IsUri(std::string_view path) {
  std::size_t colon = path.find(':');
  if (colon == std::string_view::npos || colon < 2) return false;
  for (std::size_t i = 0; i < colon; ++i) {
    char c = path[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok) return false;
  }
  return true;
}

bool IsUnderDbfs(std::string_view path) {
  return path == "/dbfs" || path.starts_with("/dbfs/");
}

}  // namespace

bool IsStreamParamName(std::string_view name) {
  const std::string lower = AsciiLower(name);
  return std::find(kStreamParamNames.begin(), kStreamParamNames.end(), lower) !=
         kStreamParamNames.end();
}

StreamParams StreamParams::Parse(const Options& params) {
  for (const auto& [name, value] : params.entries()) {
    if (!IsStreamParamName(name)) {
      throw ConfigError(fmt::format("unknown to_delta parameter {}: accepted are {}",
                                    QuoteUserText(name), JoinNames(kStreamParamNames)));
    }
  }
  StreamParams p;
  p.target = params.Get("target").value_or("");
  p.app_id = params.Get("app_id").value_or("");
  p.checkpoint = params.Get("checkpoint").value_or("");
  if (auto v = params.Get("facts_table"); v && !v->empty()) p.facts_table = *v;
  if (auto v = params.Get("trigger")) p.trigger = Trigger::Parse(*v);
  if (auto v = params.Get("query_name"); v && !v->empty()) p.query_name = *v;
  if (auto v = params.Get("bootstrap")) p.bootstrap = ParamBool("bootstrap", *v);
  if (auto v = params.Get("on_data_loss")) p.on_data_loss = ParseOnDataLoss(Trim(*v));
  if (auto v = params.Get("resnapshot_interval_days")) {
    std::string_view text = Trim(*v);
    double days = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), days);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      throw ConfigError(fmt::format(
          "resnapshot_interval_days must be a number of days, 0 or more, got {}", QuoteUserText(*v)));
    }
    p.resnapshot_interval_days = days;
  }
  if (auto v = params.Get("snapshot_on_switch")) {
    p.snapshot_on_switch = ParamBool("snapshot_on_switch", *v);
  }
  if (auto v = params.Get("snapshot")) p.snapshot = ParseSnapshotMode(Trim(*v));
  p.Validate();
  return p;
}

void StreamParams::Validate() const {
  auto require = [](std::string_view name, const std::string& value, std::string_view what) {
    if (Trim(value).empty()) {
      throw ConfigError(fmt::format("to_delta parameter {} is required: give {}", name, what));
    }
  };
  require("target", target, "the bronze Delta table, a name or a path");
  require("app_id", app_id,
          "a stable identity for this stream's writes, e.g. dbo_orders-v1 (a new checkpoint "
          "needs a new app_id)");
  require("checkpoint", checkpoint, "the directory the stream keeps its progress in");
  if (!std::isfinite(resnapshot_interval_days) || resnapshot_interval_days < 0) {
    throw ConfigError(fmt::format(
        "resnapshot_interval_days must be a number of days, 0 or more, got {}",
        resnapshot_interval_days));
  }
  if (snapshot == SnapshotMode::kChunked && !facts_table) {
    throw ConfigError(
        "snapshot=\"chunked\" needs facts_table: give a facts table, or use snapshot=\"full\"");
  }
  if (snapshot_on_switch && snapshot == SnapshotMode::kChunked) {
    throw ConfigError(
        "snapshot_on_switch=True cannot be combined with snapshot=\"chunked\": use "
        "snapshot=\"full\", or turn snapshot_on_switch off");
  }
  if (on_data_loss == OnDataLoss::kResnapshot) {
    if (!facts_table) {
      throw ConfigError(
          "on_data_loss=\"resnapshot\" needs facts_table: give a facts table, where "
          "re-snapshots are recorded");
    }
  }
}

void ValidateSparkStreamConfig(const SourceOptions& source, const StreamParams& params) {
  ValidateStreamConfig(source, params);
  const std::string& checkpoint = params.checkpoint;
  if (params.on_data_loss == OnDataLoss::kResnapshot &&
      (IsUri(checkpoint) || IsUnderDbfs(checkpoint))) {
    throw ConfigError(fmt::format(
        "on_data_loss=\"resnapshot\" needs a local or Volume checkpoint path, got {}: URIs "
        "and paths under /dbfs/ resolve differently for the engine and Spark",
        QuoteUserText(checkpoint)));
  }
}

void ValidateStreamConfig(const SourceOptions& source, const StreamParams& params) {
  params.Validate();
  if (params.snapshot_on_switch && IsUri(params.checkpoint) && !source.metrics_path) {
    throw ConfigError(fmt::format(
        "snapshot_on_switch=True with checkpoint URI {} needs the metricsPath option: give "
        "metricsPath, or use a local checkpoint path",
        QuoteUserText(params.checkpoint)));
  }
  if (params.on_data_loss == OnDataLoss::kResnapshot && !source.fail_on_data_loss) {
    throw ConfigError(
        "on_data_loss=\"resnapshot\" cannot be combined with failOnDataLoss=false: remove "
        "failOnDataLoss (re-snapshots need the data-loss check), or use on_data_loss=\"fail\"");
  }
  if (params.bootstrap && source.starting_lsn) {
    throw ConfigError(fmt::format(
        "bootstrap=True cannot be combined with startingLsn {}: a bootstrap starts at its "
        "snapshot's LSN; remove one of them",
        QuoteUserText(source.starting_lsn->ToString())));
  }
}

}  // namespace mssql_cdc
