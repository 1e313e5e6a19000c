// The server through a real client: unixODBC with the FreeTDS driver (TDS 7.4), against an
// in-process TdsServer answering the canned statements of canned_handler.h.
#include <gtest/gtest.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "tds/server.h"
#include "tests/tds/canned_handler.h"
#include "tests/tds/odbc_client.h"
#include "tests/tds/raw_client.h"

namespace mssql_cdc::tds {
namespace {

using namespace testing;

class OdbcIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    factory_ = std::make_shared<CannedFactory>();
    ServerOptions options;
    options.idle_timeout_seconds = 60;
    server_ = std::make_unique<TdsServer>(factory_, options);
  }

  void Connect(OdbcConnection& connection) {
    std::vector<OdbcDiagnostic> diagnostics;
    ASSERT_TRUE(connection.Connect(ConnectionString(server_->port()), &diagnostics))
        << Describe(diagnostics);
  }

  // Waits until the server has `count` open connections at most.
  bool WaitForConnections(int count) {
    for (int i = 0; i < 200; ++i) {
      if (server_->connection_count() <= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }
  bool WaitForNoConnections() { return WaitForConnections(0); }

  std::shared_ptr<CannedFactory> factory_;
  std::unique_ptr<TdsServer> server_;
};

// Compares one fetched row with the cells the handler sent.
void ExpectRow(OdbcStatement& stmt, const CannedTable& table, std::size_t row) {
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const auto column = static_cast<SQLUSMALLINT>(i + 1);
    const Cell& cell = table.rows[row][i];
    const std::string where = "row " + std::to_string(row) + " column " + table.columns[i].name;
    switch (cell.kind) {
      case Cell::Kind::kNull:
        EXPECT_EQ(std::nullopt, stmt.Text(column)) << where;
        break;
      case Cell::Kind::kFloat: {
        auto value = stmt.Double(column);
        ASSERT_TRUE(value.has_value()) << where;
        double expected = table.columns[i].type.name == "real"
                              ? static_cast<double>(static_cast<float>(cell.float_value))
                              : cell.float_value;
        EXPECT_EQ(expected, *value) << where;
        break;
      }
      case Cell::Kind::kBinary: {
        auto value = stmt.Bytes(column);
        ASSERT_TRUE(value.has_value()) << where;
        EXPECT_EQ(cell.expected, *value) << where;
        break;
      }
      default: {
        auto value = stmt.Text(column);
        ASSERT_TRUE(value.has_value()) << where;
        if (cell.expected.size() > 200) {
          EXPECT_EQ(cell.expected.size(), value->size()) << where;
          EXPECT_TRUE(cell.expected == *value) << where << " differs";
        } else {
          EXPECT_EQ(cell.expected, *value) << where;
        }
      }
    }
  }
}

TEST_F(OdbcIntegration, EveryTypeRoundTripsIncludingNullsAndExtremes) {
  OdbcConnection connection;
  Connect(connection);
  OdbcStatement stmt(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT all_types"))) << stmt.Errors();
  const CannedTable table = AllTypesTable();
  SQLSMALLINT columns = 0;
  SQLNumResultCols(stmt.handle(), &columns);
  ASSERT_EQ(static_cast<SQLSMALLINT>(table.columns.size()), columns);
  // The column names and declared types as the driver describes them.
  SQLCHAR name[128];
  SQLSMALLINT name_length = 0, data_type = 0, decimals = 0, nullable = 0;
  SQLULEN size = 0;
  SQLDescribeCol(stmt.handle(), 8, name, sizeof(name), &name_length, &data_type, &size,
                 &decimals, &nullable);
  EXPECT_STREQ("c_decimal", reinterpret_cast<char*>(name));
  EXPECT_EQ(SQL_NUMERIC, data_type) << "FreeTDS describes decimal and numeric alike";
  EXPECT_EQ(38u, size);
  EXPECT_EQ(10, decimals);
  EXPECT_EQ(SQL_NULLABLE, nullable);
  // The server type behind each column, as the driver names it.
  const std::pair<SQLUSMALLINT, const char*> kTypeNames[] = {
      {8, "decimal"}, {9, "numeric"}, {10, "money"}, {16, "datetime"}, {20, "nchar"},
      {21, "nvarchar"}, {27, "binary"}, {28, "varbinary"}};
  for (const auto& [column, type_name] : kTypeNames) {
    SQLCHAR text[64] = {};
    SQLSMALLINT text_length = 0;
    SQLColAttribute(stmt.handle(), column, SQL_DESC_TYPE_NAME, text, sizeof(text), &text_length,
                    nullptr);
    EXPECT_STREQ(type_name, reinterpret_cast<char*>(text)) << "column " << column;
  }
  SQLDescribeCol(stmt.handle(), 27, name, sizeof(name), &name_length, &data_type, &size,
                 &decimals, &nullable);
  EXPECT_STREQ("c_binary", reinterpret_cast<char*>(name));
  EXPECT_EQ(SQL_BINARY, data_type);
  EXPECT_EQ(10u, size);
  SQLDescribeCol(stmt.handle(), 32, name, sizeof(name), &name_length, &data_type, &size,
                 &decimals, &nullable);
  EXPECT_EQ(SQL_GUID, data_type);

  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle())) << "row " << row << ": " << stmt.Errors();
    ExpectRow(stmt, table, row);
  }
  EXPECT_EQ(SQL_NO_DATA, SQLFetch(stmt.handle()));
  SQLLEN count = -1;
  SQLRowCount(stmt.handle(), &count);
  EXPECT_EQ(4, count);
}

