#include "core/options.h"
#include "core/source_options.h"
#include "core/stream_params.h"
#include "core/trigger.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSecretPassword = "Pa55-Secret-Value";
constexpr const char* kSecretConnection = "Server=sqlhost,1433;Database=sales;PWD=Conn-Secret-77";

// The message of the ConfigError `fn` throws; fails the test when it throws none.
std::string ConfigErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ConfigError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected ConfigError, nothing was thrown";
  return "";
}

// Minimal valid odbc options plus `extra` (extra wins).
Options Odbc(std::initializer_list<Options::Entry> extra = {}) {
  return Options{{"captureInstance", "dbo_orders"}, {"connectionString", kSecretConnection}}
      .MergedWith(Options(extra));
}

SourceOptions ParseOdbc(std::initializer_list<Options::Entry> extra = {}) {
  return SourceOptions::Parse(Odbc(extra));
}

// Replaces the default logger with one writing to a string for the test's life.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    auto logger = std::make_shared<spdlog::logger>("options_test", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return stream_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream stream_;
};

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

// ----------------------------------------------------------------------------------------------
// Options

TEST(Options, GetsByAnyCaseAndKeepsSpelling) {
  Options o{{"startingLsn", "latest"}, {"NumPartitions", "4"}};
  EXPECT_EQ(o.Get("startinglsn"), "latest");
  EXPECT_EQ(o.Get("STARTINGLSN"), "latest");
  EXPECT_EQ(o.Get("numpartitions"), "4");
  EXPECT_FALSE(o.Get("backend"));
  EXPECT_TRUE(o.Has("StartingLSN"));
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o.entries()[0].first, "startingLsn");
  EXPECT_EQ(o.entries()[1].first, "NumPartitions");
}

TEST(Options, NamesDifferingOnlyInCaseAreRefusedWithoutShowingValues) {
  std::string message = ConfigErrorOf([] {
    Options(std::map<std::string, std::string>{{"password", kSecretPassword}, {"Password", "x"}});
  });
  EXPECT_NE(message.find("'Password'"), std::string::npos) << message;
  EXPECT_NE(message.find("'password'"), std::string::npos) << message;
  EXPECT_NE(message.find("give it once"), std::string::npos) << message;
  EXPECT_EQ(message.find(kSecretPassword), std::string::npos) << message;

  message = ConfigErrorOf([] {
    Options(std::vector<Options::Entry>{{"startingLsn", "earliest"}, {"STARTINGLSN", "latest"}});
  });
  EXPECT_NE(message.find("'startingLsn'"), std::string::npos) << message;
  EXPECT_NE(message.find("'STARTINGLSN'"), std::string::npos) << message;

  message = ConfigErrorOf([] { Options{{"backend", "sim"}, {"backend", "odbc"}}; });
  EXPECT_NE(message.find("'backend' is given twice"), std::string::npos) << message;
}

TEST(Options, MergedWithLetsOverridesWinIgnoringCase) {
  Options shared{{"connectionString", "c"}, {"numPartitions", "4"}, {"backend", "odbc"}};
  Options merged = shared.MergedWith(Options{{"NUMPARTITIONS", "8"}, {"maxCommitsPerBatch", "500"}});
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_EQ(merged.Get("numPartitions"), "8");
  EXPECT_EQ(merged.Get("maxcommitsperbatch"), "500");
  EXPECT_EQ(merged.Get("backend"), "odbc");
  EXPECT_EQ(merged.entries()[1].first, "NUMPARTITIONS");  // the override's spelling
  EXPECT_EQ(merged.entries()[3].first, "maxCommitsPerBatch");
  EXPECT_EQ(shared.Get("numPartitions"), "4");  // the shared options are untouched
  EXPECT_EQ(shared.MergedWith(Options()).entries(), shared.entries());
}

TEST(Options, RedactedHidesSecretsAndLikelySecrets) {
  Options o{{"captureInstance", "dbo_orders"},
            {"connectionString", kSecretConnection},
            {"PASSWORD", kSecretPassword},
            {"pasword_typo", "Typo-Secret-1"}};
  std::string text = o.Redacted();
  EXPECT_NE(text.find("captureInstance=dbo_orders"), std::string::npos) << text;
  EXPECT_NE(text.find("connectionString=***"), std::string::npos) << text;
  EXPECT_NE(text.find("PASSWORD=***"), std::string::npos) << text;
  EXPECT_EQ(text.find("Conn-Secret-77"), std::string::npos) << text;
  EXPECT_EQ(text.find(kSecretPassword), std::string::npos) << text;
  // "pasword" is not "password", but names with "pwd"/"secret"/"token" are hidden.
  EXPECT_TRUE(IsSecretOptionName("db_pwd"));
  EXPECT_TRUE(IsSecretOptionName("clientSecret"));
  EXPECT_TRUE(IsSecretOptionName("accessToken"));
  EXPECT_FALSE(IsSecretOptionName("snapshotKeys"));
  EXPECT_FALSE(IsSecretOptionName("user"));
}

TEST(Options, KnownNamesArePublishedInBothSpellings) {
  for (std::string_view name : kSourceOptionNames) {
    EXPECT_TRUE(IsKnownSourceOption(name));
    EXPECT_TRUE(IsKnownSourceOption(AsciiLower(name)));
    EXPECT_EQ(KnownSourceOptionSpelling(AsciiLower(name)), name);
  }
  EXPECT_EQ(KnownSourceOptionSpelling("nosuchoption"), std::nullopt);
  // The reference's 20, plus user and password (0.7.0) and this engine's simPath.
  for (std::string_view name : {"user", "password", "simpath", "fakepath", "snapshotlsn"}) {
    EXPECT_TRUE(IsKnownSourceOption(name)) << name;
  }
  EXPECT_FALSE(IsKnownSourceOption("startLsn"));
}

