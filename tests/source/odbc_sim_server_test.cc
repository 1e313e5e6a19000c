// The odbc backend against a real TDS server: the engine of `mssql-cdc sim serve` (TdsServer
// with the sim handler factory) on a local port, reached through unixODBC and FreeTDS. Every
// Source answer is compared with the sim backend's answer for the same database file, and
// the failures a user meets (wrong password, missing grant, bad names, a dropped connection)
// are provoked for real.
#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/source_options.h"
#include "core/timezone.h"
#include "read_helpers.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "sim_server/sim_handler_factory.h"
#include "core/arrow_status.h"
#include "source/odbc/odbc_source.h"
#include "source/sim/sim_source.h"
#include "tds/server.h"
#include "tests/testing/served_sim.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Drain;
using testing::TempDir;

constexpr char kOwner[] = "owner";
// Braces and a semicolon: the password travels braced with `}` doubled.
constexpr char kOwnerPassword[] = "own}er;pw{1";
constexpr char kNobody[] = "nobody";
constexpr char kNobodyPassword[] = "nobody-pw";
constexpr char kReader[] = "reader";  // SELECT on cdc.dbo_all_types_CT only
constexpr char kReaderPassword[] = "reader-pw";

const sim::TableName kAllTypes = sim::ParseTableName("dbo.all_types");
const sim::TableName kEvents = sim::ParseTableName("sales.events");
constexpr char kAllTypesInstance[] = "dbo_all_types";
constexpr char kSecondInstance[] = "all_types_v2";
constexpr char kEventsInstance[] = "sales_events";
constexpr int kEventRows = 60'000;

// Every type of the engine's mapping; c_dropped is dropped after CDC is enabled.
const std::vector<const char*> kAllTypesColumns = {
    "id int not null",      "c_bit bit",           "c_tinyint tinyint",
    "c_smallint smallint",  "c_int int",           "c_bigint bigint",
    "c_real real",          "c_float float",       "c_float24 float(24)",
    "c_dec decimal(38,10)", "c_numeric numeric(5,2)", "c_money money",
    "c_smallmoney smallmoney", "c_date date",      "c_time time(7)",
    "c_time3 time(3)",      "c_datetime datetime", "c_datetime2 datetime2(7)",
    "c_datetime2_0 datetime2(0)", "c_smalldatetime smalldatetime",
    "c_dto datetimeoffset(7)", "c_char char(3)",   "c_varchar varchar(10)",
    "c_varchar_max varchar(max)", "c_nchar nchar(5)", "c_nvarchar nvarchar(50)",
    "c_nvarchar_max nvarchar(max)", "c_text text", "c_ntext ntext",
    "c_xml xml",            "c_guid uniqueidentifier", "c_binary binary(4)",
    "c_varbinary varbinary(16)", "c_varbinary_max varbinary(max)", "c_image image",
    "c_rowversion rowversion", "c_dropped int",
};

std::string Repeat(const std::string& piece, std::size_t bytes) {
  std::string out;
  while (out.size() < bytes) out += piece;
  return out;
}

