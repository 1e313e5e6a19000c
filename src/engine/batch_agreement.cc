#include "engine/batch_agreement.h"

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/user_text.h"
#include "delta/table.h"
#include "engine/stream_checkpoint.h"

namespace mssql_cdc {
namespace {

std::optional<Lsn> LsnField(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string()) return std::nullopt;
  return Lsn::TryParse(it->get<std::string>());
}

std::string Range(const Lsn& start, const Lsn& end) {
  return "(" + start.ToString() + ", " + end.ToString() + "]";
}

constexpr char kRecoverNative[] =
    "Nothing was written. Another run writing this table with the same app_id, a restored "
    "backup of the checkpoint or of the table, or a checkpoint directory copied from another "
    "run causes this. To recover: put back the checkpoint that belongs to this table (or the "
    "table that belongs to this checkpoint), or start over into a new target with a new "
    "checkpoint and a new app_id (with bootstrap=true to take the table's current rows).";

[[noreturn]] void Disagree(const BronzeCheck& check, const delta::DeltaTable& bronze,
                           const std::string& what) {
  throw ConfigError("bronze " + bronze.uri() + " and checkpoint " + check.checkpoint +
                    " disagree about app_id '" + check.app_id + "': " + what + ". " +
                    kRecoverNative);
}

// The range bronze's commit holding its newest txn recorded, against the checkpoint's range
// of that batch.
void CheckNewestRange(const delta::DeltaTable& bronze, const StreamCheckpoint& checkpoint,
                      const BronzeCheck& check, std::int64_t batch_id) {
  const auto commit = bronze.CommitHoldingTxn(check.app_id);
  if (!commit || !commit->user_metadata) return;  // not on disk any more, or not ours to read
  const auto offsets = checkpoint.ReadOffsets(batch_id);
  if (!offsets) {
    Disagree(check, bronze,
             "bronze holds batch " + std::to_string(batch_id) +
                 " (table version " + std::to_string(commit->table_version) +
                 "), of which the checkpoint has no offsets");
  }
  if (auto differs = RecordedRangeDiffers(*commit->user_metadata, offsets->start.lsn,
                                          offsets->end.lsn)) {
    Disagree(check, bronze,
             "bronze's batch " + std::to_string(batch_id) + " (table version " +
                 std::to_string(commit->table_version) + ") " + *differs +
                 ", where the checkpoint's batch " + std::to_string(batch_id) + " reads " +
                 Range(offsets->start.lsn, offsets->end.lsn));
  }
}

}  // namespace