TEST(Options, ReferenceDocsHaveOneHeadingPerKnownOption) {
  // The data directory is <repository>/tests/data; it need not exist, so no "..".
  std::string root = MSSQL_CDC_TEST_DATA_DIR;
  root.erase(root.rfind("/tests/data"));
  std::ifstream doc(root + "/docs/reference/options.md");
  ASSERT_TRUE(doc) << "docs/reference/options.md not found";
  std::set<std::string> headings;
  bool in_source_options = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.starts_with("## ")) in_source_options = line == "## Source options";
    if (in_source_options && line.starts_with("### ")) headings.insert(line.substr(4));
  }
  std::set<std::string> known(kSourceOptionNames.begin(), kSourceOptionNames.end());
  EXPECT_EQ(headings, known);
}

// ----------------------------------------------------------------------------------------------
// SourceOptions: defaults and accepted values

TEST(SourceOptions, DefaultsOfEveryOption) {
  SourceOptions o = ParseOdbc();
  EXPECT_EQ(o.capture_instance, "dbo_orders");
  EXPECT_EQ(o.connection_string, kSecretConnection);
  EXPECT_FALSE(o.user);
  EXPECT_FALSE(o.password);
  EXPECT_EQ(o.backend, Backend::kOdbc);
  EXPECT_EQ(o.source_time_zone, "auto");
  EXPECT_EQ(o.connect_timeout_seconds, 30);
  EXPECT_FALSE(o.lock_timeout_ms);
  EXPECT_FALSE(o.starting_lsn);
  EXPECT_EQ(o.starting_position().kind, StartingLsn::Kind::kEarliest);
  EXPECT_FALSE(o.max_commits_per_batch);
  EXPECT_FALSE(o.num_partitions);
  EXPECT_EQ(o.arrow_batch_size, 10000);
  EXPECT_TRUE(o.fail_on_data_loss);
  EXPECT_TRUE(o.include_command_id);
  EXPECT_FALSE(o.columns);
  EXPECT_FALSE(o.metrics_path);
  EXPECT_EQ(o.schema_change_policy, SchemaChangePolicy::kClassify);
  EXPECT_EQ(o.isolation_level, IsolationLevel::kReadCommitted);
  EXPECT_FALSE(o.snapshot_chunks);
  EXPECT_FALSE(o.snapshot_keys);
  EXPECT_FALSE(o.snapshot_lsn);
  EXPECT_FALSE(o.sim_path);
  EXPECT_TRUE(o.unknown.empty());
}

TEST(SourceOptions, ReadsEveryOptionWhateverTheCaseOfItsName) {
  SourceOptions o = SourceOptions::Parse(Options{
      {"CAPTUREINSTANCE", "dbo_orders"},
      {"connectionstring", kSecretConnection},
      {"User", "cdc_reader"},
      {"PassWord", kSecretPassword},
      {"BACKEND", "ODBC"},
      {"sourcetimezone", "E. South America Standard Time"},
      {"connecttimeout", "0"},
      {"LOCKTIMEOUTMS", "0"},
      {"startinglsn", "latest"},
      {"maxcommitsperbatch", "500"},
      {"NumPartitions", "8"},
      {"arrowbatchsize", "1"},
      {"failondataloss", "False"},
      {"includecommandid", "NO"},
      {"COLUMNS", "order_id INT, amount DECIMAL(18,2)"},
      {"metricspath", "s3://bucket/metrics"},
      {"schemachangepolicy", "FAIL"},
      {"isolationlevel", "SNAPSHOT"},
      {"snapshotkeys", R"(["order_id"])"},
      {"snapshotchunks", "[[0, null, 100], [1, 100, null]]"},
      {"snapshotlsn", "2a000001000001"},
  });
  EXPECT_EQ(o.user, "cdc_reader");
  EXPECT_EQ(o.password, kSecretPassword);
  EXPECT_EQ(o.backend, Backend::kOdbc);
  EXPECT_EQ(o.source_time_zone, "E. South America Standard Time");
  EXPECT_EQ(o.connect_timeout_seconds, 0);
  EXPECT_EQ(o.lock_timeout_ms, 0);
  EXPECT_EQ(o.starting_position().kind, StartingLsn::Kind::kLatest);
  EXPECT_EQ(o.max_commits_per_batch, 500);
  EXPECT_EQ(o.num_partitions, 8);
  EXPECT_EQ(o.arrow_batch_size, 1);
  EXPECT_FALSE(o.fail_on_data_loss);
  EXPECT_FALSE(o.include_command_id);
  EXPECT_EQ(o.columns, "order_id INT, amount DECIMAL(18,2)");
  EXPECT_EQ(o.metrics_path, "s3://bucket/metrics");
  EXPECT_EQ(o.schema_change_policy, SchemaChangePolicy::kFail);
  EXPECT_EQ(o.isolation_level, IsolationLevel::kSnapshot);
  EXPECT_EQ(o.snapshot_keys, std::vector<std::string>{"order_id"});
  EXPECT_EQ(o.snapshot_chunks, "[[0, null, 100], [1, 100, null]]");
  EXPECT_EQ(o.snapshot_lsn->ToString(), "0x0000002A000001000001");
  EXPECT_TRUE(o.unknown.empty());
}

TEST(SourceOptions, BooleansAcceptTheUsualWordsInAnyCase) {
  for (const char* yes : {"true", "TRUE", "1", "yes", "Yes", "y", "Y", " true "}) {
    EXPECT_TRUE(ParseOdbc({{"failOnDataLoss", yes}}).fail_on_data_loss) << yes;
    EXPECT_TRUE(ParseOdbc({{"includeCommandId", yes}}).include_command_id) << yes;
  }
  for (const char* no : {"false", "False", "0", "no", "NO", "n", "N"}) {
    EXPECT_FALSE(ParseOdbc({{"failOnDataLoss", no}}).fail_on_data_loss) << no;
    EXPECT_FALSE(ParseOdbc({{"includeCommandId", no}}).include_command_id) << no;
  }
}