sim::Row FullRow(int id) {
  std::string binary_max;
  for (int i = 0; i < (1 << 20); ++i) binary_max.push_back(static_cast<char>((i * 7 + id) & 0xFF));
  return {{"id", id},
          {"c_bit", 1},
          {"c_tinyint", 255},
          {"c_smallint", -32768},
          {"c_int", std::int64_t{-2147483648LL}},
          {"c_bigint", std::int64_t{9223372036854775807LL}},
          {"c_real", 1.5},
          {"c_float", -2.25e300},
          {"c_float24", 0.5},
          {"c_dec", "9999999999999999999999999999.9999999999"},
          {"c_numeric", "-123.40"},
          {"c_money", "922337203685477.5807"},
          {"c_smallmoney", "-214748.3648"},
          {"c_date", "0001-01-01"},
          {"c_time", "23:59:59.9999999"},
          {"c_time3", "12:34:56.789"},
          {"c_datetime", "2024-02-29 23:59:59.997"},
          {"c_datetime2", "9999-12-31 23:59:59.9999999"},
          {"c_datetime2_0", "2000-01-01 00:00:01"},
          {"c_smalldatetime", "2000-06-15 12:30:00"},
          {"c_dto", "2024-03-10 08:30:00.1234567 +05:30"},
          {"c_char", "ab"},
          {"c_varchar", "plain"},
          {"c_varchar_max", Repeat("varchar max value; ", 70'000)},
          {"c_nchar", "ü"},
          {"c_nvarchar", "Grüße, 世界 🚀"},
          {"c_nvarchar_max", Repeat("Grüße 世界 🚀 nvarchar(max) ", 1 << 20)},
          {"c_text", "old text"},
          {"c_ntext", "old ntext ü"},
          {"c_xml", "<a b=\"1\"/>"},
          {"c_guid", "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
          {"c_binary", sim::Bytes{std::string("\x00\x01\xFE\xFF", 4)}},
          {"c_varbinary", sim::Bytes{std::string("\x7F\x00\x80", 3)}},
          {"c_varbinary_max", sim::Bytes{binary_max}},
          {"c_image", sim::Bytes{std::string("\x01\x02", 2)}},
          {"c_dropped", 7}};
}

sim::Row OtherRow(int id) {
  return {{"id", id},
          {"c_bit", 0},
          {"c_tinyint", 0},
          {"c_smallint", 32767},
          {"c_int", 2147483647},
          {"c_bigint", std::int64_t{-9223372036854775807LL - 1}},
          {"c_real", -0.25},
          {"c_float", 1e-300},
          {"c_float24", -3.5},
          {"c_dec", "-0.0000000001"},
          {"c_numeric", "999.99"},
          {"c_money", "-922337203685477.5808"},
          {"c_smallmoney", "214748.3647"},
          {"c_date", "9999-12-31"},
          {"c_time", "00:00:00"},
          {"c_time3", "00:00:00.001"},
          {"c_datetime", "1970-01-01 00:00:00.003"},
          {"c_datetime2", "0001-01-01 00:00:00"},
          {"c_datetime2_0", "1970-01-01 00:00:01"},
          {"c_smalldatetime", "2079-06-06 23:59:00"},
          {"c_dto", "2024-12-31 22:00:00.5 -03:00"},
          {"c_char", ""},
          {"c_varchar", ""},
          {"c_varchar_max", ""},
          {"c_nchar", "abcde"},
          {"c_nvarchar", ""},
          {"c_nvarchar_max", ""},
          {"c_text", ""},
          {"c_ntext", ""},
          {"c_xml", "<r/>"},
          {"c_guid", "00000000-0000-0000-0000-000000000000"},
          {"c_binary", sim::Bytes{std::string(4, '\0')}},
          {"c_varbinary", sim::Bytes{std::string()}},
          {"c_varbinary_max", sim::Bytes{std::string()}},
          {"c_image", sim::Bytes{std::string()}},
          {"c_dropped", 8}};
}

// The shared database: built once, read by every test through its own server.
class OdbcSimServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    path_ = dir_->File("cdc.db");
    sim::CreateOptions options;
    options.database_name = "cdcdb";
    options.time_zone = "Pacific Standard Time";
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-03-01 10:00:00")};
    auto db = sim::SimDatabase::Create(path_, options);

    sim::TableDef all_types;
    all_types.name = kAllTypes;
    for (const char* c : kAllTypesColumns) all_types.columns.push_back(sim::ParseColumnDeclaration(c));
    all_types.primary_key = {"id"};
    db->CreateTable(all_types);
    db->EnableCdc(kAllTypes);

    sim::TableDef events;
    events.name = kEvents;
    for (const char* c : {"id int not null", "region nvarchar(20) not null", "payload nvarchar(100)",
                          "amount decimal(18,2)", "at datetime2(3)"}) {
      events.columns.push_back(sim::ParseColumnDeclaration(c));
    }
    events.primary_key = {"region", "id"};
    db->CreateTable(events);
    db->EnableCdc(kEvents);

    db->AdvanceClock(60'000'000);
    auto first = db->Begin();
    first->Insert(kAllTypes, FullRow(1));
    first->Insert(kAllTypes, {{"id", 2}});  // every other column NULL
    first->Insert(kAllTypes, OtherRow(3));
    first->Commit();

    db->AdvanceClock(60'000'000);
    sim::EnableCdcOptions second;
    second.capture_instance = kSecondInstance;
    second.captured_columns = {"id", "c_nvarchar", "c_dec", "c_dropped"};
    db->EnableCdc(kAllTypes, second);

    db->AdvanceClock(60'000'000);
    auto update = db->Begin();
    update->Update(kAllTypes, {{"id", 1}}, {{"c_nvarchar", "changed"}, {"c_dec", "1.5"}});
    update->Delete(kAllTypes, {{"id", 3}});
    update->Commit();

    db->AdvanceClock(60'000'000);
    db->DropColumn(kAllTypes, "c_dropped");
    db->WriteIdleEntry();

    // Many small commits of many rows: the table the long reads and the resume use.
    for (int commit = 0; commit < 20; ++commit) {
      db->AdvanceClock(1'000'000);
      auto t = db->Begin();
      std::vector<sim::Row> rows;
      for (int i = 0; i < kEventRows / 20; ++i) {
        const int id = commit * (kEventRows / 20) + i;
        rows.push_back({{"id", id},
                        {"region", i % 3 == 0 ? "north" : "south"},
                        {"payload", "event payload number " + std::to_string(id) + " ü"},
                        {"amount", std::to_string(id % 1000) + ".25"},
                        {"at", "2026-03-01 10:00:00.123"}});
      }
      t->InsertMany(kEvents, std::move(rows));
      t->Commit();
    }

    db->AddLogin(kOwner, kOwnerPassword, true);
    db->AddLogin(kNobody, kNobodyPassword, false);
    db->AddLogin(kReader, kReaderPassword, false);
    db->Grant(kReader, "cdc.dbo_all_types_CT");
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override { StartServer(0); }

  void StartServer(int port) {
    tds::ServerOptions options;
    options.port = port;
    server_ = std::make_unique<tds::TdsServer>(std::make_shared<sim_server::SimHandlerFactory>(path_),
                                               options);
  }

  static std::string ConnectionString(int port) {
    return testing::DriverKeyword() + "Server=127.0.0.1," + std::to_string(port) + ";Database=cdcdb;Encrypt=no";
  }

  SourceOptions OdbcOptions(const std::string& user = kOwner,
                            const std::string& password = kOwnerPassword) const {
    SourceOptions options;
    options.connection_string = ConnectionString(server_->port());
    options.user = user;
    options.password = password;
    options.connect_timeout_seconds = 10;
    // tds rather than auto: a reader that gave way to the driver would fail here, not pass.
    options.change_reader = testing::ChangeReaderUnderTest() == "driver" ? ChangeReaderChoice::kDriver
                                                                          : ChangeReaderChoice::kTds;
    return options;
  }

  static odbc::RetryPolicy FastRetries() {
    odbc::RetryPolicy retry;
    retry.base_delay = std::chrono::milliseconds(20);
    return retry;
  }

  std::unique_ptr<Source> Odbc() const { return odbc::OpenOdbcSource(OdbcOptions(), FastRetries()); }
  static std::unique_ptr<Source> Sim() { return OpenSimSource(path_); }

  static TempDir* dir_;
  static std::string path_;
  std::unique_ptr<tds::TdsServer> server_;
};

TempDir* OdbcSimServerTest::dir_ = nullptr;
std::string OdbcSimServerTest::path_;

std::string Shorten(std::string text) {
  if (text.size() > 3000) text = text.substr(0, 3000) + "...";
  return text;
}

// Batch by batch, column by column, naming the first difference.
void ExpectSameBatches(const std::vector<std::shared_ptr<arrow::RecordBatch>>& expected,
                       const std::vector<std::shared_ptr<arrow::RecordBatch>>& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t b = 0; b < expected.size(); ++b) {
    ASSERT_TRUE(actual[b]->ValidateFull().ok()) << actual[b]->ValidateFull().ToString();
    ASSERT_TRUE(actual[b]->schema()->Equals(*expected[b]->schema()))
        << actual[b]->schema()->ToString() << "\nvs\n" << expected[b]->schema()->ToString();
    ASSERT_EQ(actual[b]->num_rows(), expected[b]->num_rows()) << "batch " << b;
    for (int c = 0; c < expected[b]->num_columns(); ++c) {
      EXPECT_TRUE(actual[b]->column(c)->Equals(*expected[b]->column(c)))
          << "batch " << b << " column " << expected[b]->schema()->field(c)->name() << ":\n"
          << Shorten(expected[b]->column(c)->Diff(*actual[b]->column(c)));
    }
    EXPECT_TRUE(actual[b]->Equals(*expected[b])) << "batch " << b;
  }
}

void ExpectSameInstances(const std::vector<CaptureInstanceInfo>& expected,
                         const std::vector<CaptureInstanceInfo>& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].name, expected[i].name);
    EXPECT_EQ(actual[i].source_schema, expected[i].source_schema);
    EXPECT_EQ(actual[i].source_table, expected[i].source_table);
    EXPECT_EQ(actual[i].start_lsn, expected[i].start_lsn) << expected[i].name;
    EXPECT_EQ(actual[i].create_date, expected[i].create_date) << expected[i].name;
    EXPECT_EQ(actual[i].index_columns, expected[i].index_columns) << expected[i].name;
  }
}