std::optional<std::string> RecordedRangeDiffers(const std::string& user_metadata,
                                                const Lsn& start, const Lsn& end) {
  const auto doc = nlohmann::json::parse(user_metadata, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;
  const auto recorded_start = LsnField(doc, "start_lsn");
  const auto recorded_end = LsnField(doc, "end_lsn");
  if (recorded_start && recorded_end) {
    if (*recorded_start == start && *recorded_end == end) return std::nullopt;
    return "read " + Range(*recorded_start, *recorded_end);
  }
  // Written before the range was recorded: its rows must at least lie inside the range.
  const auto min_lsn = LsnField(doc, "min_lsn");
  const auto max_lsn = LsnField(doc, "max_lsn");
  if (min_lsn && max_lsn && (*min_lsn <= start || *max_lsn > end)) {
    return "holds rows from LSN " + min_lsn->ToString() + " to " + max_lsn->ToString();
  }
  return std::nullopt;
}

bool CheckBronzeAgrees(delta::DeltaTable& bronze, const StreamCheckpoint& checkpoint,
                       const BronzeCheck& check, const BatchOffsets& batch) {
  const auto& versions = bronze.CatchUp().app_versions;
  const auto it = versions.find(check.app_id);
  const std::int64_t held = it == versions.end() ? -1 : it->second;
  if (held == batch.batch_id) {
    CheckHeldBatchAgrees(bronze, check, batch);
    return true;
  }
  if (held != check.expected_txn) {
    const std::string bronze_side =
        held < 0 ? "bronze holds no batch of it"
                 : "bronze's newest batch of it is " + std::to_string(held);
    const std::string checkpoint_side =
        check.expected_txn < 0
            ? "the checkpoint has committed no batch that wrote rows"
            : "the checkpoint's newest committed batch that wrote rows is " +
                  std::to_string(check.expected_txn);
    Disagree(check, bronze,
             bronze_side + ", while " + checkpoint_side + " and batch " +
                 std::to_string(batch.batch_id) + " comes next");
  }
  if (check.verify_newest_range && held >= 0) CheckNewestRange(bronze, checkpoint, check, held);
  return false;
}

void CheckHeldBatchAgrees(const delta::DeltaTable& bronze, const BronzeCheck& check,
                          const BatchOffsets& batch) {
  const auto commit = bronze.CommitHoldingTxn(check.app_id);
  if (!commit || !commit->user_metadata) return;
  if (commit->txn_version != batch.batch_id) {
    Disagree(check, bronze,
             "bronze's newest batch of it is " + std::to_string(commit->txn_version) +
                 ", past batch " + std::to_string(batch.batch_id) + " that the checkpoint runs");
  }
  if (auto differs = RecordedRangeDiffers(*commit->user_metadata, batch.start.lsn, batch.end.lsn)) {
    Disagree(check, bronze,
             "bronze's batch " + std::to_string(batch.batch_id) + " (table version " +
                 std::to_string(commit->table_version) + ") " + *differs +
                 ", where the checkpoint's batch " + std::to_string(batch.batch_id) + " reads " +
                 Range(batch.start.lsn, batch.end.lsn));
  }
}

void CheckFactsAgree(const std::vector<FactsBatchRow>& recorded, const std::string& app_id,
                     const std::string& facts_table, std::int64_t batch_id,
                     const std::optional<Lsn>& start, const std::optional<Lsn>& end) {
  const auto fail = [&](const std::string& what) {
    throw ConfigError(
        "the checkpoint of app_id '" + app_id + "' disagrees with facts table " + facts_table +
        ": " + what +
        ". The query's checkpoint was deleted, rewound or copied from another query while the "
        "tables kept its batches; nothing of this batch was written. Run one query per "
        "checkpoint; to start over, give the query a new checkpoint and a new app_id (and a new "
        "target, or bootstrap=true), or put back the checkpoint that wrote these batches.");
  };
  std::optional<std::int64_t> newest;
  for (const auto& row : recorded) {
    if (!newest || row.batch_id > *newest) newest = row.batch_id;
  }
  if (newest && *newest > batch_id) {
    fail("it holds batch " + std::to_string(*newest) + ", later than batch " +
         std::to_string(batch_id) + " that Spark runs now");
  }
  for (const auto& row : recorded) {
    if (!row.end_lsn) continue;
    const auto recorded_end = Lsn::TryParse(*row.end_lsn);
    if (!recorded_end) continue;
    if (row.batch_id == batch_id && end && *recorded_end != *end) {
      fail("its batch " + std::to_string(batch_id) + " ended at LSN " + recorded_end->ToString() +
           ", while Spark runs batch " + std::to_string(batch_id) + " to LSN " + end->ToString());
    }
    if (row.batch_id == batch_id - 1 && start && *recorded_end != *start) {
      fail("its batch " + std::to_string(batch_id - 1) + " ended at LSN " +
           recorded_end->ToString() + ", while Spark starts batch " + std::to_string(batch_id) +
           " after LSN " + start->ToString());
    }
  }
}

void CheckFreshStartOnBronze(const std::map<std::string, std::int64_t>& app_versions,
                             const std::string& app_id, const std::string& bronze) {
  const auto own_generation = [&](const std::string& id) {
    const std::string prefix = app_id + ".g";
    return id.size() > prefix.size() && id.compare(0, prefix.size(), prefix) == 0 &&
           id.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
  };
  std::string others;
  for (const auto& [id, version] : app_versions) {
    if (id.find('#') != std::string::npos || id == app_id || own_generation(id)) continue;
    others += (others.empty() ? "" : ", ") + QuoteUserText(id);
  }
  if (others.empty()) return;
  throw ConfigError(
      "bronze " + QuoteUserText(bronze, kPathShown) + " holds micro-batches of another stream (app_id " +
      others + "), and this one (app_id " + QuoteUserText(app_id) +
      ") starts afresh from the earliest change, so it would write their changes again. To go on "
      "with that stream, run it with its own app_id and checkpoint; to go on into this bronze "
      "under a new app_id, give startingLsn = the end of its last batch (the facts table's "
      "end_lsn, or mssql_cdc.pipeline.native_starting_lsn of a native stream's checkpoint); or "
      "give a new bronze table");
}

}  // namespace mssql_cdc