TEST_F(OdbcIntegration, MegabyteValuesAndAFullNvarchar4000) {
  OdbcConnection connection;
  Connect(connection);
  OdbcStatement stmt(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT big"))) << stmt.Errors();
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle())) << stmt.Errors();
  auto text = stmt.Text(1);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(CannedHandler::BigText().size(), text->size());
  EXPECT_TRUE(CannedHandler::BigText() == *text);
  auto bytes = stmt.Bytes(2);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_TRUE(CannedHandler::BigBytes() == *bytes);
  EXPECT_EQ(std::string(4000, 'z'), stmt.Text(3).value_or(""));
}

TEST_F(OdbcIntegration, TwoResultSetsOfOneBatch) {
  OdbcConnection connection;
  Connect(connection);
  OdbcStatement stmt(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT two_results"))) << stmt.Errors();
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle()));
  EXPECT_EQ(1, stmt.BigInt(1));
  EXPECT_EQ(SQL_NO_DATA, SQLFetch(stmt.handle()));
  ASSERT_EQ(SQL_SUCCESS, SQLMoreResults(stmt.handle()));
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle()));
  EXPECT_EQ("two", stmt.Text(1));
  EXPECT_EQ(SQL_NO_DATA, SQLFetch(stmt.handle()));
  EXPECT_EQ(SQL_NO_DATA, SQLMoreResults(stmt.handle()));
  // The connection is in step: the next statement gets its own answer.
  OdbcStatement next(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(next.ExecDirect("SELECT echo"))) << next.Errors();
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(next.handle()));
  EXPECT_EQ(0, next.BigInt(1));
}

