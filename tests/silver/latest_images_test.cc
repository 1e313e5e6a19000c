// The latest-image rule of apply_changes on bronze rows written by hand: update pairs, key
// updates, a delete and re-insert of one key in one commit, NULL keys, a snapshot row beside a
// change of its own LSN.
#include "silver/latest_images.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/silver/bronze_rows.h"

namespace mssql_cdc {
namespace {

using silver_testing::BronzeRow;
using silver_testing::BronzeRows;
using silver_testing::kBronzeSchema;

// key -> (deleted, name) of the images, for comparison.
std::map<std::optional<int>, std::pair<bool, std::optional<std::string>>> ImagesOf(
    const std::vector<BronzeRow>& rows) {
  const auto bronze = BronzeRows(rows);
  const auto images = LatestImagesOf(bronze, {"id"}, silver_testing::Silver());
  std::map<std::optional<int>, std::pair<bool, std::optional<std::string>>> out;
  const auto ids = std::static_pointer_cast<arrow::Int32Array>(images.rows->GetColumnByName("id")->chunk(0));
  const auto names = std::static_pointer_cast<arrow::StringArray>(images.rows->GetColumnByName("name")->chunk(0));
  for (std::int64_t i = 0; i < images.rows->num_rows(); ++i) {
    std::optional<int> id = ids->IsNull(i) ? std::nullopt : std::optional(ids->Value(i));
    std::optional<std::string> name = names->IsNull(i) ? std::nullopt : std::optional(names->GetString(i));
    EXPECT_EQ(out.count(id), 0u) << "one image per key";
    out[id] = {images.deletes[static_cast<std::size_t>(i)], name};
  }
  return out;
}

TEST(LatestImagesTest, AnUpdatesAfterImageOutranksItsBeforeImage) {
  auto images = ImagesOf({{1, 2, 1, 2, 1, "a"}, {2, 4, 1, 3, 1, "a"}, {2, 4, 1, 4, 1, "b"}});
  EXPECT_EQ(images.at(1), std::make_pair(false, std::optional<std::string>("b")));
}

TEST(LatestImagesTest, AKeyUpdateDeletesTheOldKeyAndUpsertsTheNew) {
  // One commit moves the row from key 1 to key 2: before-image of 1, after-image of 2.
  auto images = ImagesOf({{1, 2, 1, 2, 1, "a"}, {2, 4, 1, 3, 1, "a"}, {2, 4, 1, 4, 2, "a"}});
  EXPECT_TRUE(images.at(1).first);
  EXPECT_EQ(images.at(2), std::make_pair(false, std::optional<std::string>("a")));
}

TEST(LatestImagesTest, ADeleteAndReinsertInOneCommitLeavesTheRow) {
  auto images = ImagesOf({{1, 2, 1, 2, 7, "old"}, {3, 6, 1, 1, 7, "old"}, {3, 8, 1, 2, 7, "new"}});
  EXPECT_EQ(images.at(7), std::make_pair(false, std::optional<std::string>("new")));
  auto gone = ImagesOf({{3, 6, 1, 2, 8, "x"}, {3, 8, 1, 1, 8, "x"}});
  EXPECT_TRUE(gone.at(8).first);
}

TEST(LatestImagesTest, LaterCommandsOfATransactionOutrankEarlierOnes) {
  // A larger command id wins even with a smaller seqval.
  auto images = ImagesOf({{3, 9, 1, 2, 5, "first"}, {3, 4, 2, 4, 5, "second"}});
  EXPECT_EQ(images.at(5).second, "second");
}

TEST(LatestImagesTest, NullKeysAreOneKey) {
  auto images = ImagesOf({{1, 2, 1, 2, std::nullopt, "a"}, {2, 2, 1, 4, std::nullopt, "b"}});
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images.at(std::nullopt).second, "b");
}

TEST(LatestImagesTest, ASnapshotRowOutranksAChangeOfItsOwnLsn) {
  // The snapshot was read after commit 5: its row is the newer image.
  BronzeRow change{5, 2, 1, 1, 4, "gone?"};
  BronzeRow snapshot{5, 0, 0, 0, 4, "snapshot"};
  snapshot.snapshot = true;
  auto images = ImagesOf({snapshot, change});
  EXPECT_EQ(images.at(4), std::make_pair(false, std::optional<std::string>("snapshot")));
}

TEST(LatestImagesTest, MaxLsnIsTheNewestRowRead) {
  const auto images = LatestImagesOf(BronzeRows({{9, 1, 1, 2, 1, "a"}, {3, 1, 1, 2, 2, "b"}}), {"id"},
                                     silver_testing::Silver());
  EXPECT_EQ(images.max_lsn, silver_testing::LsnText(9));
}

TEST(LatestImagesTest, EncodedKeysTellNullFromEmptyAndZero) {
  arrow::StringBuilder builder;
  ASSERT_TRUE(builder.AppendNull().ok());
  ASSERT_TRUE(builder.Append("").ok());
  ASSERT_TRUE(builder.Append("0").ok());
  std::shared_ptr<arrow::Array> values;
  ASSERT_TRUE(builder.Finish(&values).ok());
  auto table = arrow::Table::Make(arrow::schema({arrow::field("k", arrow::utf8())}), {values});
  const auto keys = EncodeKeys(*table, {"k"});
  EXPECT_NE(keys[0], keys[1]);
  EXPECT_NE(keys[1], keys[2]);
}

}  // namespace
}  // namespace mssql_cdc