void ExpectSameColumns(const std::vector<CapturedColumn>& expected,
                       const std::vector<CapturedColumn>& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].name, expected[i].name);
    EXPECT_EQ(actual[i].column_ordinal, expected[i].column_ordinal) << expected[i].name;
    EXPECT_EQ(actual[i].column_id, expected[i].column_id) << expected[i].name;
    EXPECT_EQ(actual[i].type, expected[i].type)
        << expected[i].name << ": " << actual[i].type.ToString() << " vs " << expected[i].type.ToString();
  }
}

TEST_F(OdbcSimServerTest, CatalogAnswersAreTheSimBackends) {
  auto odbc = Odbc();
  auto sim = Sim();
  const auto instances = sim->ListCaptureInstances();
  ASSERT_EQ(instances.size(), 3u);
  ExpectSameInstances(instances, odbc->ListCaptureInstances());
  for (const auto& instance : instances) {
    SCOPED_TRACE(instance.name);
    ExpectSameColumns(sim->CapturedColumns(instance.name), odbc->CapturedColumns(instance.name));
    const auto ddl = sim->DdlHistory(instance.name);
    const auto odbc_ddl = odbc->DdlHistory(instance.name);
    ASSERT_EQ(odbc_ddl.size(), ddl.size());
    for (std::size_t i = 0; i < ddl.size(); ++i) {
      EXPECT_EQ(odbc_ddl[i].ddl_lsn, ddl[i].ddl_lsn);
      EXPECT_EQ(odbc_ddl[i].ddl_command, ddl[i].ddl_command);
      EXPECT_EQ(odbc_ddl[i].ddl_time, ddl[i].ddl_time);
    }
    EXPECT_EQ(odbc->MinLsn(instance.name), sim->MinLsn(instance.name));
  }
  EXPECT_FALSE(sim->DdlHistory(kAllTypesInstance).empty());
  // One table's instances, as every batch planning lists them, names matched ignoring case.
  const auto of_table = sim->ListTableInstances("DBO", "All_Types");
  ASSERT_EQ(of_table.size(), 2u);
  ExpectSameInstances(of_table, odbc->ListTableInstances("DBO", "All_Types"));
  EXPECT_TRUE(odbc->ListTableInstances("dbo", "no_such_table").empty());
  // Names resolve as SQL Server compares them: ignoring case.
  EXPECT_EQ(odbc->ResolveCaptureInstance("DBO_ALL_TYPES").name, kAllTypesInstance);
  ExpectSameColumns(sim->CapturedColumns("Dbo_All_Types"), odbc->CapturedColumns("Dbo_All_Types"));
  EXPECT_EQ(odbc->MinLsn("no_such_instance"), Lsn());
  EXPECT_EQ(odbc->ServerTimeZone(), "Pacific Standard Time");
}