TEST_F(OdbcIntegration, ParametersOfSpExecuteSql) {
  OdbcConnection connection;
  Connect(connection);
  OdbcStatement stmt(connection);
  std::uint8_t lsn[10] = {0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x01, 0xF0, 0x00, 0x03};
  SQLLEN lsn_length = sizeof(lsn);
  ASSERT_TRUE(SQL_SUCCEEDED(SQLBindParameter(stmt.handle(), 1, SQL_PARAM_INPUT, SQL_C_BINARY,
                                             SQL_BINARY, 10, 0, lsn, sizeof(lsn), &lsn_length)));
  const std::u16string name = u"dbo_ord\u00e9rs";
  SQLLEN name_length = static_cast<SQLLEN>(name.size() * 2);
  ASSERT_TRUE(SQL_SUCCEEDED(SQLBindParameter(
      stmt.handle(), 2, SQL_PARAM_INPUT, SQL_C_WCHAR, SQL_WVARCHAR, 4000, 0,
      const_cast<char16_t*>(name.data()), name_length, &name_length)));
  std::int64_t count = 50000;
  SQLLEN count_length = 0;
  ASSERT_TRUE(SQL_SUCCEEDED(SQLBindParameter(stmt.handle(), 3, SQL_PARAM_INPUT, SQL_C_SBIGINT,
                                             SQL_BIGINT, 0, 0, &count, 0, &count_length)));
  ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT echo ?, ?, ?"))) << stmt.Errors();
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle())) << stmt.Errors();
  EXPECT_EQ(std::string(reinterpret_cast<char*>(lsn), 10), stmt.Bytes(1));
  EXPECT_EQ("dbo_ord\xC3\xA9rs", stmt.Text(2));
  EXPECT_EQ(50000, stmt.BigInt(3));

  auto statements = factory_->state.Statements();
  ASSERT_FALSE(statements.empty());
  const Statement& seen = statements.back();
  EXPECT_TRUE(seen.is_rpc);
  EXPECT_EQ("SELECT echo @P1, @P2, @P3", seen.sql);
  ASSERT_EQ(3u, seen.params.size());
  EXPECT_EQ(ParamValue::Kind::kBinary, seen.params[0].kind);
  EXPECT_EQ("binary(10)", seen.params[0].type.ToString());
  EXPECT_EQ(ParamValue::Kind::kText, seen.params[1].kind);
  EXPECT_EQ("nvarchar", seen.params[1].type.name);
  EXPECT_EQ(ParamValue::Kind::kInt, seen.params[2].kind);
  EXPECT_EQ("bigint", seen.params[2].type.name);
}

TEST_F(OdbcIntegration, PrepareExecuteThriceAndFree) {
  OdbcConnection connection;
  Connect(connection);
  {
    OdbcStatement stmt(connection);
    const std::string sql = "SELECT echo ?";
    ASSERT_TRUE(SQL_SUCCEEDED(SQLPrepare(
        stmt.handle(), reinterpret_cast<SQLCHAR*>(const_cast<char*>(sql.c_str())), SQL_NTS)));
    std::int32_t value = 0;
    SQLLEN length = 0;
    ASSERT_TRUE(SQL_SUCCEEDED(SQLBindParameter(stmt.handle(), 1, SQL_PARAM_INPUT, SQL_C_SLONG,
                                               SQL_INTEGER, 0, 0, &value, 0, &length)));
    for (int i = 1; i <= 3; ++i) {
      value = i * 11;
      ASSERT_TRUE(SQL_SUCCEEDED(SQLExecute(stmt.handle()))) << "execution " << i << ": "
                                                              << stmt.Errors();
      ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle())) << stmt.Errors();
      EXPECT_EQ(i * 11, stmt.BigInt(1));
      EXPECT_EQ(SQL_NO_DATA, SQLFetch(stmt.handle()));
      SQLFreeStmt(stmt.handle(), SQL_CLOSE);
    }
  }  // freeing the statement sends sp_unprepare
  auto statements = factory_->state.Statements();
  ASSERT_EQ(3u, statements.size());
  for (const Statement& s : statements) {
    EXPECT_EQ("SELECT echo @P1", s.sql);
    EXPECT_TRUE(s.is_rpc);
  }
  EXPECT_EQ(33, statements[2].params.at(0).int_value);
  // The connection still answers after the unprepare.
  OdbcStatement after(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(after.ExecDirect("SELECT two_results"))) << after.Errors();
}