TEST(SourceOptions, StartingLsnTakesKeywordsOrAnLsn) {
  EXPECT_EQ(ParseOdbc({{"startingLsn", "EARLIEST"}}).starting_lsn->kind,
            StartingLsn::Kind::kEarliest);
  EXPECT_EQ(ParseOdbc({{"startingLsn", "Latest"}}).starting_lsn->kind, StartingLsn::Kind::kLatest);
  for (const char* text : {"0x0000002A000001000001", "0x2a000001000001", "2A000001000001"}) {
    StartingLsn s = *ParseOdbc({{"startingLsn", text}}).starting_lsn;
    EXPECT_EQ(s.kind, StartingLsn::Kind::kLsn) << text;
    EXPECT_EQ(s.lsn.ToString(), "0x0000002A000001000001") << text;
  }
}

TEST(SourceOptions, BackendAliasesAndSim) {
  for (const char* odbc : {"odbc", "ODBC", "mssql-python", "arrow-odbc", "Arrow-ODBC"}) {
    EXPECT_EQ(ParseOdbc({{"backend", odbc}}).backend, Backend::kOdbc) << odbc;
  }
  SourceOptions sim = SourceOptions::Parse(
      Options{{"captureInstance", "dbo_orders"}, {"backend", "Sim"}, {"simPath", "/tmp/db.sqlite"}});
  EXPECT_EQ(sim.backend, Backend::kSim);
  EXPECT_EQ(BackendName(sim.backend), "sim");
  EXPECT_EQ(sim.sim_path, "/tmp/db.sqlite");
  EXPECT_TRUE(sim.connection_string.empty());  // not required with sim
  EXPECT_EQ(BackendName(ParseOdbc({{"backend", "mssql-python"}}).backend), "odbc");
}

TEST(SourceOptions, ChangeReaderIsAutoTdsOrDriverAndOnlyForOdbc) {
  EXPECT_EQ(ParseOdbc({}).change_reader, ChangeReaderChoice::kAuto);
  EXPECT_EQ(ParseOdbc({{"changeReader", "TDS"}}).change_reader, ChangeReaderChoice::kTds);
  EXPECT_EQ(ParseOdbc({{"changeReader", "driver"}}).change_reader, ChangeReaderChoice::kDriver);
  const std::string message = ConfigErrorOf([] {
    SourceOptions::Parse(Options{{"captureInstance", "dbo_orders"}, {"backend", "sim"},
                                 {"simPath", "/tmp/db.sqlite"}, {"changeReader", "tds"}});
  });
  EXPECT_NE(message.find("changeReader is only read by backend odbc"), std::string::npos) << message;
}

TEST(SourceOptions, NumPartitionsAutoInAnyCase) {
  EXPECT_FALSE(ParseOdbc({{"numPartitions", "AUTO"}}).num_partitions);
  EXPECT_FALSE(ParseOdbc({{"numPartitions", "auto"}}).num_partitions);
  EXPECT_EQ(ParseOdbc({{"numPartitions", "1"}}).num_partitions, 1);
}

TEST(SourceOptions, CaptureInstanceAllowsUnicodeUpToOneHundredCharacters) {
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += "\xC3\xA9";  // é: 100 characters, 200 bytes
  EXPECT_EQ(ParseOdbc({{"captureInstance", hundred}}).capture_instance, hundred);
  EXPECT_EQ(ParseOdbc({{"captureInstance", "dbo_Ordens de serviço [x"}}).capture_instance,
            "dbo_Ordens de serviço [x");

  std::string message = ConfigErrorOf([&] { ParseOdbc({{"captureInstance", hundred + "a"}}); });
  EXPECT_NE(message.find("captureInstance"), std::string::npos) << message;
  EXPECT_NE(message.find("101 characters"), std::string::npos) << message;
  EXPECT_NE(message.find("at most 100"), std::string::npos) << message;

  for (std::string bad : {std::string("dbo_orders]"), std::string("dbo\norders"),
                          std::string("dbo\x7Forders"), std::string("dbo\xC2\x85x")}) {
    message = ConfigErrorOf([&] { ParseOdbc({{"captureInstance", bad}}); });
    EXPECT_NE(message.find("option captureInstance"), std::string::npos) << message;
    EXPECT_NE(message.find("']' or a control character"), std::string::npos) << message;
  }
  EXPECT_NE(ConfigErrorOf([] { ParseOdbc({{"captureInstance", "dbo_\xFF"}}); }).find("UTF-8"),
            std::string::npos);
  // A control character is shown escaped, so the message stays one line.
  EXPECT_NE(ConfigErrorOf([] { ParseOdbc({{"captureInstance", "a\nb"}}); }).find("'a\\nb'"),
            std::string::npos);
}

