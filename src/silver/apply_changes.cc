#include "silver/apply_changes.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/user_text.h"
#include "delta/table.h"
#include "engine/delta_backfill_tables.h"
#include "engine/table_schemas.h"
#include "silver/latest_images.h"
#include "silver/silver_merge.h"
#include "silver/silver_schema.h"
#include "snapshot/snapshot_finder.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

// The property that ties a silver table to its bronze: bronze's Delta table id, which stays
// when bronze is renamed or moved.
constexpr char kBronzeIdProperty[] = "mssql_cdc.bronze_id";

bool Listed(std::string_view name, const std::vector<std::string>& names) {
  for (const auto& listed : names) {
    if (EqualsIgnoringAsciiCase(name, listed)) return true;
  }
  return false;
}

// What the facts rows say of a chunked snapshot at `snapshot` of bronze `target`: complete
// once a bootstrap or resnapshot row closes it at or past it.
bool ChunkedSnapshotComplete(const std::string& facts, const std::string& target,
                             const std::string& snapshot) {
  if (!delta::DeltaTable::Exists(facts)) return false;
  for (const auto& event : ReadSnapshotEvents(delta::DeltaTable::Open(facts), target)) {
    if ((event.event == "bootstrap" || event.event == "resnapshot") && event.max_lsn &&
        *event.max_lsn >= snapshot) {
      return true;
    }
  }
  return false;
}

// The bronze rows a call applies, checked to be of the table's capture instances. `from`
// excludes rows at or below it (incremental), `snapshot` keeps that snapshot's rows and every
// change (a rebuild's rows are those at or after the snapshot's LSN).
std::shared_ptr<arrow::Table> RowsToApply(const delta::DeltaTable& bronze,
                                          const std::optional<std::string>& after,
                                          const std::optional<std::string>& snapshot,
                                          const ApplyChangesOptions& options) {
  std::vector<delta::FilterTerm> filter;
  if (snapshot) {
    filter.push_back({std::string(kStartLsnColumn), ">=", *snapshot});
  } else if (after) {
    filter.push_back({std::string(kStartLsnColumn), ">", *after});
  }
  auto rows = bronze.Read(filter);
  const auto operations = rows->GetColumnByName(std::string(kOperationColumn));
  const auto instances = rows->GetColumnByName(std::string(kCaptureInstanceColumn));
  const auto stamps = rows->GetColumnByName(std::string(kSnapshotColumn));
  const auto lsns = rows->GetColumnByName(std::string(kStartLsnColumn));
  auto combine = [](const std::shared_ptr<arrow::ChunkedArray>& column) -> std::shared_ptr<arrow::Array> {
    if (!column) return nullptr;
    auto combined = arrow::Concatenate(column->chunks());
    if (!combined.ok()) throw InternalError("reading bronze rows: " + combined.status().ToString());
    return *combined;
  };
  const auto op = std::static_pointer_cast<arrow::Int32Array>(combine(operations));
  const auto ci = std::static_pointer_cast<arrow::StringArray>(combine(instances));
  const auto stamp = std::static_pointer_cast<arrow::StringArray>(combine(stamps));
  const auto lsn = std::static_pointer_cast<arrow::StringArray>(combine(lsns));
  arrow::BooleanBuilder keep;
  if (!keep.Reserve(rows->num_rows()).ok()) throw InternalError("selecting bronze rows");
  for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
    if (ci->IsNull(i) || !Listed(ci->GetView(i), options.capture_instances)) {
      throw ConfigError(
          "bronze " + options.bronze + " holds rows of capture instance " +
          QuoteUserText(ci->IsNull(i) ? std::string("NULL") : std::string(ci->GetView(i))) +
          ", which is not one of the table's (" + [&] {
            std::string names;
            for (const auto& n : options.capture_instances) names += (names.empty() ? "" : ", ") + n;
            return names;
          }() + "); after a capture-instance switch, give the stream's options so that apply_changes "
                "can ask SQL Server which capture instances belong to the table");
    }
    bool take = true;
    if (op->Value(i) == 0) {
      // Snapshot rows count only in a rebuild from their own snapshot.
      const auto own = stamp && stamp->IsValid(i) ? stamp->GetView(i) : lsn->GetView(i);
      take = snapshot.has_value() && own == *snapshot;
    }
    keep.UnsafeAppend(take);
  }
  std::shared_ptr<arrow::Array> mask;
  if (!keep.Finish(&mask).ok()) throw InternalError("selecting bronze rows");
  auto kept = arrow::compute::Filter(rows, mask);
  if (!kept.ok()) throw InternalError("selecting bronze rows: " + kept.status().ToString());
  return kept->table();
}

}  // namespace