TEST_F(OdbcIntegration, Error313SurfacesAsSqlstate42000Native313) {
  OdbcConnection connection;
  Connect(connection);
  {
    OdbcStatement stmt(connection);
    EXPECT_EQ(SQL_ERROR, stmt.ExecDirect("SELECT fail313"));
    auto diagnostics = Diagnostics(SQL_HANDLE_STMT, stmt.handle());
    ASSERT_FALSE(diagnostics.empty());
    EXPECT_EQ("42000", diagnostics[0].sqlstate) << Describe(diagnostics);
    EXPECT_EQ(313, diagnostics[0].native);
    EXPECT_NE(diagnostics[0].message.find("An insufficient number of arguments"),
              std::string::npos);
  }
  {
    // The same error from inside sp_executesql.
    OdbcStatement stmt(connection);
    std::int32_t value = 1;
    SQLLEN length = 0;
    SQLBindParameter(stmt.handle(), 1, SQL_PARAM_INPUT, SQL_C_SLONG, SQL_INTEGER, 0, 0, &value,
                     0, &length);
    EXPECT_EQ(SQL_ERROR, stmt.ExecDirect("SELECT fail313"));
    auto diagnostics = Diagnostics(SQL_HANDLE_STMT, stmt.handle());
    ASSERT_FALSE(diagnostics.empty());
    EXPECT_EQ(313, diagnostics[0].native) << Describe(diagnostics);
  }
  {
    OdbcStatement stmt(connection);
    EXPECT_EQ(SQL_ERROR, stmt.ExecDirect("SELECT throw"));
    auto diagnostics = Diagnostics(SQL_HANDLE_STMT, stmt.handle());
    ASSERT_FALSE(diagnostics.empty());
    EXPECT_EQ(50000, diagnostics[0].native) << Describe(diagnostics);
    EXPECT_NE(diagnostics[0].message.find("the handler exploded"), std::string::npos);
  }
  OdbcStatement after(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(after.ExecDirect("SELECT echo"))) << after.Errors();
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(after.handle()));
}

TEST_F(OdbcIntegration, LoginFailureIs18456AndNeverShowsThePassword) {
  auto log = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  spdlog::default_logger()->sinks().push_back(log);
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::trace);
  const std::string password = "Wr0ng-S3cret-pw";
  OdbcConnection connection;
  std::vector<OdbcDiagnostic> diagnostics;
  EXPECT_FALSE(connection.Connect(ConnectionString(server_->port(), "u", password), &diagnostics));
  spdlog::set_level(level);
  spdlog::default_logger()->sinks().pop_back();

  bool saw_18456 = false;
  for (const auto& d : diagnostics) {
    if (d.native == 18456) {
      saw_18456 = true;
      EXPECT_NE(d.message.find("Login failed for user 'u'."), std::string::npos) << d.message;
    }
    EXPECT_EQ(d.message.find(password), std::string::npos) << d.message;
  }
  EXPECT_TRUE(saw_18456) << Describe(diagnostics);
  const auto lines = log->last_formatted();
  bool logged_failure = false;
  for (const auto& line : lines) {
    EXPECT_EQ(line.find(password), std::string::npos) << line;
    logged_failure |= line.find("login failed for user 'u'") != std::string::npos;
  }
  EXPECT_TRUE(logged_failure);
  EXPECT_TRUE(WaitForNoConnections());
}

TEST_F(OdbcIntegration, EightConcurrentConnections) {
  constexpr int kClients = 8;
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  std::vector<std::string> failures(kClients);
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      OdbcConnection connection;
      std::vector<OdbcDiagnostic> diagnostics;
      if (!connection.Connect(ConnectionString(server_->port()), &diagnostics)) {
        failures[c] = Describe(diagnostics);
        return;
      }
      for (int round = 0; round < 5; ++round) {
        {
          OdbcStatement stmt(connection);
          std::int64_t value = c * 1000 + round;
          SQLLEN length = 0;
          SQLBindParameter(stmt.handle(), 1, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 0, 0,
                           &value, 0, &length);
          if (!SQL_SUCCEEDED(stmt.ExecDirect("SELECT echo ?")) ||
              SQLFetch(stmt.handle()) != SQL_SUCCESS || stmt.BigInt(1) != value ||
              SQLFetch(stmt.handle()) != SQL_NO_DATA) {
            failures[c] = "echo failed: " + stmt.Errors();
            return;
          }
        }
        OdbcStatement rows(connection);
        if (!SQL_SUCCEEDED(rows.ExecDirect("SELECT rows 2000"))) {
          failures[c] = "rows failed: " + rows.Errors();
          return;
        }
        int n = 0;
        while (SQLFetch(rows.handle()) == SQL_SUCCESS) ++n;
        if (n != 2000) {
          failures[c] = "got " + std::to_string(n) + " rows";
          return;
        }
      }
      good++;
    });
  }
  for (auto& t : threads) t.join();
  for (int c = 0; c < kClients; ++c) EXPECT_EQ("", failures[c]) << "client " << c;
  EXPECT_EQ(kClients, good.load());
}

