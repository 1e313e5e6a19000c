// The statement engine behind the real TdsServer, reached through a real ODBC driver
// (unixODBC with FreeTDS, as scripts/setup.sh installs them): logins, parameters sent as RPCs,
// streamed rows, and SQL Server's errors as a driver reports them. Skipped when the FreeTDS
// driver is not installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "shop_fixture.h"
#include "sim/storage.h"
#include "sim/wire_rows.h"
#include "sim_server/sim_handler_factory.h"
#include "source/odbc/statements.h"
#include "tds/server.h"

// After every header that reaches Arrow: unixODBC defines BOOL as a macro.
#include <sql.h>
#include <sqlext.h>
#ifdef BOOL
#undef BOOL
#endif

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;
namespace sql = odbc_sql;

bool FreeTdsInstalled() {
  for (const char* path : {"/usr/lib/x86_64-linux-gnu/odbc/libtdsodbc.so",
                           "/usr/lib/aarch64-linux-gnu/odbc/libtdsodbc.so"}) {
    if (std::filesystem::exists(path)) return true;
  }
  return false;
}

// What a statement answered: its rows as text (binary as hex), or the driver's diagnostic.
struct Answer {
  std::vector<std::vector<std::string>> rows;
  std::string sqlstate;
  int native_error = 0;
  std::string message;
};

// An ODBC parameter: binary(10), bigint or varchar.
struct Param {
  SQLSMALLINT c_type;
  SQLSMALLINT sql_type;
  std::string bytes;
  std::int64_t number = 0;
};
Param Binary(const Lsn& lsn) { return {SQL_C_BINARY, SQL_BINARY, LsnBytes(lsn)}; }
Param Text(const std::string& text) { return {SQL_C_CHAR, SQL_VARCHAR, text}; }
Param Bigint(std::int64_t n) { return {SQL_C_SBIGINT, SQL_BIGINT, {}, n}; }

class OdbcConnection {
 public:
  OdbcConnection() {
    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env_);
    SQLSetEnvAttr(env_, SQL_ATTR_ODBC_VERSION, reinterpret_cast<SQLPOINTER>(SQL_OV_ODBC3), 0);
    SQLAllocHandle(SQL_HANDLE_DBC, env_, &dbc_);
  }
  ~OdbcConnection() {
    if (connected_) SQLDisconnect(dbc_);
    SQLFreeHandle(SQL_HANDLE_DBC, dbc_);
    SQLFreeHandle(SQL_HANDLE_ENV, env_);
  }

  // Empty when connected, else the driver's message.
  std::string Connect(int port, const std::string& user, const std::string& password) {
    const std::string text = "DRIVER=FreeTDS;SERVER=127.0.0.1;PORT=" + std::to_string(port) +
                             ";TDS_Version=7.4;ClientCharset=UTF-8;UID=" + user + ";PWD=" + password;
    const SQLRETURN rc = SQLDriverConnect(dbc_, nullptr, (SQLCHAR*)text.c_str(), SQL_NTS, nullptr,
                                          0, nullptr, SQL_DRIVER_NOPROMPT);
    if (SQL_SUCCEEDED(rc)) {
      connected_ = true;
      return "";
    }
    return Diagnostic(SQL_HANDLE_DBC, dbc_).message;
  }

  Answer Run(const std::string& text, std::vector<Param> params = {}) {
    SQLHSTMT stmt = SQL_NULL_HSTMT;
    SQLAllocHandle(SQL_HANDLE_STMT, dbc_, &stmt);
    std::vector<SQLLEN> lengths(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      Param& p = params[i];
      const bool number = p.c_type == SQL_C_SBIGINT;
      lengths[i] = number ? 0 : static_cast<SQLLEN>(p.bytes.size());
      SQLBindParameter(stmt, static_cast<SQLUSMALLINT>(i + 1), SQL_PARAM_INPUT, p.c_type, p.sql_type,
                       number ? 0 : std::max<SQLULEN>(p.bytes.size(), 1), 0,
                       number ? static_cast<SQLPOINTER>(&p.number) : p.bytes.data(),
                       lengths[i], &lengths[i]);
    }
    Answer answer;
    SQLRETURN rc = SQLExecDirect(stmt, (SQLCHAR*)text.c_str(), SQL_NTS);
    while (SQL_SUCCEEDED(rc)) {
      SQLSMALLINT columns = 0;
      SQLNumResultCols(stmt, &columns);
      while (columns > 0 && SQL_SUCCEEDED(rc = SQLFetch(stmt))) {
        std::vector<std::string> row;
        for (SQLSMALLINT c = 1; c <= columns; ++c) {
          char buffer[512];
          SQLLEN size = 0;
          SQLGetData(stmt, c, SQL_C_CHAR, buffer, sizeof buffer, &size);
          row.push_back(size == SQL_NULL_DATA ? "NULL" : std::string(buffer));
        }
        answer.rows.push_back(std::move(row));
      }
      if (rc != SQL_NO_DATA && columns > 0) break;
      rc = SQLMoreResults(stmt);
    }
    if (rc == SQL_ERROR) {
      const Answer failure = Diagnostic(SQL_HANDLE_STMT, stmt);
      answer.sqlstate = failure.sqlstate;
      answer.native_error = failure.native_error;
      answer.message = failure.message;
    }
    SQLFreeHandle(SQL_HANDLE_STMT, stmt);
    return answer;
  }

 private:
  static Answer Diagnostic(SQLSMALLINT type, SQLHANDLE handle) {
    Answer answer;
    SQLCHAR state[6] = {};
    SQLINTEGER native = 0;
    SQLCHAR message[1024] = {};
    SQLSMALLINT length = 0;
    // The last record holds the server's error; FreeTDS puts its own summary first.
    for (SQLSMALLINT record = 1;
         SQL_SUCCEEDED(SQLGetDiagRec(type, handle, record, state, &native, message, sizeof message,
                                     &length));
         ++record) {
      answer.sqlstate = reinterpret_cast<char*>(state);
      answer.native_error = native;
      answer.message = reinterpret_cast<char*>(message);
    }
    return answer;
  }

  SQLHENV env_ = SQL_NULL_HENV;
  SQLHDBC dbc_ = SQL_NULL_HDBC;
  bool connected_ = false;
};

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string Hex(const Lsn& lsn) { return Lower(lsn.ToString().substr(2)); }