ApplyResult ApplyChanges(const ApplyChangesOptions& options) {
  ApplyResult result;
  if (options.bronze.empty() || options.silver.empty() || options.control.empty()) {
    throw ConfigError("apply_changes needs bronze, silver and control tables");
  }
  if (NormalLocation(options.bronze) == NormalLocation(options.silver)) {
    throw ConfigError("the silver table " + options.silver + " is its own bronze; name another table");
  }
  if (options.capture_instances.empty()) {
    throw ConfigError("apply_changes needs the capture instance of bronze " + options.bronze);
  }
  CheckExistingTable(options.control, TableKind::kControl);
  if (!delta::DeltaTable::Exists(options.bronze)) {
    spdlog::warn("apply_changes: bronze {} does not exist yet; silver {} is left as it is",
                 options.bronze, options.silver);
    return result;
  }
  result.bronze_found = true;
  CheckExistingTable(options.bronze, TableKind::kBronze);
  if (options.facts) CheckExistingTable(*options.facts, TableKind::kFacts);

  // The verdict first: bronze read afterwards holds at least what it covers.
  const std::string verdict_name =
      options.bronze_verdict_name.empty() ? options.bronze : options.bronze_verdict_name;
  const auto bronze_verdict = ReadVerdict(options.control, verdict_name);
  const auto position = ReadSilverPosition(options.control, options.silver);
  auto bronze = delta::DeltaTable::Open(options.bronze);
  const auto bronze_schema = bronze.snapshot().schema();
  const auto keys = ResolveSilverKeys(options.keys, *bronze_schema, options.bronze);
  const std::string& bronze_id = bronze.snapshot().metadata.id;

  std::optional<delta::DeltaTable> silver;
  if (delta::DeltaTable::Exists(options.silver)) {
    silver.emplace(delta::DeltaTable::Open(options.silver));
    CheckSilverOfBronze(*silver->snapshot().schema(), options.silver, *bronze_schema, options.bronze, keys);
    const auto& properties = silver->snapshot().metadata.configuration;
    auto tied = properties.find(kBronzeIdProperty);
    if (tied != properties.end() && tied->second != bronze_id) {
      throw ConfigError("silver " + options.silver + " is kept from another bronze table (Delta table id " +
                        tied->second + "), not from " + options.bronze + " (id " + bronze_id +
                        "); name the silver table of this bronze, or a new one");
    }
  }

  // Which rows: a rebuild from the newest snapshot bronze holds when silver has not been
  // rebuilt from it, else the changes past silver's position.
  const auto found = FindSnapshot(bronze, options.capture_instances);
  bool snapshot_open = false;
  if (found && found->chunked) {
    if (!options.facts) {
      throw ConfigError("bronze " + options.bronze + " holds the rows of a chunked snapshot; give the "
                        "stream's facts table so that apply_changes can tell whether it is complete");
    }
    snapshot_open = !ChunkedSnapshotComplete(*options.facts, options.bronze, found->offset.lsn.ToString());
  }
  const std::optional<std::string> found_lsn =
      found && !snapshot_open ? std::optional(found->offset.lsn.ToString()) : std::nullopt;
  const bool newer_snapshot =
      found_lsn && (!position || !position->snapshot_lsn || *found_lsn > *position->snapshot_lsn);
  result.rebuilt = !position || newer_snapshot;
  const auto rows = RowsToApply(bronze, result.rebuilt ? std::nullopt : position->applied_lsn,
                                newer_snapshot ? found_lsn : std::nullopt, options);
  result.bronze_rows = rows->num_rows();

  if (!silver) {
    auto create = SilverTableOptions(*bronze_schema, options.bronze);
    create.properties[kBronzeIdProperty] = bronze_id;
    silver.emplace(delta::DeltaTable::Create(options.silver, create));
  }
  const auto images = LatestImagesOf(rows, keys, SilverSchema(*bronze_schema));
  const auto merged = MergeIntoSilver(*silver, images, keys, result.rebuilt);
  result.upserted = merged.upserted;
  result.deleted = merged.deleted;
  result.unchanged = merged.unchanged;
  result.silver_version = merged.commit.version;

  SilverPosition moved = position.value_or(SilverPosition{});
  if (!images.max_lsn.empty() && (!moved.applied_lsn || images.max_lsn > *moved.applied_lsn)) {
    moved.applied_lsn = images.max_lsn;
  }
  if (newer_snapshot) moved.snapshot_lsn = found_lsn;
  if (result.rebuilt && !moved.applied_lsn) moved.applied_lsn = found_lsn;
  std::optional<Verdict> verdict;
  if (!options.facts) {
    spdlog::warn("apply_changes: no facts table for silver {}: its verdict does not move (give the "
                 "stream's facts table)", options.silver);
  } else if (!snapshot_open) {
    verdict = bronze_verdict;
  }
  WriteSilverPosition(options.control, options.silver, position, moved, verdict);
  result.applied_lsn = moved.applied_lsn;
  if (auto now = ReadVerdict(options.control, options.silver)) result.finalized_until = now->finalized_until;
  return result;
}

}  // namespace mssql_cdc
