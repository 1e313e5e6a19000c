#include "schema_change/switch_progress.h"

#include <arrow/table.h>

#include <algorithm>

#include "delta/table_cells.h"
#include "schema_change/batch_schema.h"

namespace mssql_cdc {

std::vector<SwitchProgress> SwitchesOf(const arrow::Table& facts, const std::string& app_id) {
  std::vector<SwitchProgress> out;
  std::optional<std::int64_t> latest;
  for (std::int64_t row = 0; row < facts.num_rows(); ++row) {
    if (delta::TextCell(facts, "app_id", row) != app_id) continue;
    const auto batch = delta::IntCell(facts, "batch_id", row);
    const auto event = delta::TextCell(facts, "event", row);
    if (!event) {
      if (batch && (!latest || *batch > *latest)) latest = batch;
      continue;
    }
    if (*event != facts_event::kCaptureInstanceSwitched || !batch) continue;
    // detail: "old -> new" then, after "; ", what the new one leaves out.
    const std::string detail = delta::TextCell(facts, "detail", row).value_or("");
    const std::string head = detail.substr(0, detail.find(';'));
    const std::size_t arrow_at = head.find(" -> ");
    if (arrow_at == std::string::npos) continue;
    SwitchProgress progress;
    progress.from_instance = head.substr(0, arrow_at);
    progress.to_instance = head.substr(arrow_at + 4);
    progress.at_lsn = delta::TextCell(facts, "min_lsn", row).value_or("");
    progress.batch_id = *batch;
    out.push_back(std::move(progress));
  }
  for (auto& progress : out) progress.latest_batch = latest;
  std::sort(out.begin(), out.end(), [](const SwitchProgress& a, const SwitchProgress& b) {
    return a.at_lsn < b.at_lsn;
  });
  return out;
}

}  // namespace mssql_cdc