class ServedOverTdsTest : public ShopFixture {
 protected:
  void SetUp() override {
    if (!FreeTdsInstalled()) GTEST_SKIP() << "the FreeTDS ODBC driver (tdsodbc) is not installed";
    ShopFixture::SetUp();
    server_ = std::make_unique<tds::TdsServer>(
        std::make_shared<SimHandlerFactory>(db_->path()), tds::ServerOptions{});
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::unique_ptr<OdbcConnection> Connect(const std::string& user, const std::string& password) {
    auto connection = std::make_unique<OdbcConnection>();
    const std::string failure = connection->Connect(server_->port(), user, password);
    EXPECT_EQ(failure, "");
    return connection;
  }

  std::unique_ptr<tds::TdsServer> server_;
};

TEST_F(ServedOverTdsTest, LoginsNeedTheirPassword) {
  OdbcConnection wrong;
  EXPECT_NE(wrong.Connect(server_->port(), "reader", "not-it"), "");
  OdbcConnection unknown;
  EXPECT_NE(unknown.Connect(server_->port(), "ghost", "x"), "");
  auto reader = Connect("reader", "reader-pw");
  EXPECT_EQ(reader->Run(std::string(sql::kUserName)).rows,
            (std::vector<std::vector<std::string>>{{"reader"}}));
}

TEST_F(ServedOverTdsTest, TheClientsStatementsWithTheirParameters) {
  auto owner = Connect("owner", "owner-pw");
  EXPECT_EQ(Lower(owner->Run(std::string(sql::kMaxLsn)).rows.at(0).at(0)), Hex(commits_.back()));
  const Answer min = owner->Run(std::string(sql::kMinLsn), {Text("dbo_orders")});
  ASSERT_EQ(min.message, "");
  EXPECT_EQ(Lower(min.rows.at(0).at(0)), Hex(db_->MinLsn("dbo_orders")));
  const Answer nth = owner->Run(std::string(sql::kNthCommitAfter), {Bigint(2), Binary(commits_[0])});
  ASSERT_EQ(nth.message, "");
  EXPECT_EQ(Lower(nth.rows.at(0).at(0)), Hex(commits_[2]));

  const Answer changes = owner->Run(sql::ChangeRows("dbo_orders", {"id", "amount", "note"}, true),
                                    {Binary(Lsn()), Binary(commits_.back())});
  ASSERT_EQ(changes.message, "");
  ASSERT_EQ(changes.rows.size(), 5u);
  EXPECT_EQ(changes.rows[0][2], "2");  // __$operation: insert
  EXPECT_EQ(changes.rows[0][5], "1");
  EXPECT_EQ(changes.rows[0][6], "12.50");
  EXPECT_EQ(changes.rows[0][7], "héllo");
  EXPECT_EQ(changes.rows[3][6], "13.75");

  const Answer snapshot = owner->Run(sql::SnapshotRows(
      "dbo", "orders", {{"id", SqlType::Parse("int"), true}, {"gone", SqlType::Parse("int"), false}},
      {"id"}, true, 5000));
  ASSERT_EQ(snapshot.message, "");
  EXPECT_EQ(snapshot.rows, (std::vector<std::vector<std::string>>{{"1", "NULL"}}));
}

// The odbc backend asks for every captured column, which the server sends from the wire rows
// of sim/wire_rows.h; in another order it sends the change table's values one by one.
TEST_F(ServedOverTdsTest, EveryColumnComesFromTheWireRowsAsTheChangeTableHoldsIt) {
  const std::vector<std::string> in_order = {"id",  "region", "amount", "placed", "note",
                                             "raw", "flag",   "ratio",  "guid"};
  const std::vector<std::string> reversed(in_order.rbegin(), in_order.rend());
  auto owner = Connect("owner", "owner-pw");
  const auto read = [&](const std::vector<std::string>& columns) {
    const Answer answer = owner->Run(sql::ChangeRows("dbo_orders", columns, true),
                                     {Binary(Lsn()), Binary(commits_.back())});
    EXPECT_EQ(answer.message, "");
    return answer.rows;
  };
  // Rows of the reversed read with their captured columns put back in order.
  auto expected = read(reversed);
  ASSERT_EQ(expected.size(), 5u);
  for (auto& row : expected) std::reverse(row.begin() + 5, row.end());
  EXPECT_EQ(read(in_order), expected);

  sim::SqliteDb raw(db_->path(), sim::SqliteDb::Mode::kReadWrite);
  const std::string wire = sim::QuoteIdent(sim::WireTableStorageName("dbo_orders"));
  // A wire row without values is served from the change table.
  raw.Exec("UPDATE " + wire + " SET \"__$values\" = NULL WHERE \"__$operation\" = 3");
  EXPECT_EQ(read(in_order), expected);
  // And the values a wire row holds are the ones sent.
  raw.Exec("UPDATE " + wire + " SET \"__$values\" = (SELECT \"__$values\" FROM " + wire +
           " WHERE \"__$operation\" = 1) WHERE \"__$operation\" = 4");
  const auto changed = read(in_order);
  ASSERT_EQ(changed.size(), 5u);
  EXPECT_EQ(changed[3][2], "4");
  EXPECT_EQ(std::vector<std::string>(changed[3].begin() + 5, changed[3].end()),
            std::vector<std::string>(expected[4].begin() + 5, expected[4].end()));
}

TEST_F(ServedOverTdsTest, SqlServersErrorsReachTheDriver) {
  auto reader = Connect("reader", "reader-pw");
  const Answer denied = reader->Run(sql::ChangeRows("sales_items", {"line"}, true),
                                    {Binary(Lsn()), Binary(commits_.back())});
  EXPECT_EQ(denied.native_error, 229);
  EXPECT_NE(denied.message.find("The SELECT permission was denied on the object 'sales_items_CT'"),
            std::string::npos);
  const Answer purged = reader->Run(
      "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(?, ?, N'all')",
      {Binary(Lsn()), Binary(commits_.back())});
  EXPECT_EQ(purged.native_error, 313);
  const Answer unknown = reader->Run("SELECT * FROM cdc.dbo_nope_CT");
  EXPECT_EQ(unknown.native_error, 208);
  // The connection goes on after errors.
  EXPECT_EQ(reader->Run("SELECT 1").rows, (std::vector<std::vector<std::string>>{{"1"}}));
}

}  // namespace
}  // namespace mssql_cdc::sim_server
