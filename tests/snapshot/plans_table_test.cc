// The plans table in both layouts: this engine's row per chunk, and the row per snapshot event
// mssql-cdc-pyspark 0.8.0 keeps under the same name, whose plans this engine reads and whose
// chunk rows it appends while it goes on with a snapshot 0.8.0 began.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "snapshot/plans_table.h"

namespace mssql_cdc {
namespace {

using json = nlohmann::json;

const Lsn kS = Lsn::Parse("0x0000002A00000180001E");

// Rows of 0.8.0's table: (snapshot, event, detail) as it writes them.
std::shared_ptr<arrow::Table> EventTable(const std::vector<std::array<std::string, 3>>& rows) {
  arrow::StringBuilder snapshot, event, detail;
  for (const auto& row : rows) {
    EXPECT_TRUE(snapshot.Append(row[0]).ok());
    EXPECT_TRUE(event.Append(row[1]).ok());
    EXPECT_TRUE(detail.Append(row[2]).ok());
  }
  arrow::ArrayVector columns(3);
  EXPECT_TRUE(snapshot.Finish(&columns[0]).ok());
  EXPECT_TRUE(event.Finish(&columns[1]).ok());
  EXPECT_TRUE(detail.Finish(&columns[2]).ok());
  return arrow::Table::Make(PlanEventsSchema(), columns);
}

std::vector<std::string> Bounds(const ChunkPlan& plan) {
  std::vector<std::string> out;
  for (const auto& chunk : plan.chunks) {
    out.push_back(std::to_string(chunk.index) + ":" + chunk.lo.dump() + ".." + chunk.hi.dump());
  }
  return out;
}

TEST(PlansTableTest, TheLayoutIsToldByTheColumns) {
  EXPECT_EQ(PlansLayoutOf(PlansSchema()->field_names()), PlansLayout::kChunkRows);
  EXPECT_EQ(PlansLayoutOf(PlanEventsSchema()->field_names()), PlansLayout::kEventRows);
  EXPECT_EQ(PlansLayoutOf({"snapshot", "event"}), PlansLayout::kChunkRows) << "checked as this engine's";
}

TEST(PlansTableTest, AReferencePlanIsReadFromItsSnapshotPlanRow) {
  // As 0.8.0 wrote them for an integer key (chunk_rows 4) and for a composite key, one wave
  // read; a plan of another snapshot in the same table is not this one.
  const std::string s = kS.ToString();
  const auto rows = EventTable({
      {s, "snapshot_open", R"({"mode": "chunked", "kind": "bootstrap", "generation": 0, "plan": {"kind": "int", "lo": 2, "hi": 19, "rows": 15}})"},
      {"0x0000001000000010001E", "snapshot_plan", R"({"kind": "int", "keys": ["id"], "chunk_rows": 9, "chunks": [[null, 3]], "chunk_count": 1})"},
      {s, "snapshot_plan", R"({"snapshot": ")" + s + R"(", "kind": "int", "keys": ["customer_id"], "chunk_rows": 4, "chunks": [[null, 9], [9, 13], [13, 17], [17, 20]], "chunk_count": 4})"},
      {s, "snapshot_chunk", R"({"snapshot": ")" + s + R"(", "wave": 0, "chunk": 0, "lo": null, "hi": 9, "last": false})"},
  });
  const auto plan = PlanFromTable(*rows, "any-app", kS, "/t_snapshot_plans");
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, "int");
  EXPECT_EQ(plan->keys, std::vector<std::string>{"customer_id"});
  EXPECT_EQ(plan->chunk_rows, 4);
  EXPECT_THAT(Bounds(*plan), ::testing::ElementsAre("0:null..9", "1:9..13", "2:13..17", "3:17..20"));
  EXPECT_FALSE(PlanFromTable(*rows, "any-app", Lsn::Parse("0x0000002B000000000001"), "/t_snapshot_plans"));

  const auto keyset = EventTable({{s, "snapshot_plan",
      R"({"snapshot": ")" + s + R"(", "kind": "keyset", "keys": ["order_id", "line_no"], "chunk_rows": 4, "chunks": [[null, [7, 7]], [[7, 7], [15, 15]], [[15, 15], null]], "chunk_count": 3})"}});
  EXPECT_THAT(Bounds(*PlanFromTable(*keyset, "a", kS, "/t")),
              ::testing::ElementsAre("0:null..[7,7]", "1:[7,7]..[15,15]", "2:[15,15]..null"));
}

TEST(PlansTableTest, AReferencePlanRowThatCannotBeAPlanIsRefused) {
  const std::string s = kS.ToString();
  for (const std::string detail : {"not json", R"({"kind": "int", "keys": ["id"]})",
                                   R"({"kind": "int", "keys": ["id"], "chunks": [[1, 2, 3]]})"}) {
    EXPECT_THAT([&] { PlanFromTable(*EventTable({{s, "snapshot_plan", detail}}), "a", kS, "/t_snapshot_plans"); },
                ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("plans table /t_snapshot_plans (mssql-cdc-pyspark 0.8.0's)")))
        << detail;
  }
}

TEST(PlansTableTest, APlanAndItsChunksAreWrittenAs0_8_0WritesThem) {
  ChunkPlan plan;
  plan.kind = "keyset";
  plan.keys = {"order_id", "line_no"};
  plan.chunk_rows = 4;
  plan.chunks = {Chunk{0, nullptr, json::array({7, 7}), std::nullopt},
                 Chunk{1, json::array({7, 7}), nullptr, std::nullopt}};
  const auto written = PlanToEventRows(plan, kS);
  ASSERT_EQ(written->num_rows(), 1);
  EXPECT_TRUE(written->schema()->Equals(*PlanEventsSchema()));
  const auto table = *arrow::Table::FromRecordBatches({written});
  const auto back = PlanFromTable(*table, "a", kS, "/t");
  ASSERT_TRUE(back);
  EXPECT_EQ(Bounds(*back), Bounds(plan));
  EXPECT_EQ(back->keys, plan.keys);
  const auto detail = json::parse(std::static_pointer_cast<arrow::StringArray>(written->column(2))->GetString(0));
  EXPECT_EQ(detail["chunk_count"], 2);
  EXPECT_EQ(detail["snapshot"], kS.ToString());

  const auto chunks = ChunksToEventRows(plan, kS, {ChunkRead{1, 3, true}});
  ASSERT_EQ(chunks->num_rows(), 1);
  EXPECT_EQ(std::static_pointer_cast<arrow::StringArray>(chunks->column(1))->GetString(0), "snapshot_chunk");
  EXPECT_EQ(json::parse(std::static_pointer_cast<arrow::StringArray>(chunks->column(2))->GetString(0)),
            (json{{"snapshot", kS.ToString()}, {"wave", 3}, {"chunk", 1}, {"lo", {7, 7}}, {"hi", nullptr}, {"last", true}}));
  EXPECT_THROW(ChunksToEventRows(plan, kS, {ChunkRead{2, 3, false}}), InternalError);
}

}  // namespace
}  // namespace mssql_cdc