TEST_F(OdbcSimServerTest, LsnAndCommitAnswersAreTheSimBackends) {
  auto odbc = Odbc();
  auto sim = Sim();
  const auto max = sim->MaxLsn();
  ASSERT_TRUE(max);
  EXPECT_EQ(odbc->MaxLsn(), max);
  const Lsn min = sim->MinLsn(kAllTypesInstance);
  for (std::int64_t n : {1, 2, 3, 5, 1000}) {
    EXPECT_EQ(odbc->NthCommitAfter(min, n), sim->NthCommitAfter(min, n)) << n;
    EXPECT_EQ(odbc->NthCommitAfter(Lsn(), n), sim->NthCommitAfter(Lsn(), n)) << n;
  }
  EXPECT_EQ(odbc->NthCommitAfter(*max, 1), std::nullopt);
  EXPECT_THROW(odbc->NthCommitAfter(min, 0), ConfigError);
  for (const Lsn& lsn : {min, *max, max->Decrement(), Lsn(), min.Increment()}) {
    EXPECT_EQ(odbc->CommitTime(lsn), sim->CommitTime(lsn)) << lsn.ToString();
    EXPECT_EQ(odbc->CommitTimeAtOrBefore(lsn), sim->CommitTimeAtOrBefore(lsn)) << lsn.ToString();
  }
  for (int tiles : {1, 3, 7}) {
    for (const char* instance : {kAllTypesInstance, kEventsInstance}) {
      const auto expected = sim->SplitPoints(instance, Lsn(), *max, tiles);
      const auto actual = odbc->SplitPoints(instance, Lsn(), *max, tiles);
      ASSERT_EQ(actual.size(), expected.size()) << instance << " " << tiles;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(actual[i].bound, expected[i].bound);
        EXPECT_EQ(actual[i].next, expected[i].next);
        EXPECT_EQ(actual[i].rows, expected[i].rows);
      }
    }
  }
  EXPECT_TRUE(odbc->SplitPoints(kAllTypesInstance, max->Increment(), max->Increment(), 2).empty());
}

