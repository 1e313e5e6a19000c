#include "fleet/tables_to_stream.h"

#include <gtest/gtest.h>

namespace mssql_cdc {
namespace {

CaptureInstanceInfo Instance(const std::string& name, const std::string& table, std::int64_t created) {
  CaptureInstanceInfo info;
  info.name = name;
  info.source_schema = "dbo";
  info.source_table = table;
  info.create_date = LocalMicros{created};
  return info;
}

TEST(TablesToStream, OnePerTableTheFirstEnabledNeverTheHeartbeat) {
  const auto judged = JudgeInstances({
      Instance("dbo_orders_v2", "orders", 20),
      Instance("DBO_CDC_HEARTBEAT", "cdc_heartbeat", 5),  // names are matched ignoring case
      Instance("dbo_orders", "Orders", 10),               // so are tables
      Instance("dbo_customers", "customers", 30),
      Instance("b_twin", "twins", 7),
      Instance("a_twin", "twins", 7),  // enabled at the same moment: the name decides
  });
  std::vector<std::string> streamed, left_out;
  for (const auto& i : judged) (i.stream ? streamed : left_out).push_back(i.capture_instance);
  EXPECT_EQ(streamed, (std::vector<std::string>{"dbo_customers", "dbo_orders", "a_twin"}));
  EXPECT_EQ(left_out, (std::vector<std::string>{"DBO_CDC_HEARTBEAT", "dbo_orders_v2", "b_twin"}));
  for (const auto& i : judged) {
    if (i.capture_instance == "dbo_orders_v2") {
      EXPECT_EQ(i.why_not, "a newer instance of dbo.orders: the stream of dbo_orders moves to it at the switch");
    }
    if (!i.stream) EXPECT_FALSE(i.why_not.empty());
  }
  EXPECT_TRUE(JudgeInstances({}).empty());
}

}  // namespace
}  // namespace mssql_cdc
