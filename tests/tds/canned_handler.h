// A QueryHandler with a few canned statements, for tests of the server through sockets and
// real drivers:
//   SELECT all_types     one result set with a column of every type, four rows: typical
//                        values, all NULL, the minimums, the maximums (AllTypesTable)
//   SELECT big           nvarchar(max) and varbinary(max) of 1 MiB, a full nvarchar(4000)
//   SELECT echo ...      one row echoing the parameters (bigint, float, nvarchar(max),
//                        varbinary(max) by kind)
//   SELECT rows <n>      n rows (id int, filler nvarchar(100)), counted as produced
//   SELECT two_results   two result sets
//   SELECT fail313       SQL Server error 313
//   SELECT throw         the handler throws
//   SET ...              no result
// Anything else fails with error 208. Every statement is recorded.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.h"
#include "tds/message_writer.h"
#include "tds/query_handler.h"

namespace mssql_cdc::tds::testing {

// A value given to a ResultSet, with the text FreeTDS ODBC reads back as SQL_C_CHAR (for
// binary cells, the bytes read back as SQL_C_BINARY).
struct Cell {
  enum class Kind { kNull, kInt, kFloat, kText, kBinary };
  Kind kind = Kind::kNull;
  std::int64_t int_value = 0;
  double float_value = 0;
  std::string bytes;     // text (UTF-8) or binary
  std::string expected;  // what the client reads back; for kFloat unused
};

inline Cell NullCell() { return Cell{}; }
inline Cell IntCell(std::int64_t v) {
  return Cell{Cell::Kind::kInt, v, 0, "", std::to_string(v)};
}
inline Cell FloatCell(double v) { return Cell{Cell::Kind::kFloat, 0, v, "", ""}; }
inline Cell TextCell(std::string v, std::string expected) {
  return Cell{Cell::Kind::kText, 0, 0, std::move(v), std::move(expected)};
}
inline Cell TextCell(const std::string& v) { return TextCell(v, v); }
inline Cell BinaryCell(std::string v) { return Cell{Cell::Kind::kBinary, 0, 0, v, v}; }

struct CannedTable {
  std::vector<ResultColumn> columns;
  std::vector<std::vector<Cell>> rows;
};

inline void WriteCell(ResultSet& rows, const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::kNull: rows.Null(); break;
    case Cell::Kind::kInt: rows.Int(cell.int_value); break;
    case Cell::Kind::kFloat: rows.Float(cell.float_value); break;
    case Cell::Kind::kText: rows.Text(cell.bytes); break;
    case Cell::Kind::kBinary: rows.Binary(cell.bytes); break;
  }
}