TEST_F(OdbcSimServerTest, ChangeReadsOfEveryTypeAreTheSimBackends) {
  auto odbc = Odbc();
  auto sim = Sim();
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");
  const auto max = *sim->MaxLsn();
  std::vector<ChangeReadRequest> requests;
  for (std::int64_t batch_rows : {1, 2, 10'000}) {
    ChangeReadRequest request;
    request.capture_instance = kAllTypesInstance;
    request.from = Lsn();
    request.to = max;
    request.batch_rows = batch_rows;
    requests.push_back(request);
  }
  ChangeReadRequest subset = requests.back();
  subset.columns = {"C_NVARCHAR_MAX", "c_int", "c_varbinary_max", "c_guid"};  // any order, any case
  subset.include_command_id = false;
  requests.push_back(subset);
  ChangeReadRequest second = requests.back();
  second.capture_instance = kSecondInstance;
  second.columns = {};
  requests.push_back(second);
  for (const auto& request : requests) {
    SCOPED_TRACE(request.capture_instance + " batch_rows " + std::to_string(request.batch_rows));
    auto expected = Drain(*sim->ReadChanges(request, clock));
    auto actual = Drain(*odbc->ReadChanges(request, clock));
    ASSERT_FALSE(expected.empty());
    ExpectSameBatches(expected, actual);
  }
}

TEST_F(OdbcSimServerTest, LongReadsInBatchesAreTheSimBackends) {
  auto odbc = Odbc();
  auto sim = Sim();
  ChangeReadRequest request;
  request.capture_instance = kEventsInstance;
  request.from = Lsn();
  request.to = *sim->MaxLsn();
  request.batch_rows = 7'000;
  const SourceClock clock = SourceClock::Utc();
  auto expected = Drain(*sim->ReadChanges(request, clock));
  auto actual = Drain(*odbc->ReadChanges(request, clock));
  ASSERT_EQ(expected.size(), 9u);
  ExpectSameBatches(expected, actual);
}

TEST_F(OdbcSimServerTest, TimesMapToTheLastCommitAtOrBeforeThemAsTheSimBackendMaps) {
  auto sim = Sim();
  auto odbc = Odbc();
  std::vector<std::pair<LocalMicros, Lsn>> commits;
  for (auto lsn = sim->NthCommitAfter(Lsn(), 1); lsn; lsn = sim->NthCommitAfter(*lsn, 1)) {
    commits.emplace_back(*sim->CommitTime(*lsn), *lsn);
  }
  ASSERT_GT(commits.size(), 3u);
  const LocalMicros first = commits.front().first;
  EXPECT_EQ(odbc->LastCommitAtOrBefore(LocalMicros{first.value - 1'000'000}), std::nullopt);
  EXPECT_EQ(sim->LastCommitAtOrBefore(LocalMicros{first.value - 1'000'000}), std::nullopt);
  for (const auto& [time, lsn] : commits) {
    const auto at = odbc->LastCommitAtOrBefore(time);
    ASSERT_TRUE(at);
    EXPECT_EQ(*at, *sim->LastCommitAtOrBefore(time));
    EXPECT_GE(*at, lsn);  // the last one of that time, which may be a later commit
    EXPECT_EQ(*sim->CommitTime(*at), time);
    EXPECT_EQ(odbc->LastCommitAtOrBefore(LocalMicros{time.value + 500'000}), at);
  }
  EXPECT_EQ(odbc->LastCommitAtOrBefore(LocalMicros{commits.back().first.value + 3'600'000'000LL}),
            sim->MaxLsn());
}

TEST_F(OdbcSimServerTest, SnapshotReadsAreTheSimBackends) {
  auto sim = Sim();
  SnapshotReadRequest request;
  request.capture_instance = "DBO_ALL_TYPES";  // stamped as given
  request.snapshot_lsn = *sim->MaxLsn();
  request.snapshot_commit_ts = UtcMicros{1'700'000'000'000'000};
  request.batch_rows = 1;
  SourceOptions options = OdbcOptions();
  options.lock_timeout_ms = 1500;
  options.isolation_level = IsolationLevel::kSnapshot;
  auto odbc = odbc::OpenOdbcSource(options, FastRetries());
  ExpectSameBatches(Drain(*sim->ReadSnapshot(request)), Drain(*odbc->ReadSnapshot(request)));

  auto plain = Odbc();
  request.capture_instance = kEventsInstance;
  request.batch_rows = 25'000;
  ExpectSameBatches(Drain(*sim->ReadSnapshot(request)), Drain(*plain->ReadSnapshot(request)));
  request.columns = {"payload", "id"};
  request.key_columns = {"id"};
  ExpectSameBatches(Drain(*sim->ReadSnapshot(request)), Drain(*plain->ReadSnapshot(request)));

  // Ranges: a one-column key in key order, a composite one (the index's) in pieces.
  request.lo = 5;
  request.hi = 40;
  ExpectSameBatches(Drain(*sim->ReadSnapshot(request)), Drain(*plain->ReadSnapshot(request)));
  request.key_columns = {};
  request.lo = nlohmann::json::array({"north", 10});
  request.hi = nlohmann::json::array({"south", 30});
  const auto from_sim = Drain(*sim->ReadSnapshot(request));
  const auto from_odbc = Drain(*plain->ReadSnapshot(request));
  std::int64_t sim_rows = 0, odbc_rows = 0;
  for (const auto& batch : from_sim) sim_rows += batch->num_rows();
  for (const auto& batch : from_odbc) odbc_rows += batch->num_rows();
  EXPECT_GT(sim_rows, 0);
  EXPECT_EQ(odbc_rows, sim_rows);  // pieces of a composite range come in no promised order
}

TEST_F(OdbcSimServerTest, TheSourceAnswersWhileAReaderIsOpen) {
  auto odbc = Odbc();
  ChangeReadRequest request;
  request.capture_instance = kEventsInstance;
  request.to = *odbc->MaxLsn();
  request.batch_rows = 1'000;
  auto reader = odbc->ReadChanges(request, SourceClock::Utc());
  std::shared_ptr<arrow::RecordBatch> batch;
  ThrowIfError(reader->ReadNext(&batch));
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(odbc->MaxLsn(), request.to);
  EXPECT_EQ(odbc->ListCaptureInstances().size(), 3u);
  odbc.reset();  // the reader outlives its Source
  std::int64_t rows = batch->num_rows();
  while (true) {
    ThrowIfError(reader->ReadNext(&batch));
    if (batch == nullptr) break;
    rows += batch->num_rows();
  }
  EXPECT_EQ(rows, kEventRows);
}

TEST_F(OdbcSimServerTest, WrongPasswordIsAPermissionErrorWithoutThePassword) {
  try {
    odbc::OpenOdbcSource(OdbcOptions(kOwner, "not-the-pw-42"), FastRetries());
    FAIL() << "logged in with a wrong password";
  } catch (const PermissionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("login failed for user 'owner': check user and password"));
    EXPECT_THAT(e.what(), Not(HasSubstr("not-the-pw-42")));
  }
  try {
    odbc::OpenOdbcSource(OdbcOptions("ghost", "ghost-password"), FastRetries());
    FAIL() << "logged in as an unknown login";
  } catch (const PermissionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'ghost'"));
    EXPECT_THAT(e.what(), Not(HasSubstr("ghost-password")));
  }
}

TEST_F(OdbcSimServerTest, AConnectionThatRequiresEncryptionIsToldTheServerHasNone) {
  // sim serve answers PRELOGIN with ENCRYPT_NOT_SUP, as a server without TLS does.
  SourceOptions options = OdbcOptions();
  const auto at = options.connection_string.find("Encrypt=no");
  ASSERT_NE(at, std::string::npos);
  options.connection_string.replace(at, 10, "Encrypt=yes");
  options.change_reader = ChangeReaderChoice::kAuto;  // the driver's connection, encrypted
  try {
    odbc::OpenOdbcSource(options, FastRetries());
    FAIL() << "connected with Encrypt=yes to a server without encryption";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the connection requires encryption (Encrypt=yes) and the "
                                    "server does not offer it"));
    EXPECT_THAT(e.what(), HasSubstr("set Encrypt=no in connectionString"));
    EXPECT_THAT(e.what(), Not(HasSubstr("attempts")));  // not retried
    EXPECT_THAT(e.what(), Not(HasSubstr(kOwnerPassword)));
  }
}

// A keyword only the driver reads (here MultiSubnetFailover) keeps the change reads with it.
TEST_F(OdbcSimServerTest, ChangeReaderTdsWhereTheReaderCannotReadIsRefusedAtStart) {
  SourceOptions options = OdbcOptions();
  options.connection_string += ";MultiSubnetFailover=yes";
  options.change_reader = ChangeReaderChoice::kTds;
  try {
    odbc::OpenOdbcSource(options, FastRetries());
    FAIL() << "changeReader=tds accepted a connection the reader cannot make";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("changeReader"));
    EXPECT_THAT(e.what(), HasSubstr("sets MultiSubnetFailover, which only the driver reads"));
    EXPECT_THAT(e.what(), Not(HasSubstr(kOwnerPassword)));
  }
}

TEST_F(OdbcSimServerTest, ALoginWithoutTheGrantIsToldWhichGrantItNeeds) {
  auto nobody = odbc::OpenOdbcSource(OdbcOptions(kNobody, kNobodyPassword), FastRetries());
  // The catalog lists only what a login may read, as SQL Server's does.
  EXPECT_TRUE(nobody->ListCaptureInstances().empty());
  EXPECT_EQ(nobody->MinLsn(kAllTypesInstance), Lsn());
  ChangeReadRequest request;
  request.capture_instance = kAllTypesInstance;
  request.to = *nobody->MaxLsn();
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (attempt == 0) {
        nobody->ReadChanges(request, SourceClock::Utc());
      } else {
        nobody->SplitPoints(kAllTypesInstance, Lsn(), request.to, 2);
      }
      FAIL() << "read a change table without a grant";
    } catch (const PermissionError& e) {
      EXPECT_THAT(e.what(), HasSubstr("GRANT SELECT ON cdc.[dbo_all_types_CT] TO [nobody];"));
      EXPECT_THAT(e.what(), Not(HasSubstr(kNobodyPassword)));
    }
  }
  // An instance that does not exist at all stays a NotFoundError.
  EXPECT_THROW(nobody->CapturedColumns("no_such_instance"), NotFoundError);
}

TEST_F(OdbcSimServerTest, AGrantOnTheChangeTableReadsChangesButNotTheTable) {
  auto reader = odbc::OpenOdbcSource(OdbcOptions(kReader, kReaderPassword), FastRetries());
  auto sim = Sim();
  ChangeReadRequest request;
  request.capture_instance = kAllTypesInstance;
  request.to = *sim->MaxLsn();
  ExpectSameBatches(Drain(*sim->ReadChanges(request, SourceClock::Utc())),
                    Drain(*reader->ReadChanges(request, SourceClock::Utc())));
  SnapshotReadRequest snapshot;
  snapshot.capture_instance = kAllTypesInstance;
  snapshot.snapshot_lsn = request.to;
  try {
    reader->ReadSnapshot(snapshot);
    FAIL() << "no error";
  } catch (const PermissionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("GRANT SELECT ON [dbo].[all_types] TO [reader];"));
  }
}

