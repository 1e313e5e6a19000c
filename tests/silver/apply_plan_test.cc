// What one silver call applies, from silver's position and the facts of bronze's snapshots: a
// first call rebuilds; a newer snapshot rebuilds; an open chunked snapshot is applied wave by
// wave, ranked with the changes from its oldest new stamp, with the verdict held.
#include "silver/apply_plan.h"

#include <gtest/gtest.h>

namespace mssql_cdc {
namespace {

constexpr char kS[] = "0x00000000000000000010";

SnapshotEvent Event(const std::string& kind, const std::string& lsn, const std::string& detail) {
  SnapshotEvent event;
  event.event = kind;
  event.app_id = "orders-v1";
  event.min_lsn = lsn;
  event.max_lsn = lsn;
  event.detail = detail;
  return event;
}

std::vector<SnapshotEvent> OpenWithWaves(int waves) {
  std::vector<SnapshotEvent> events = {
      Event("snapshot_open", kS, R"({"mode":"chunked","kind":"bootstrap","generation":0})")};
  for (int wave = 0; wave < waves; ++wave) {
    for (int chunk = wave * 2; chunk < wave * 2 + 2; ++chunk) {
      events.push_back(Event("snapshot_chunk", kS,
                             std::string(R"({"snapshot":")") + kS + R"(","chunk":)" + std::to_string(chunk) +
                                 R"(,"wave":)" + std::to_string(wave) + "}"));
    }
  }
  return events;
}

TEST(SilverApplyPlanTest, AFirstCallRebuildsFromEveryChange) {
  const auto plan = PlanSilverApply(std::nullopt, std::nullopt);
  EXPECT_TRUE(plan.rebuild);
  EXPECT_FALSE(plan.snapshot_lsn);
  EXPECT_FALSE(SilverRowsFilter(plan));
}

TEST(SilverApplyPlanTest, ANewerSnapshotRebuildsAndTheSameOneDoesNot) {
  SilverPosition position{std::string("0x00000000000000000020"), std::string(kS), std::nullopt, std::nullopt};
  const auto same = PlanSilverApply(position, BronzeSnapshot{kS, false, true, {}});
  EXPECT_FALSE(same.rebuild);
  EXPECT_EQ(SilverRowsFilter(same), (std::pair<std::string, std::string>{">", "0x00000000000000000020"}));
  const auto newer = PlanSilverApply(position, BronzeSnapshot{"0x00000000000000000030", false, true, {}});
  EXPECT_TRUE(newer.rebuild);
  EXPECT_EQ(SilverRowsFilter(newer), (std::pair<std::string, std::string>{">=", "0x00000000000000000030"}));
  EXPECT_TRUE(PlanTakesRow(newer, 0, "0x00000000000000000030", std::nullopt));
  EXPECT_FALSE(PlanTakesRow(newer, 0, kS, std::nullopt));  // an older snapshot's rows
  EXPECT_TRUE(PlanTakesRow(newer, 2, "", std::nullopt));
}

TEST(SilverApplyPlanTest, AnOpenChunkedSnapshotIsAppliedWaveByWave) {
  const auto open = ChunkedSnapshotOf(OpenWithWaves(2), kS);
  EXPECT_FALSE(open.complete);
  ASSERT_EQ(open.chunk_waves.size(), 4u);
  SilverPosition position{std::string("0x00000000000000000040"), std::nullopt, std::string(kS), 0};
  const auto plan = PlanSilverApply(position, open);
  EXPECT_FALSE(plan.rebuild);
  EXPECT_TRUE(plan.hold_verdict);
  EXPECT_EQ(plan.wave_chunks, (std::vector<int>{2, 3}));  // wave 1 only: wave 0 is in
  EXPECT_EQ(plan.through_wave, 1);
  EXPECT_TRUE(PlanTakesRow(plan, 0, kS, 3));
  EXPECT_FALSE(PlanTakesRow(plan, 0, kS, 1));
  // The wave's stamp is older than silver's position: its changes are read again with it.
  EXPECT_EQ(SilverRowsFilter(plan, "0x00000000000000000018"),
            (std::pair<std::string, std::string>{">=", "0x00000000000000000018"}));
  EXPECT_EQ(SilverRowsFilter(plan, "0x00000000000000000050"),
            (std::pair<std::string, std::string>{">", "0x00000000000000000040"}));
  // The position: changes only move applied_lsn; the wave is recorded.
  const auto moved = PositionAfter(plan, position, "0x00000000000000000045");
  EXPECT_EQ(moved.applied_lsn, "0x00000000000000000045");
  EXPECT_EQ(moved.open_snapshot_lsn, kS);
  EXPECT_EQ(moved.snapshot_wave, 1);
  EXPECT_EQ(PositionAfter(plan, position, "").applied_lsn, "0x00000000000000000040");
}

TEST(SilverApplyPlanTest, ItsCompletionRebuildsByAbsence) {
  auto events = OpenWithWaves(2);
  events.push_back(Event("bootstrap", kS, "{}"));
  const auto done = ChunkedSnapshotOf(events, kS);
  EXPECT_TRUE(done.complete);
  SilverPosition position{std::string("0x00000000000000000040"), std::nullopt, std::string(kS), 1};
  const auto plan = PlanSilverApply(position, done);
  EXPECT_TRUE(plan.rebuild);
  EXPECT_FALSE(plan.hold_verdict);
  EXPECT_EQ(plan.snapshot_lsn, kS);
  const auto moved = PositionAfter(plan, position, "0x00000000000000000045");
  EXPECT_EQ(moved.snapshot_lsn, kS);
  EXPECT_FALSE(moved.open_snapshot_lsn);
  EXPECT_FALSE(moved.snapshot_wave);
}

}  // namespace
}  // namespace mssql_cdc