inline std::string Repeat(const std::string& unit, std::size_t n) {
  std::string out;
  out.reserve(unit.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += unit;
  return out;
}

inline CannedTable AllTypesTable() {
  CannedTable t;
  auto col = [&](const std::string& name, const std::string& type) {
    t.columns.push_back(ResultColumn{name, SqlType::Parse(type), true});
  };
  col("c_bit", "bit");
  col("c_tinyint", "tinyint");
  col("c_smallint", "smallint");
  col("c_int", "int");
  col("c_bigint", "bigint");
  col("c_real", "real");
  col("c_float", "float");
  col("c_decimal", "decimal(38,10)");
  col("c_numeric", "numeric(18,4)");
  col("c_money", "money");
  col("c_smallmoney", "smallmoney");
  col("c_date", "date");
  col("c_time", "time(7)");
  col("c_datetime2", "datetime2(7)");
  col("c_dto", "datetimeoffset(7)");
  col("c_datetime", "datetime");
  col("c_smalldatetime", "smalldatetime");
  col("c_char", "char(10)");
  col("c_varchar", "varchar(50)");
  col("c_nchar", "nchar(10)");
  col("c_nvarchar", "nvarchar(4000)");
  col("c_varchar_max", "varchar(max)");
  col("c_nvarchar_max", "nvarchar(max)");
  col("c_text", "text");
  col("c_ntext", "ntext");
  col("c_xml", "xml");
  col("c_binary", "binary(10)");
  col("c_varbinary", "varbinary(128)");
  col("c_varbinary_max", "varbinary(max)");
  col("c_image", "image");
  col("c_timestamp", "timestamp");
  col("c_guid", "uniqueidentifier");

  const std::string lsn("\x00\x00\x00\x2A\x00\x00\x01\xF0\x00\x03", 10);
  t.rows.push_back({
      IntCell(1),
      IntCell(200),
      IntCell(-300),
      IntCell(123456),
      IntCell(9000000000LL),
      FloatCell(1.5),
      FloatCell(2.25),
      TextCell("12.3456789012"),
      TextCell("-12.3400"),
      TextCell("-12.3400"),
      TextCell("12.3400"),
      TextCell("2024-01-02"),
      TextCell("12:34:56.1234567"),
      TextCell("2024-01-02 03:04:05.1234567"),
      TextCell("2024-01-02 03:04:05.1234567 -05:00"),
      TextCell("2024-01-02 03:04:05.007"),
      TextCell("2024-01-02 03:04:00"),
      TextCell("abc", "abc       "),
      TextCell("h\xC3\xA9llo \xE2\x82\xAC"),              // héllo €: all in Windows-1252
      TextCell("\xC3\xB1", "\xC3\xB1         "),           // ñ, padded to 10
      TextCell("\xC3\xBCnic\xC3\xB6" "de \xF0\x9F\x98\x80"),  // ünicöde 😀
      TextCell("long text"),
      TextCell("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"),      // 日本語
      TextCell("t"),
      TextCell("nt"),
      TextCell("<a>1</a>"),
      BinaryCell(lsn),
      BinaryCell(std::string("\x01\x02\x03", 3)),
      BinaryCell(std::string("\x00\xFF\x10\x20\x30", 5)),
      BinaryCell("\xCA\xFE"),
      BinaryCell(std::string("\x00\x00\x00\x00\x00\x00\x07\xD1", 8)),
      TextCell("6f9619ff-8b86-d011-b42d-00c04fc964ff", "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
  });
  t.rows.push_back(std::vector<Cell>(t.columns.size(), NullCell()));
  t.rows.push_back({
      IntCell(0),
      IntCell(0),
      IntCell(-32768),
      IntCell(INT32_MIN),
      IntCell(INT64_MIN),
      FloatCell(-3.4e38),
      FloatCell(-1.79e308),
      TextCell("-9999999999999999999999999999.9999999999"),
      TextCell("-99999999999999.9999"),
      TextCell("-922337203685477.5808"),
      TextCell("-214748.3648"),
      // FreeTDS prints the year without leading zeros.
      TextCell("0001-01-01", "1-01-01"),
      TextCell("00:00:00.0000000"),
      TextCell("0001-01-01 00:00:00.0000000", "1-01-01 00:00:00.0000000"),
      TextCell("0001-01-01 00:00:00.0000000 -14:00", "1-01-01 00:00:00.0000000 -14:00"),
      TextCell("1753-01-01 00:00:00.000"),
      TextCell("1900-01-01 00:00:00"),
      TextCell("", "          "),
      TextCell(""),
      TextCell("", "          "),
      TextCell(""),
      TextCell(""),
      TextCell(""),
      TextCell(""),
      TextCell(""),
      TextCell(""),
      BinaryCell(std::string(10, '\0')),
      BinaryCell(""),
      BinaryCell(""),
      BinaryCell(""),
      BinaryCell(std::string(8, '\0')),
      TextCell("00000000-0000-0000-0000-000000000000"),
  });
  t.rows.push_back({
      IntCell(1),
      IntCell(255),
      IntCell(32767),
      IntCell(INT32_MAX),
      IntCell(INT64_MAX),
      FloatCell(3.4e38),
      FloatCell(1.79e308),
      TextCell("9999999999999999999999999999.9999999999"),
      TextCell("99999999999999.9999"),
      TextCell("922337203685477.5807"),
      TextCell("214748.3647"),
      TextCell("9999-12-31"),
      TextCell("23:59:59.9999999"),
      TextCell("9999-12-31 23:59:59.9999999"),
      TextCell("9999-12-31 23:59:59.9999999 +00:00"),
      TextCell("9999-12-31 23:59:59.997"),
      TextCell("2079-06-06 23:59:00"),
      TextCell("0123456789"),
      TextCell(Repeat("x", 50)),
      TextCell(Repeat("\xE2\x82\xAC", 10)),  // 10 x €
      TextCell(Repeat("\xCE\xA9", 4000)),    // 4000 x Ω: the full 8000 bytes
      TextCell(Repeat("v", 9000)),
      TextCell(Repeat("\xF0\x9F\x98\x80", 3000)),
      TextCell(Repeat("t", 100)),
      TextCell(Repeat("n", 100)),
      TextCell("<r>" + Repeat("<i/>", 100) + "</r>"),
      BinaryCell(std::string(10, '\xFF')),
      BinaryCell(Repeat("\xAB", 128)),
      BinaryCell(Repeat("\x01\x02", 5000)),
      BinaryCell(Repeat("\x03", 300)),
      BinaryCell(std::string(8, '\xFF')),
      TextCell("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"),
  });
  return t;
}

// What the handlers of one factory saw and did.
struct CannedState {
  std::mutex mutex;
  std::vector<Statement> statements;
  std::atomic<std::int64_t> rows_produced{0};
  std::atomic<int> attentions{0};
  std::atomic<int> lost_connections{0};

  std::vector<Statement> Statements() {
    std::lock_guard lock(mutex);
    return statements;
  }
};

class CannedHandler final : public QueryHandler {
 public:
  explicit CannedHandler(CannedState& state) : state_(state) {}

  void Execute(const Statement& statement, ReplyWriter& reply) override {
    {
      std::lock_guard lock(state_.mutex);
      state_.statements.push_back(statement);
    }
    const std::string& sql = statement.sql;
    if (sql == "SELECT all_types") return WriteTable(AllTypesTable(), reply);
    if (sql == "SELECT big") return Big(reply);
    if (sql.rfind("SELECT echo", 0) == 0) return Echo(statement, reply);
    if (sql.rfind("SELECT rows ", 0) == 0) return Rows(std::stoll(sql.substr(12)), reply);
    if (sql == "SELECT two_results") {
      ResultSet& first = reply.BeginResult({ResultColumn{"a", SqlType::Parse("int"), true}});
      first.Int(1);
      first.EndRow();
      ResultSet& second =
          reply.BeginResult({ResultColumn{"b", SqlType::Parse("nvarchar(10)"), true}});
      second.Text("two");
      second.EndRow();
      return;
    }
    if (sql == "SELECT fail313") {
      return reply.Fail(ServerError{
          313, 3, 16,
          "An insufficient number of arguments were supplied for the procedure or function "
          "cdc.fn_cdc_get_all_changes_dbo_orders."});
    }
    if (sql == "SELECT throw") throw SourceError("the handler exploded");
    if (sql.rfind("SET ", 0) == 0) return;
    reply.Fail(ServerError{208, 1, 16, "Invalid object name '" + sql + "'."});
  }

  static void WriteTable(const CannedTable& table, ReplyWriter& reply) {
    ResultSet& rows = reply.BeginResult(table.columns);
    for (const auto& row : table.rows) {
      for (const Cell& cell : row) WriteCell(rows, cell);
      rows.EndRow();
    }
  }

 private:
  static void Big(ReplyWriter& reply) {
    ResultSet& rows = reply.BeginResult({
        ResultColumn{"text", SqlType::Parse("nvarchar(max)"), true},
        ResultColumn{"bytes", SqlType::Parse("varbinary(max)"), true},
        ResultColumn{"full", SqlType::Parse("nvarchar(4000)"), true},
    });
    rows.Text(BigText());
    rows.Binary(BigBytes());
    rows.Text(Repeat("z", 4000));
    rows.EndRow();
  }

  void Echo(const Statement& statement, ReplyWriter& reply) {
    std::vector<ResultColumn> columns;
    for (std::size_t i = 0; i < statement.params.size(); ++i) {
      const ParamValue& p = statement.params[i];
      const char* type = p.kind == ParamValue::Kind::kInt      ? "bigint"
                         : p.kind == ParamValue::Kind::kFloat  ? "float"
                         : p.kind == ParamValue::Kind::kText   ? "nvarchar(max)"
                                                               : "varbinary(max)";
      std::string name = std::string("p").append(std::to_string(i + 1));
      columns.push_back(ResultColumn{std::move(name), SqlType::Parse(type), true});
    }
    if (columns.empty()) columns.push_back(ResultColumn{"none", SqlType::Parse("int"), true});
    ResultSet& rows = reply.BeginResult(columns);
    if (statement.params.empty()) rows.Int(0);
    for (const ParamValue& p : statement.params) {
      switch (p.kind) {
        case ParamValue::Kind::kNull: rows.Null(); break;
        case ParamValue::Kind::kInt: rows.Int(p.int_value); break;
        case ParamValue::Kind::kFloat: rows.Float(p.float_value); break;
        case ParamValue::Kind::kText: rows.Text(p.text); break;
        case ParamValue::Kind::kBinary:
        case ParamValue::Kind::kOther: rows.Binary(p.text); break;
      }
    }
    rows.EndRow();
  }

  void Rows(std::int64_t n, ReplyWriter& reply) {
    ResultSet& rows = reply.BeginResult({
        ResultColumn{"id", SqlType::Parse("int"), false},
        ResultColumn{"filler", SqlType::Parse("nvarchar(100)"), true},
    });
    const std::string filler = Repeat("f", 100);
    try {
      for (std::int64_t i = 0; i < n; ++i) {
        rows.Int(i);
        rows.Text(filler);
        rows.EndRow();
        state_.rows_produced++;
      }
    } catch (const ReplyAborted& aborted) {
      if (aborted.reason() == ReplyAborted::Reason::kAttention) {
        state_.attentions++;
      } else {
        state_.lost_connections++;
      }
      throw;
    }
  }

 public:
  static std::string BigText() {
    // 1 MiB of UTF-8 mixing 1-, 2-, 3- and 4-byte characters.
    return Repeat("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", (1 << 20) / 10);
  }
  static std::string BigBytes() {
    std::string bytes(1 << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 + 7);
    return bytes;
  }

 private:
  CannedState& state_;
};

class CannedFactory final : public QueryHandlerFactory {
 public:
  LoginOutcome Login(const LoginCredentials& credentials, const std::string& database) override {
    {
      std::lock_guard lock(state.mutex);
      last_database = database;
    }
    if (credentials.access_token) {
      if (*credentials.access_token == "expired-token") return {nullptr, "Token is expired."};
      if (*credentials.access_token != "good-token") return {};
    } else if (credentials.user != "u" || credentials.password != "p") {
      return {};
    }
    return {std::make_unique<CannedHandler>(state), ""};
  }
  std::string DatabaseName() override { return "sim"; }
  std::string ServerName() override { return "simsrv"; }

  CannedState state;
  std::string last_database;
};

}  // namespace mssql_cdc::tds::testing