TEST_F(OdbcIntegration, ACancelMidResultStopsTheRowsAndKeepsTheConnection) {
  OdbcConnection connection;
  Connect(connection);
  constexpr std::int64_t kRows = 5'000'000;
  {
    OdbcStatement stmt(connection);
    ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT rows " + std::to_string(kRows))))
        << stmt.Errors();
    for (int i = 0; i < 10; ++i) ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle()));
    ASSERT_TRUE(SQL_SUCCEEDED(SQLCancel(stmt.handle()))) << stmt.Errors();
  }
  EXPECT_EQ(1, factory_->state.attentions.load());
  EXPECT_LT(factory_->state.rows_produced.load(), kRows / 10);
  OdbcStatement next(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(next.ExecDirect("SELECT rows 3"))) << next.Errors();
  int n = 0;
  while (SQLFetch(next.handle()) == SQL_SUCCESS) ++n;
  EXPECT_EQ(3, n);
}

TEST_F(OdbcIntegration, ADroppedClientEndsOnlyItsOwnSession) {
  OdbcConnection steady;
  Connect(steady);
  {
    RawClient dropper(server_->port());
    ASSERT_TRUE(dropper.Login("u", "p").has_value());
    dropper.SendBatch("SELECT rows 100000000");
    // Read a little of the result, then vanish without a word.
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(dropper.ReceiveSome());
  }
  for (int i = 0; i < 200 && factory_->state.lost_connections.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(1, factory_->state.lost_connections.load());
  EXPECT_LT(factory_->state.rows_produced.load(), 100000000);
  OdbcStatement stmt(steady);
  ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT all_types"))) << stmt.Errors();
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle()));
  EXPECT_EQ(1, stmt.BigInt(1));
  // The session counts its loss before the server lets go of its connection: wait for that.
  EXPECT_TRUE(WaitForConnections(1));
  EXPECT_EQ(1, server_->connection_count());
}

TEST_F(OdbcIntegration, TransactionsWithAutocommitOff) {
  OdbcConnection connection;
  Connect(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(SQLSetConnectAttr(connection.handle(), SQL_ATTR_AUTOCOMMIT,
                                              reinterpret_cast<SQLPOINTER>(SQL_AUTOCOMMIT_OFF),
                                              SQL_IS_UINTEGER)));
  {
    OdbcStatement stmt(connection);
    ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT rows 2"))) << stmt.Errors();
    while (SQLFetch(stmt.handle()) == SQL_SUCCESS) {
    }
  }
  EXPECT_TRUE(SQL_SUCCEEDED(SQLEndTran(SQL_HANDLE_DBC, connection.handle(), SQL_COMMIT)));
  EXPECT_TRUE(SQL_SUCCEEDED(SQLEndTran(SQL_HANDLE_DBC, connection.handle(), SQL_ROLLBACK)));
  OdbcStatement stmt(connection);
  ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT echo"))) << stmt.Errors();
  ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle()));
}

TEST_F(OdbcIntegration, AClientRequiringEncryptionIsRefused) {
  OdbcConnection connection;
  std::vector<OdbcDiagnostic> diagnostics;
  std::string connection_string = ConnectionString(server_->port());
  connection_string.replace(connection_string.find("Encryption=off"), 14, "Encryption=require");
  EXPECT_FALSE(connection.Connect(connection_string, &diagnostics));
  EXPECT_TRUE(WaitForNoConnections());
  OdbcConnection good;
  Connect(good);
}

}  // namespace
}  // namespace mssql_cdc::tds