TEST_F(OdbcSimServerTest, BadAndUnknownNamesAreRefusedBeforeAnySql) {
  auto odbc = Odbc();
  for (const char* name : {"dbo_[x]", "dbo_x]", "o'brien", "a\"b"}) {
    ChangeReadRequest request;
    request.capture_instance = name;
    EXPECT_THROW(odbc->ReadChanges(request, SourceClock::Utc()), ConfigError) << name;
    EXPECT_THROW(odbc->MinLsn(name), ConfigError) << name;
    EXPECT_THROW(odbc->CapturedColumns(name), ConfigError) << name;
  }
  EXPECT_THROW(odbc->CapturedColumns("no_such_instance"), NotFoundError);
  ChangeReadRequest request;
  request.capture_instance = kAllTypesInstance;
  request.columns = {"c_int", "not_captured"};
  EXPECT_THROW(odbc->ReadChanges(request, SourceClock::Utc()), ConfigError);
  request.columns = {};
  request.batch_rows = 0;
  EXPECT_THROW(odbc->ReadChanges(request, SourceClock::Utc()), ConfigError);
}

TEST_F(OdbcSimServerTest, AReadCutOffMidFetchResumesOnANewConnectionWithEveryRowOnce) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  spdlog::default_logger()->sinks().push_back(sink);

  auto sim = Sim();
  ChangeReadRequest request;
  request.capture_instance = kEventsInstance;
  request.to = *sim->MaxLsn();
  request.batch_rows = 2'000;
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");
  const auto expected = Drain(*sim->ReadChanges(request, clock));

  auto odbc = Odbc();
  auto reader = odbc->ReadChanges(request, clock);
  std::vector<std::shared_ptr<arrow::RecordBatch>> actual;
  std::shared_ptr<arrow::RecordBatch> batch;
  ThrowIfError(reader->ReadNext(&batch));
  ASSERT_NE(batch, nullptr);
  actual.push_back(batch);

  // The server goes away with the rest of the result unsent, and comes back on its port.
  const int port = server_->port();
  server_->Stop();
  server_.reset();
  StartServer(port);

  while (true) {
    ThrowIfError(reader->ReadNext(&batch));
    if (batch == nullptr) break;
    actual.push_back(batch);
  }
  spdlog::default_logger()->sinks().pop_back();
  ExpectSameBatches(expected, actual);
  EXPECT_THAT(log.str(), HasSubstr("[warning]"));
  EXPECT_THAT(log.str(), HasSubstr("failed with SQLSTATE "));
  EXPECT_THAT(log.str(), HasSubstr("retry 1 of 3 on a new connection"));
  EXPECT_THAT(log.str(), HasSubstr("resumed after "));
  EXPECT_THAT(log.str(), Not(HasSubstr(kOwnerPassword)));
}