TEST(SourceOptions, SnapshotChunksAcceptCompositeAndOpenBounds) {
  SourceOptions o = ParseOdbc({{"snapshotKeys", R"(["region", "order_id"])"},
                               {"snapshotChunks",
                                R"([[0, null, ["EU", 10]], [1, ["EU", 10], ["US", null]],
                                    [2, ["US", null], null]])"}});
  EXPECT_EQ(o.snapshot_keys->size(), 2u);
  EXPECT_TRUE(o.snapshot_chunks);
  // One chunk covering the whole table has no bounds, so any key count fits.
  EXPECT_TRUE(ParseOdbc({{"snapshotKeys", R"(["a", "b"])"}, {"snapshotChunks", "[[7, null, null]]"}})
                  .snapshot_chunks);
  EXPECT_TRUE(ParseOdbc({{"snapshotChunks", R"([[0, "2024-01-01T00:00:00", "0x00FF"]])"}})
                  .snapshot_chunks);
}

// ----------------------------------------------------------------------------------------------
// SourceOptions: every rejection names the option, the value and what is accepted

struct Rejection {
  std::string option;
  std::string value;
  std::vector<std::string> expected;  // substrings of the message
};

TEST(SourceOptions, BackendFakeReadsTheSimulatedDatabaseInFakePath) {
  const auto parsed = SourceOptions::Parse(
      Options({{"captureInstance", "dbo_orders"}, {"BACKEND", "Fake"}, {"fakePath", "/tmp/src/"}}));
  EXPECT_EQ(parsed.backend, Backend::kSim);
  EXPECT_EQ(parsed.sim_path, "/tmp/src/" + std::string(kFakeDatabaseFileName));
  EXPECT_EQ(FakeDatabaseFile("/tmp/src"), "/tmp/src/database.sim");
  try {
    SourceOptions::Parse(Options({{"captureInstance", "dbo_orders"}, {"backend", "fake"},
                                  {"fakePath", "/tmp/src"}, {"simPath", "/tmp/x.sim"}}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("backend fake reads fakePath, not simPath"), std::string::npos) << e.what();
  }
}

TEST(SourceOptions, RejectionsNameOptionValueAndWhatIsAccepted) {
  const std::vector<Rejection> cases = {
      {"backend", "postgres", {"unknown backend", "'postgres'", "odbc", "sim"}},
      {"backend", "fake", {"fakePath", "required", "backend fake", "FakeCdcDatabase"}},
      {"fakePath", "/tmp/state", {"fakePath", "backend fake", "backend=fake"}},
      {"simPath", "/tmp/db.sqlite", {"simPath", "backend sim", "backend=sim"}},
      {"sourceTimeZone", "  ", {"sourceTimeZone", "empty", "Windows time-zone name"}},
      {"connectTimeout", "-1", {"connectTimeout", "'-1'", "0 or more"}},
      {"connectTimeout", "1.5", {"connectTimeout", "'1.5'", "whole number"}},
      {"connectTimeout", "thirty", {"connectTimeout", "'thirty'", "whole number"}},
      {"lockTimeoutMs", "-5", {"lockTimeoutMs", "'-5'", "0 or more"}},
      {"startingLsn", "yesterday", {"startingLsn", "'yesterday'", "earliest, latest"}},
      {"startingLsn", "0x0000002A0000010000011", {"startingLsn", "0x0000002A0000010000011", "20 hex"}},
      {"maxCommitsPerBatch", "0", {"maxCommitsPerBatch", "'0'", "1 or more", "omitted"}},
      {"maxCommitsPerBatch", "-3", {"maxCommitsPerBatch", "'-3'", "1 or more"}},
      {"maxCommitsPerBatch", "99999999999999999999", {"maxCommitsPerBatch", "99999999999999999999"}},
      {"numPartitions", "0", {"numPartitions", "'0'", "auto", "1 or more"}},
      {"numPartitions", "many", {"numPartitions", "'many'", "auto"}},
      {"arrowBatchSize", "0", {"arrowBatchSize", "'0'", "1 or more"}},
      {"arrowBatchSize", "10k", {"arrowBatchSize", "'10k'", "whole number"}},
      {"failOnDataLoss", "on", {"failOnDataLoss", "'on'", "true/1/yes/y", "false/0/no/n"}},
      {"includeCommandId", "ture", {"includeCommandId", "'ture'", "true/1/yes/y"}},
      {"columns", "", {"columns", "empty", "Spark DDL"}},
      {"metricsPath", "", {"metricsPath", "empty", "directory"}},
      {"user", "", {"user", "empty", "login"}},
      {"password", "", {"password", "empty", "omit"}},
      {"schemaChangePolicy", "ignore", {"schemaChangePolicy", "'ignore'", "classify or fail"}},
      {"isolationLevel", "nolock", {"isolationLevel", "'nolock'", "readCommitted or snapshot"}},
      {"changeReader", "odbc", {"changeReader", "'odbc'", "auto, tds or driver"}},
      {"changeReader", "", {"changeReader", "auto, tds or driver"}},
      {"snapshotLsn", "latest", {"snapshotLsn", "'latest'", "hex digits"}},
      {"snapshotKeys", "order_id", {"snapshotKeys", "not valid JSON", "JSON list"}},
      {"snapshotKeys", "[]", {"snapshotKeys", "'[]'", "non-empty list"}},
      {"snapshotKeys", "[\"a\", 1]", {"snapshotKeys", "not a non-empty string"}},
      {"snapshotKeys", "[\"a\", \"a\"]", {"snapshotKeys", "'a' twice"}},
      {"snapshotChunks", "[[0, 1, 2]", {"snapshotChunks", "not valid JSON", "[chunk, lo, hi]"}},
      {"snapshotChunks", "[]", {"snapshotChunks", "non-empty list", "whole table"}},
      {"snapshotChunks", "[[0, 1]]", {"snapshotChunks", "entry 0", "[chunk, lo, hi]"}},
      {"snapshotChunks", "[[\"a\", 1, 2]]", {"snapshotChunks", "entry 0", "chunk number"}},
      {"snapshotChunks", "[[0, 1, 2], [0, 2, 3]]", {"snapshotChunks", "entry 1", "repeats chunk number 0"}},
      {"snapshotChunks", "[[0, 1, [2, 3]]]", {"snapshotChunks", "entry 0", "different number of key"}},
      {"snapshotChunks", "[[0, {\"a\": 1}, 2]]", {"snapshotChunks", "entry 0", "object"}},
      {"snapshotChunks", "[[0, [[1]], 2]]", {"snapshotChunks", "entry 0", "nested"}},
      {"snapshotChunks", "[[0, 5000000000, 2]]", {"snapshotChunks"}},  // not a chunk-number error
      {"snapshotChunks", "[[5000000000, 1, 2]]", {"snapshotChunks", "INT range"}},
      {"snapshotChunks", "[[18446744073709551615, 1, 2]]", {"snapshotChunks", "INT range"}},
      {"snapshotChunks", "[[1.5, 1, 2]]", {"snapshotChunks", "INT range"}},
  };
  for (const auto& c : cases) {
    if (c.option == "snapshotChunks" && c.value == "[[0, 5000000000, 2]]") {
      // A large key value is fine; only chunk numbers are INT.
      EXPECT_NO_THROW(ParseOdbc({{c.option, c.value}}));
      continue;
    }
    std::string message = ConfigErrorOf([&] { ParseOdbc({{c.option, c.value}}); });
    for (const auto& part : c.expected) {
      EXPECT_NE(message.find(part), std::string::npos)
          << c.option << "=" << c.value << ": '" << part << "' not in: " << message;
    }
  }
}

TEST(SourceOptions, RequiredOptions) {
  std::string message =
      ConfigErrorOf([] { SourceOptions::Parse(Options{{"connectionString", kSecretConnection}}); });
  EXPECT_NE(message.find("captureInstance is required"), std::string::npos) << message;

  message = ConfigErrorOf([] { SourceOptions::Parse(Options{{"captureInstance", "dbo_orders"}}); });
  EXPECT_NE(message.find("connectionString is required with backend odbc"), std::string::npos)
      << message;

  message = ConfigErrorOf([] {
    SourceOptions::Parse(Options{{"captureInstance", "dbo_orders"}, {"backend", "sim"}});
  });
  EXPECT_NE(message.find("simPath is required with backend sim"), std::string::npos) << message;
}

TEST(SourceOptions, KeysAndChunkBoundsMustAgree) {
  std::string message = ConfigErrorOf([] {
    ParseOdbc({{"snapshotKeys", R"(["a", "b"])"}, {"snapshotChunks", "[[0, null, 5]]"}});
  });
  EXPECT_NE(message.find("1 key column(s) but snapshotKeys names 2"), std::string::npos)
      << message;
}

TEST(SourceOptions, ChunkBoundsNeverAppearInMessages) {
  // Bounds are source key values (maybe personal data): messages point at entries instead.
  for (const char* chunks : {R"([[0, "jane@example.com", ["jane@example.com", 1]]])",
                             R"([[0, "jane@example.com"]])", R"([[0, "jane@example.com", 1])"}) {
    std::string message = ConfigErrorOf([&] { ParseOdbc({{"snapshotChunks", chunks}}); });
    EXPECT_EQ(message.find("jane@example.com"), std::string::npos) << message;
  }
}

// ----------------------------------------------------------------------------------------------
// Unknown options

TEST(SourceOptions, UnknownOptionsAreRecordedAndWarnedOncePerProcess) {
  CapturedLog log;
  SourceOptions first = ParseOdbc({{"startLsn", "latest"}, {"MaxCommitPerBatch", "10"}});
  EXPECT_EQ(first.unknown, (std::vector<std::string>{"startLsn", "MaxCommitPerBatch"}));
  SourceOptions again = ParseOdbc({{"STARTLSN", "latest"}});
  EXPECT_EQ(again.unknown, std::vector<std::string>{"STARTLSN"});  // still recorded each time

  std::string text = log.text();
  EXPECT_EQ(Count(text, "unknown source option"), 2) << text;
  EXPECT_EQ(Count(text, "'startLsn'"), 1) << text;
  EXPECT_EQ(Count(text, "'MaxCommitPerBatch'"), 1) << text;
  EXPECT_NE(text.find("[warning]"), std::string::npos) << text;
  EXPECT_NE(text.find("maxCommitsPerBatch"), std::string::npos) << "lists known names: " << text;
  EXPECT_EQ(text.find("latest"), std::string::npos) << "values are not logged: " << text;
}

TEST(SourceOptions, TheReferencesTokenProviderIsRefusedNotIgnored) {
  CapturedLog log;
  for (const char* name : {"tokenProvider", "TOKENPROVIDER"}) {
    try {
      ParseOdbc({{name, "my_jobs.auth:token"}});
      FAIL() << name << " was accepted";
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(std::string("option ") + name), std::string::npos) << message;
      EXPECT_NE(message.find("accessToken"), std::string::npos) << message;
      EXPECT_EQ(message.find("my_jobs"), std::string::npos) << "the value is not echoed: " << message;
    }
  }
  EXPECT_EQ(Count(log.text(), "unknown source option"), 0) << log.text();
}

// ----------------------------------------------------------------------------------------------
// Secrets

TEST(SourceOptions, SecretsNeverAppearInMessagesLogsOrDescriptions) {
  CapturedLog log;
  auto with_secrets = [](std::initializer_list<Options::Entry> extra) {
    return Odbc({{"user", "cdc_reader"}, {"password", kSecretPassword}}).MergedWith(Options(extra));
  };
  std::vector<std::function<void()>> provocations = {
      [&] { SourceOptions::Parse(with_secrets({{"backend", "nope"}})); },
      [&] { SourceOptions::Parse(with_secrets({{"backend", "fake"}})); },
      [&] { SourceOptions::Parse(with_secrets({{"failOnDataLoss", "maybe"}})); },
      [&] { SourceOptions::Parse(with_secrets({{"captureInstance", ""}})); },
      [&] { SourceOptions::Parse(with_secrets({{"numPartitions", "0"}})); },
      [&] { SourceOptions::Parse(with_secrets({{"simPath", "/x"}})); },
      [&] { SourceOptions::Parse(with_secrets({{"connectionString", "  "}})); },
      [&] {
        SourceOptions::Parse(with_secrets(
            {{"connectionString", std::string(kSecretConnection) + std::string(1, '\0')}}));
      },
      [&] {
        SourceOptions::Parse(
            with_secrets({{"password", std::string(kSecretPassword) + std::string(1, '\0')}}));
      },
      [&] { Options{{"password", kSecretPassword}, {"Password", kSecretPassword}}; },
      [&] {
        Options{{"connectionString", kSecretConnection}, {"CONNECTIONSTRING", kSecretConnection}};
      },
      [&] { Trigger::FromKeywords(Options{{"processingTime", "1 minute"}, {"password", kSecretPassword}}); },
  };
  for (std::size_t i = 0; i < provocations.size(); ++i) {
    std::string message = ConfigErrorOf(provocations[i]);
    EXPECT_FALSE(message.empty()) << "provocation " << i;
    EXPECT_EQ(message.find(kSecretPassword), std::string::npos) << i << ": " << message;
    EXPECT_EQ(message.find("Conn-Secret-77"), std::string::npos) << i << ": " << message;
    EXPECT_EQ(message.find("sqlhost"), std::string::npos) << i << ": " << message;
  }

  SourceOptions ok = SourceOptions::Parse(with_secrets({{"aSecretTypo", "x"}}));
  std::string description = ok.Redacted();
  EXPECT_EQ(description.find(kSecretPassword), std::string::npos) << description;
  EXPECT_EQ(description.find("Conn-Secret-77"), std::string::npos) << description;
  EXPECT_NE(description.find("connectionString=***"), std::string::npos) << description;
  EXPECT_NE(description.find("password=***"), std::string::npos) << description;
  EXPECT_NE(description.find("user=cdc_reader"), std::string::npos) << description;
  EXPECT_NE(description.find("captureInstance=dbo_orders"), std::string::npos) << description;
  EXPECT_NE(description.find("unknown=[aSecretTypo]"), std::string::npos) << description;

  std::string logged = log.text();
  EXPECT_EQ(logged.find(kSecretPassword), std::string::npos) << logged;
  EXPECT_EQ(logged.find("Conn-Secret-77"), std::string::npos) << logged;
}

TEST(SourceOptions, AnAccessTokenComesAloneAndIsNeverShown) {
  const std::string token = "eyJhbGciOi.eyJleHAiOjF9.tok-Secret-9";
  SourceOptions ok = ParseOdbc({{"accessToken", token}});
  EXPECT_EQ(ok.access_token, token);
  EXPECT_NE(ok.Redacted().find("accessToken=***"), std::string::npos) << ok.Redacted();
  EXPECT_EQ(ok.Redacted().find("tok-Secret"), std::string::npos);
  EXPECT_TRUE(IsSecretOptionName("accessToken"));
  const std::vector<std::pair<std::vector<Options::Entry>, std::string>> refused = {
      {{{"accessToken", token}, {"user", "u"}}, "together with user or password"},
      {{{"accessToken", "Bearer " + token}}, "give the token alone"},
      {{{"accessToken", token + "\n"}}, "no line break"},
      {{{"accessToken", ""}}, "is empty"},
  };
  for (const auto& [extra, says] : refused) {
    Options options = Odbc();
    for (const auto& [name, value] : extra) options = options.MergedWith(Options{{name, value}});
    const std::string message = ConfigErrorOf([&] { SourceOptions::Parse(options); });
    EXPECT_NE(message.find(says), std::string::npos) << message;
    EXPECT_EQ(message.find("tok-Secret"), std::string::npos) << message;
  }
  const std::string sim = ConfigErrorOf([&] {
    SourceOptions::Parse(Options{{"captureInstance", "dbo_orders"}, {"backend", "sim"},
                                 {"simPath", "/tmp/db"}, {"accessToken", token}});
  });
  EXPECT_NE(sim.find("only read by backend odbc"), std::string::npos) << sim;
}

TEST(SourceOptions, RedactedShowsUnsetSecretsAsUnset) {
  SourceOptions sim = SourceOptions::Parse(
      Options{{"captureInstance", "dbo_orders"}, {"backend", "sim"}, {"simPath", "/tmp/db"}});
  std::string text = sim.Redacted();
  EXPECT_NE(text.find("connectionString=unset"), std::string::npos) << text;
  EXPECT_NE(text.find("password=unset"), std::string::npos) << text;
  EXPECT_NE(text.find("backend=sim"), std::string::npos) << text;
  EXPECT_NE(text.find("simPath=/tmp/db"), std::string::npos) << text;
}

// ----------------------------------------------------------------------------------------------
// Trigger

TEST(Trigger, ParsesSparkIntervals) {
  struct Case {
    const char* text;
    std::chrono::milliseconds expected;
  };
  for (const Case& c : std::vector<Case>{{"1 minute", 1min},
                                         {"10 seconds", 10s},
                                         {"1 second", 1s},
                                         {"500 milliseconds", 500ms},
                                         {"500 ms", 500ms},
                                         {"500ms", 500ms},
                                         {"2 hours", 2h},
                                         {"1 day", 24h},
                                         {"2 Weeks", 14 * 24h},
                                         {"1.5 seconds", 1500ms},
                                         {"interval 10 seconds", 10s},
                                         {"1 hour 30 minutes", 90min},
                                         {"  5 MINUTES ", 5min},
                                         {"0 seconds", 0ms}}) {
    Trigger t = Trigger::ParseProcessingTime(c.text);
    EXPECT_EQ(t.kind(), Trigger::Kind::kProcessingTime) << c.text;
    EXPECT_EQ(t.interval(), c.expected) << c.text;
  }
}

TEST(Trigger, RejectsBadIntervalsWithExamples) {
  for (const char* bad : {"", "minute", "30s", "10", "-1 minute", "1 fortnight", "1 month",
                          "2 years", "1 minute and", "1..5 seconds", "interval"}) {
    std::string message = ConfigErrorOf([&] { Trigger::ParseProcessingTime(bad); });
    EXPECT_NE(message.find("processingTime"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find(fmt::format("'{}'", bad)), std::string::npos) << message;
    EXPECT_NE(message.find("'10 seconds'"), std::string::npos) << message;
  }
  EXPECT_NE(ConfigErrorOf([] { Trigger::ParseProcessingTime("1 month"); }).find("fixed length"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([] { Trigger::ParseProcessingTime("30s"); }).find("unknown unit 's'"),
            std::string::npos);
  EXPECT_THROW(Trigger::ProcessingTime(-1ms), ConfigError);
}

TEST(Trigger, FromKeywordsLikeDataStreamWriter) {
  EXPECT_EQ(Trigger::FromKeywords(Options()).kind(), Trigger::Kind::kDefault);
  EXPECT_EQ(Trigger::FromKeywords(Options{{"availableNow", "True"}}), Trigger::AvailableNow());
  EXPECT_EQ(Trigger::FromKeywords(Options{{"AVAILABLENOW", "1"}}), Trigger::AvailableNow());
  EXPECT_EQ(Trigger::FromKeywords(Options{{"processingTime", "1 minute"}}),
            Trigger::ProcessingTime(1min));

  EXPECT_NE(ConfigErrorOf([] { Trigger::FromKeywords(Options{{"availableNow", "false"}}); })
                .find("availableNow must be true"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([] {
              Trigger::FromKeywords(Options{{"availableNow", "true"}, {"processingTime", "1 s"}});
            }).find("exactly one"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([] { Trigger::FromKeywords(Options{{"once", "true"}}); })
                .find("use availableNow"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([] { Trigger::FromKeywords(Options{{"continuous", "1 second"}}); })
                .find("use processingTime"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([] { Trigger::FromKeywords(Options{{"every", "1 second"}}); })
                .find("unknown trigger 'every'"),
            std::string::npos);
}

TEST(Trigger, ParsesOneStringForm) {
  EXPECT_EQ(Trigger::Parse("availableNow"), Trigger::AvailableNow());
  EXPECT_EQ(Trigger::Parse("AVAILABLENOW"), Trigger::AvailableNow());
  EXPECT_EQ(Trigger::Parse("default"), Trigger::Default());
  EXPECT_EQ(Trigger::Parse("processingTime=1 minute"), Trigger::ProcessingTime(1min));
  EXPECT_EQ(Trigger::Parse("processingTime: 10 seconds"), Trigger::ProcessingTime(10s));
  EXPECT_EQ(Trigger::Parse("2 hours"), Trigger::ProcessingTime(2h));
  EXPECT_EQ(Trigger::Parse("processingTime=1 minute").ToString(), "processingTime=60000ms");
  EXPECT_EQ(Trigger::AvailableNow().ToString(), "availableNow");
  std::string message = ConfigErrorOf([] { Trigger::Parse("sometimes"); });
  EXPECT_NE(message.find("'sometimes'"), std::string::npos) << message;
  EXPECT_NE(message.find("availableNow"), std::string::npos) << message;
  EXPECT_NE(message.find("'1 minute'"), std::string::npos) << message;
  EXPECT_NE(ConfigErrorOf([] { Trigger::Parse("processingTime=1 month"); }).find("fixed length"),
            std::string::npos);
}

// ----------------------------------------------------------------------------------------------
// StreamParams

StreamParams ValidParams() {
  StreamParams p;
  p.target = "bronze.dbo_orders";
  p.app_id = "dbo_orders-v1";
  p.checkpoint = "/chk/dbo_orders";
  return p;
}

TEST(StreamParams, DefaultsAndParseFromStrings) {
  StreamParams d = StreamParams::Parse(
      Options{{"target", "bronze.t"}, {"app_id", "t-v1"}, {"checkpoint", "/chk/t"}});
  EXPECT_EQ(d.target, "bronze.t");
  EXPECT_EQ(d.app_id, "t-v1");
  EXPECT_EQ(d.checkpoint, "/chk/t");
  EXPECT_FALSE(d.facts_table);
  EXPECT_EQ(d.trigger, Trigger::Default());
  EXPECT_FALSE(d.query_name);
  EXPECT_FALSE(d.bootstrap);
  EXPECT_EQ(d.on_data_loss, OnDataLoss::kFail);
  EXPECT_EQ(d.resnapshot_interval_days, 7.0);
  EXPECT_FALSE(d.snapshot_on_switch);
  EXPECT_EQ(d.snapshot, SnapshotMode::kFull);

  StreamParams p = StreamParams::Parse(Options{{"TARGET", "/lake/bronze/t"},
                                               {"app_id", "t-v1"},
                                               {"checkpoint", "/chk/t"},
                                               {"facts_table", "ops.facts"},
                                               {"trigger", "availableNow"},
                                               {"query_name", "q"},
                                               {"bootstrap", "yes"},
                                               {"on_data_loss", "resnapshot"},
                                               {"resnapshot_interval_days", "0"},
                                               {"snapshot_on_switch", "false"},
                                               {"snapshot", "chunked"}});
  EXPECT_EQ(p.target, "/lake/bronze/t");
  EXPECT_EQ(p.facts_table, "ops.facts");
  EXPECT_EQ(p.trigger, Trigger::AvailableNow());
  EXPECT_EQ(p.query_name, "q");
  EXPECT_TRUE(p.bootstrap);
  EXPECT_EQ(p.on_data_loss, OnDataLoss::kResnapshot);
  EXPECT_EQ(p.resnapshot_interval_days, 0.0);
  EXPECT_EQ(p.snapshot, SnapshotMode::kChunked);
}

TEST(StreamParams, Rejections) {
  auto parse = [](std::vector<Options::Entry> extra) {
    return StreamParams::Parse(
        Options{{"target", "bronze.t"}, {"app_id", "t-v1"}, {"checkpoint", "/chk/t"}}
            .MergedWith(Options(extra)));
  };
  const std::vector<std::pair<std::vector<Options::Entry>, std::vector<std::string>>>
      cases = {
          {{{"target", ""}}, {"target is required"}},
          {{{"app_id", " "}}, {"app_id is required", "new checkpoint needs a new app_id"}},
          {{{"checkpoint", ""}}, {"checkpoint is required"}},
          {{{"on_data_loss", "skip"}}, {"on_data_loss", "'skip'", "\"fail\" or \"resnapshot\""}},
          {{{"on_data_loss", "Fail"}}, {"on_data_loss", "'Fail'"}},
          {{{"snapshot", "partial"}}, {"snapshot", "'partial'", "\"full\" or \"chunked\""}},
          {{{"bootstrap", "sure"}}, {"bootstrap", "'sure'", "true/1/yes/y"}},
          {{{"snapshot_on_switch", "2"}}, {"snapshot_on_switch", "'2'"}},
          {{{"resnapshot_interval_days", "-1"}}, {"resnapshot_interval_days", "0 or more"}},
          {{{"resnapshot_interval_days", "week"}}, {"resnapshot_interval_days", "'week'"}},
          {{{"resnapshot_interval_days", "nan"}}, {"resnapshot_interval_days", "0 or more"}},
          {{{"trigger", "often"}}, {"trigger", "'often'"}},
          {{{"snapshot", "chunked"}}, {"chunked", "needs facts_table"}},
          {{{"snapshot", "chunked"}, {"facts_table", "f"}, {"snapshot_on_switch", "true"}},
           {"snapshot_on_switch", "chunked"}},
          {{{"on_data_loss", "resnapshot"}}, {"resnapshot", "needs facts_table"}},
          {{{"startingLsn", "latest"}}, {"unknown to_delta parameter 'startingLsn'", "app_id"}},
      };
  for (const auto& [extra, expected] : cases) {
    std::string message = ConfigErrorOf([&] { parse(extra); });
    for (const auto& part : expected) {
      EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
    }
  }
  // Local and Volume paths (and a Windows drive) are fine for resnapshot.
  for (const char* checkpoint : {"/Volumes/main/ops/chk", "/tmp/chk", "C:\\chk", "/dbfsx/chk"}) {
    EXPECT_NO_THROW(parse({{"on_data_loss", "resnapshot"},
                           {"facts_table", "f"},
                           {"checkpoint", checkpoint}}))
        << checkpoint;
  }
}

TEST(StreamParams, SparkModeKeepsAResnapshotCheckpointWhereSparkAndTheEngineAgree) {
  // A native stream's checkpoint may be in any store; Spark's pre-flight reads it as a path.
  SourceOptions source = ParseOdbc();
  StreamParams params = ValidParams();
  params.on_data_loss = OnDataLoss::kResnapshot;
  params.facts_table = "ops.facts";
  for (const char* checkpoint : {"s3://b/chk", "abfss://c@a.dfs.core.windows.net/chk", "dbfs:/chk",
                                 "/dbfs/chk"}) {
    params.checkpoint = checkpoint;
    EXPECT_NO_THROW(ValidateStreamConfig(source, params)) << checkpoint;
    std::string message = ConfigErrorOf([&] { ValidateSparkStreamConfig(source, params); });
    EXPECT_NE(message.find("local or Volume checkpoint path"), std::string::npos) << message;
    EXPECT_NE(message.find(checkpoint), std::string::npos) << message;
  }
  params.checkpoint = "/Volumes/main/ops/chk";
  EXPECT_NO_THROW(ValidateSparkStreamConfig(source, params));
}

TEST(StreamParams, ValidatedTogetherWithSourceOptions) {
  SourceOptions source = ParseOdbc();
  EXPECT_NO_THROW(ValidateStreamConfig(source, ValidParams()));

  StreamParams bootstrap = ValidParams();
  bootstrap.bootstrap = true;
  EXPECT_NO_THROW(ValidateStreamConfig(source, bootstrap));
  // Any startingLsn given, even the default's value, conflicts with bootstrap.
  for (const char* start : {"earliest", "latest", "0x0000002A000001000001"}) {
    std::string message = ConfigErrorOf(
        [&] { ValidateStreamConfig(ParseOdbc({{"startingLsn", start}}), bootstrap); });
    EXPECT_NE(message.find("bootstrap=True cannot be combined with startingLsn"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(start), std::string::npos) << message;
  }

  StreamParams resnapshot = ValidParams();
  resnapshot.on_data_loss = OnDataLoss::kResnapshot;
  resnapshot.facts_table = "ops.facts";
  EXPECT_NO_THROW(ValidateStreamConfig(source, resnapshot));
  std::string message = ConfigErrorOf(
      [&] { ValidateStreamConfig(ParseOdbc({{"failOnDataLoss", "false"}}), resnapshot); });
  EXPECT_NE(message.find("resnapshot"), std::string::npos) << message;
  EXPECT_NE(message.find("failOnDataLoss=false"), std::string::npos) << message;

  StreamParams on_switch = ValidParams();
  on_switch.snapshot_on_switch = true;
  on_switch.checkpoint = "abfss://c@a.dfs.core.windows.net/chk";
  message = ConfigErrorOf([&] { ValidateStreamConfig(source, on_switch); });
  EXPECT_NE(message.find("needs the metricsPath option"), std::string::npos) << message;
  EXPECT_NO_THROW(
      ValidateStreamConfig(ParseOdbc({{"metricsPath", "abfss://c@a.dfs.core.windows.net/m"}}),
                           on_switch));

  StreamParams no_target = ValidParams();
  no_target.target.clear();
  EXPECT_THROW(ValidateStreamConfig(source, no_target), ConfigError);
}

TEST(StreamParams, LiteralsAreExact) {
  EXPECT_EQ(ParseOnDataLoss("fail"), OnDataLoss::kFail);
  EXPECT_EQ(ParseOnDataLoss("resnapshot"), OnDataLoss::kResnapshot);
  EXPECT_EQ(ParseSnapshotMode("full"), SnapshotMode::kFull);
  EXPECT_EQ(ParseSnapshotMode("chunked"), SnapshotMode::kChunked);
  EXPECT_THROW(ParseSnapshotMode("Full"), ConfigError);
  EXPECT_EQ(OnDataLossName(OnDataLoss::kResnapshot), "resnapshot");
  EXPECT_EQ(SnapshotModeName(SnapshotMode::kChunked), "chunked");
}

}  // namespace
}  // namespace mssql_cdc
