// Every SQL Server type through a sim change read: the Arrow type of the output schema and the
// value decoded from the storage encoding, NULLs included.
#include <arrow/util/decimal.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/timezone.h"
#include "read_helpers.h"
#include "sim_fixture.h"
#include "source/sim/sim_source.h"

namespace mssql_cdc {
namespace {

using namespace testing;  // mssql_cdc::testing: sim_fixture.h, read_helpers.h

struct TypeCase {
  std::string column;
  std::string type;
  Stored stored;
  std::string arrow_type;
  std::string value;  // Arrow's rendering of the decoded value
};

const std::vector<TypeCase>& Cases() {
  static const std::vector<TypeCase> cases = {
      {"c_bit", "bit", std::int64_t{1}, "bool", "true"},
      {"c_tinyint", "tinyint", std::int64_t{255}, "int16", "255"},
      {"c_smallint", "smallint", std::int64_t{-32768}, "int16", "-32768"},
      {"c_int", "int", std::int64_t{-2147483648LL}, "int32", "-2147483648"},
      {"c_bigint", "bigint", std::int64_t{9223372036854775807LL}, "int64", "9223372036854775807"},
      {"c_real", "real", 1.5, "float", "1.5"},
      {"c_float", "float", -2.25e300, "double", "-2.25e+300"},
      {"c_float24", "float(24)", 0.5, "float", "0.5"},
      {"c_dec_max", "decimal(38,10)", std::string("9999999999999999999999999999.9999999999"),
       "decimal128(38, 10)", "9999999999999999999999999999.9999999999"},
      {"c_dec_min", "decimal(38,10)", std::string("-9999999999999999999999999999.9999999999"),
       "decimal128(38, 10)", "-9999999999999999999999999999.9999999999"},
      {"c_dec_tiny", "decimal(38,10)", std::string("-0.0000000001"), "decimal128(38, 10)",
       "-1E-10"},
      {"c_dec38_0", "decimal(38,0)", std::string("-99999999999999999999999999999999999999"),
       "decimal128(38, 0)", "-99999999999999999999999999999999999999"},
      {"c_numeric", "numeric(5,2)", std::string("-123.40"), "decimal128(5, 2)", "-123.40"},
      {"c_money", "money", std::string("922337203685477.5807"), "decimal128(19, 4)",
       "922337203685477.5807"},
      {"c_smallmoney", "smallmoney", std::string("-214748.3648"), "decimal128(10, 4)",
       "-214748.3648"},
      {"c_date", "date", std::string("0001-01-01"), "date32[day]", "0001-01-01"},
      {"c_time", "time(7)", std::string("23:59:59.9999999"), "string", "23:59:59.9999999"},
      {"c_datetime", "datetime", std::string("2024-02-29 23:59:59.9970000"), "timestamp[us]",
       "2024-02-29 23:59:59.997000"},
      {"c_datetime2", "datetime2(7)", std::string("9999-12-31 23:59:59.9999999"),
       "timestamp[us]", "9999-12-31 23:59:59.999999"},
      {"c_smalldatetime", "smalldatetime", std::string("1900-01-01 00:00:00.0000000"),
       "timestamp[us]", "1900-01-01 00:00:00.000000"},
      {"c_dto_east", "datetimeoffset(7)", std::string("2024-03-10 08:30:00.1234567 +05:30"),
       "timestamp[us, tz=UTC]", "2024-03-10 03:00:00.123456Z"},
      {"c_dto_west", "datetimeoffset(3)", std::string("2024-12-31 22:00:00.5000000 -03:00"),
       "timestamp[us, tz=UTC]", "2025-01-01 01:00:00.500000Z"},
      {"c_char", "char(3)", std::string("ab "), "string", "ab "},
      {"c_varchar", "varchar(10)", std::string("plain"), "string", "plain"},
      {"c_nvarchar_max", "nvarchar(max)", std::string("Grüße, 世界"), "string", "Grüße, 世界"},
      {"c_text", "text", std::string("old text"), "string", "old text"},
      {"c_ntext", "ntext", std::string("old ntext"), "string", "old ntext"},
      {"c_xml", "xml", std::string("<a b=\"1\"/>"), "string", "<a b=\"1\"/>"},
      {"c_guid", "uniqueidentifier", std::string("6F9619FF-8B86-D011-B42D-00C04FC964FF"),
       "string", "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
      {"c_binary", "binary(4)", Blob{std::string("\x00\x01\xFE\xFF", 4)}, "binary", "0001FEFF"},
      {"c_varbinary", "varbinary(max)", Blob{std::string("\x7F", 1)}, "binary", "7F"},
      {"c_image", "image", Blob{std::string("\x01\x02", 2)}, "binary", "0102"},
      {"c_rowversion", "rowversion", Blob{std::string("\x00\x00\x00\x00\x00\x00\x07\xD1", 8)},
       "binary", "00000000000007D1"},
  };
  return cases;
}

class SimChangeTypesTest : public ::testing::Test {
 protected:
  SimChangeTypesTest() : db_(dir_.File("cdc.db")) {
    std::vector<testing::FixtureColumn> columns = {{"id", "int", 1}};
    for (const auto& c : Cases()) columns.push_back({c.column, c.type});
    const auto table = db_.AddTable("dbo", "types", columns);
    db_.EnableCdc("dbo_types", table, L(1));
    db_.AddCommit(L(10), "2024-03-01 10:00:00.000");
    std::vector<Stored> values = {std::int64_t{1}};
    std::vector<Stored> nulls = {std::int64_t{2}};
    for (const auto& c : Cases()) {
      values.push_back(c.stored);
      nulls.push_back(nullptr);
    }
    db_.AddChange("dbo_types", L(10), L(11), 2, 1, values);
    db_.AddChange("dbo_types", L(10), L(12), 2, 2, nulls);
  }

  std::shared_ptr<arrow::RecordBatch> ReadAllRows() {
    ChangeReadRequest request;
    request.capture_instance = "dbo_types";
    request.to = L(100);
    auto reader = OpenSimSource(db_.path())->ReadChanges(request, SourceClock::Utc());
    return ReadAll(*reader);
  }

  TempDir dir_;
  SimFixture db_;
};

std::string Render(const arrow::Array& array, int64_t row) {
  auto scalar = array.GetScalar(row).ValueOrDie();
  if (array.type_id() == arrow::Type::BINARY) {
    const auto& bytes = static_cast<const arrow::BinaryScalar&>(*scalar).value;
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (int64_t i = 0; i < bytes->size(); ++i) {
      out += kHex[bytes->data()[i] >> 4];
      out += kHex[bytes->data()[i] & 0xF];
    }
    return out;
  }
  return scalar->ToString();
}

TEST_F(SimChangeTypesTest, EveryTypeDecodesToItsArrowTypeAndValue) {
  const auto batch = ReadAllRows();
  ASSERT_EQ(batch->num_rows(), 2);
  for (const auto& c : Cases()) {
    SCOPED_TRACE(c.column + " " + c.type);
    const auto array = batch->GetColumnByName(c.column);
    ASSERT_NE(array, nullptr);
    EXPECT_EQ(array->type()->ToString(), c.arrow_type);
    EXPECT_TRUE(array->IsValid(0));
    EXPECT_EQ(Render(*array, 0), c.value);
  }
}

TEST_F(SimChangeTypesTest, NullsStayNullInEveryType) {
  const auto batch = ReadAllRows();
  for (const auto& c : Cases()) {
    SCOPED_TRACE(c.column);
    const auto array = batch->GetColumnByName(c.column);
    EXPECT_TRUE(array->IsNull(1));
    EXPECT_EQ(array->null_count(), 1);
  }
}

TEST_F(SimChangeTypesTest, DecimalExtremesAreExact) {
  const auto batch = ReadAllRows();
  const auto& max = static_cast<const arrow::Decimal128Array&>(*batch->GetColumnByName("c_dec_max"));
  const arrow::Decimal128 expected =
      arrow::Decimal128::FromString("99999999999999999999999999999999999999").ValueOrDie();
  EXPECT_EQ(arrow::Decimal128(max.GetValue(0)), expected);
  const auto& min = static_cast<const arrow::Decimal128Array&>(*batch->GetColumnByName("c_dec_min"));
  EXPECT_EQ(arrow::Decimal128(min.GetValue(0)), -expected);
  const auto& tiny = static_cast<const arrow::Decimal128Array&>(*batch->GetColumnByName("c_dec_tiny"));
  EXPECT_EQ(arrow::Decimal128(tiny.GetValue(0)), arrow::Decimal128(-1));
}

void ExpectBadValue(const std::string& type, const Stored& stored, const std::string& message) {
  SCOPED_TRACE(type);
  TempDir dir;
  SimFixture db(dir.File("bad.db"));
  const auto table = db.AddTable("dbo", "t", {{"id", "int", 1}, {"v", type}});
  db.EnableCdc("dbo_t", table, L(1));
  db.AddCommit(L(10), "2024-03-01 10:00:00.000");
  // Written without the column's affinity converting it: through a typeless view of the row.
  db.Exec("CREATE TABLE scratch(v)");
  db.Run("INSERT INTO scratch VALUES (?1)", {stored});
  db.Run("INSERT INTO \"cdc.dbo_t_CT\" SELECT ?1, NULL, ?2, 2, NULL, 1, v, 1 FROM scratch",
         {SimFixture::LsnBlob(L(10)), SimFixture::LsnBlob(L(11))});
  ChangeReadRequest request;
  request.capture_instance = "dbo_t";
  request.to = L(100);
  auto reader = OpenSimSource(db.path())->ReadChanges(request, SourceClock::Utc());
  std::shared_ptr<arrow::RecordBatch> batch;
  const auto status = reader->ReadNext(&batch);
  ASSERT_FALSE(status.ok());
  try {
    ThrowIfError(status);
  } catch (const SourceError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(message));
  }
}

TEST(SimChangeBadValuesTest, ValuesNotInTheStorageEncodingFailTheRead) {
  ExpectBadValue("decimal(5,2)", std::string("1234.5"), "holds '1234.5', which is not the sim storage encoding");
  ExpectBadValue("decimal(5,2)", std::string("1.234"), "holds '1.234'");
  ExpectBadValue("decimal(5,2)", std::string("1e3"), "holds '1e3'");
  ExpectBadValue("date", std::string("2024-02-30"), "holds '2024-02-30'");
  ExpectBadValue("datetime2(7)", std::string("yesterday"), "holds 'yesterday'");
  ExpectBadValue("datetimeoffset(7)", std::string("2024-03-10 08:30:00.0000000"), "holds '2024-03-10");
  ExpectBadValue("varbinary(10)", std::string("0x01"), "holds a TEXT value where the sim storage format stores BLOB");
  ExpectBadValue("nvarchar(10)", Blob{"x"}, "holds a BLOB value where the sim storage format stores TEXT");
  ExpectBadValue("int", std::string("seven"), "holds a TEXT value where the sim storage format stores INTEGER");
}

}  // namespace
}  // namespace mssql_cdc