TEST_F(OdbcSimServerTest, AServerThatStaysAwayEndsTheReadWithASourceError) {
  auto odbc = Odbc();
  ChangeReadRequest request;
  request.capture_instance = kEventsInstance;
  request.to = *odbc->MaxLsn();
  request.batch_rows = 1'000;
  auto reader = odbc->ReadChanges(request, SourceClock::Utc());
  std::shared_ptr<arrow::RecordBatch> batch;
  ThrowIfError(reader->ReadNext(&batch));
  server_->Stop();
  arrow::Status status;
  do {
    status = reader->ReadNext(&batch);
  } while (status.ok() && batch != nullptr);
  ASSERT_FALSE(status.ok());
  EXPECT_THROW(ThrowIfError(status), SourceError);
  EXPECT_THAT(status.message(), HasSubstr("after 4 attempts"));
}

TEST_F(OdbcSimServerTest, AServerWithoutTimeZoneIdAsksForTheOption) {
  // A copy of the database that says it is SQL Server 2019.
  const std::string copy = dir_->File("old_version.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, ("VACUUM INTO '" + copy + "'").c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE sim_meta SET value = '15' WHERE key = 'product_major_version'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  tds::TdsServer old_server(std::make_shared<sim_server::SimHandlerFactory>(copy), tds::ServerOptions{});
  SourceOptions options = OdbcOptions();
  options.connection_string = ConnectionString(old_server.port());
  auto odbc = odbc::OpenOdbcSource(options, FastRetries());
  try {
    odbc->ServerTimeZone();
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("set the sourceTimeZone option"));
  }
}

}  // namespace
}  // namespace mssql_cdc
