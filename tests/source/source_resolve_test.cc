// Source::ResolveCaptureInstance, the rule every backend shares.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "source/source.h"

namespace mssql_cdc {
namespace {

using ::testing::HasSubstr;

// A Source that only lists instances; the reads are not part of this test.
class ListingSource : public Source {
 public:
  explicit ListingSource(std::vector<std::string> names) {
    for (auto& n : names) {
      CaptureInstanceInfo info;
      info.name = std::move(n);
      instances_.push_back(std::move(info));
    }
  }
  std::vector<CaptureInstanceInfo> ListCaptureInstances() override { return instances_; }
  std::vector<CapturedColumn> CapturedColumns(const std::string&) override { return {}; }
  std::vector<DdlEvent> DdlHistory(const std::string&) override { return {}; }
  std::string ServerTimeZone() override { return "UTC"; }
  Lsn MinLsn(const std::string&) override { return Lsn(); }
  std::optional<Lsn> MaxLsn() override { return std::nullopt; }
  std::optional<Lsn> NthCommitAfter(const Lsn&, std::int64_t) override { return std::nullopt; }
  std::optional<LocalMicros> CommitTime(const Lsn&) override { return std::nullopt; }
  std::optional<Lsn> LastCommitAtOrBefore(LocalMicros) override { return std::nullopt; }
  std::optional<LocalMicros> CommitTimeAtOrBefore(const Lsn&) override { return std::nullopt; }
  std::vector<SplitPoint> SplitPoints(const std::string&, const Lsn&, const Lsn&, int) override {
    return {};
  }
  std::unique_ptr<arrow::RecordBatchReader> ReadChanges(const ChangeReadRequest&,
                                                         const SourceClock&) override {
    return nullptr;
  }
  std::unique_ptr<arrow::RecordBatchReader> ReadSnapshot(const SnapshotReadRequest&) override {
    return nullptr;
  }
  std::optional<nlohmann::json> KeyAt(const KeyQuery&, const nlohmann::json&,
                                      std::int64_t) override {
    return std::nullopt;
  }
  std::optional<nlohmann::json> LastKey(const KeyQuery&) override { return std::nullopt; }
  std::int64_t RowEstimate(const std::string&) override { return 0; }
  std::vector<std::string> TableColumns(const std::string&) override { return {}; }
  std::vector<SliceCount> CountKeySlices(const KeyQuery&, std::int64_t, std::int64_t,
                                         std::int64_t) override {
    return {};
  }

 private:
  std::vector<CaptureInstanceInfo> instances_;
};

TEST(ResolveCaptureInstanceTest, ExactNameWinsOverCaseVariants) {
  ListingSource source({"dbo_Orders", "dbo_orders", "sales_items"});
  EXPECT_EQ(source.ResolveCaptureInstance("dbo_orders").name, "dbo_orders");
  EXPECT_EQ(source.ResolveCaptureInstance("dbo_Orders").name, "dbo_Orders");
  EXPECT_EQ(source.ResolveCaptureInstance("SALES_ITEMS").name, "sales_items");
}

TEST(ResolveCaptureInstanceTest, TwoCaseVariantsAreAmbiguous) {
  ListingSource source({"dbo_Orders", "dbo_orders"});
  try {
    source.ResolveCaptureInstance("DBO_ORDERS");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'dbo_Orders', 'dbo_orders'"));
    EXPECT_THAT(e.what(), HasSubstr("differ only in case"));
  }
}

TEST(ResolveCaptureInstanceTest, UnknownNameListsTheInstancesSorted) {
  ListingSource source({"zeta", "alpha"});
  try {
    source.ResolveCaptureInstance("beta");
    FAIL() << "no error";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'beta' does not exist; there are: alpha, zeta"));
    EXPECT_THAT(e.what(), HasSubstr("sp_cdc_help_change_data_capture"));
  }
  ListingSource empty({});
  try {
    empty.ResolveCaptureInstance("beta");
    FAIL() << "no error";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("there are none"));
  }
}

}  // namespace
}  // namespace mssql_cdc
