// The batch snapshot source of Spark mode (feed/snapshot_scan.h): the driver's plan and
// schema, and each task's range read, for mssql_cdc.snapshot_source.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "delta/schema.h"
#include "core/errors.h"
#include "core/time.h"
#include "engine/facts.h"
#include "feed/snapshot_scan.h"
#include "bindings/arrow_stream.h"
#include "bindings/read_plan.h"
#include "bindings/source_options.h"
#include "snapshot/seed.h"

namespace nb = nanobind;

namespace mssql_cdc::python {

void BindSnapshot(nb::module_& m) {
  m.def("seed_point",
        [](nb::handle options, const std::optional<std::string>& time,
           const std::optional<std::string>& lsn) {
          const SourceOptions parsed = ParseSourceOptions(options);
          SeedAsOf as_of;
          if (time) {
            const auto micros = ParseDateTime(*time);
            if (!micros) throw ConfigError("seed as_of '" + *time + "' is not a time");
            as_of.time = UtcMicros{*micros};
          }
          if (lsn) as_of.lsn = Lsn::ParseLenient(*lsn);
          nb::gil_scoped_release release;
          return SeedPoint(parsed, as_of).ToJson();
        },
        nb::arg("options"), nb::arg("time").none(), nb::arg("lsn").none(),
        "The offset JSON of a seed as of `time` (UTC, ISO 8601) or `lsn`: the last commit at "
        "or before the time on the server's clock, or the LSN. ConfigError for a time in the "
        "future or an LSN above the max LSN; DataLossError when CDC no longer holds the "
        "changes after it.");
  m.def("seed_columns",
        [](nb::handle options, const std::vector<std::string>& copy_columns, bool allow_missing) {
          const SourceOptions parsed = ParseSourceOptions(options);
          nb::gil_scoped_release release;
          return SeedColumnsFor(parsed, copy_columns, allow_missing);
        },
        nb::arg("options"), nb::arg("copy_columns"), nb::arg("allow_missing_columns"),
        "Per captured column, (its name, the copy's column of that name ignoring case or "
        "None). ConfigError when the copy lacks a key column, or another captured column "
        "without allow_missing_columns.");
  m.def("seed_metadata",
        [](const std::string& capture_instance, const std::string& offset) {
          nb::dict values;
          for (const auto& [column, value] : SeedMetadata(capture_instance, Offset::FromJson(offset))) {
            std::visit(
                [&, &column = column](const auto& v) {
                  using V = std::decay_t<decltype(v)>;
                  if constexpr (std::is_same_v<V, UtcMicros>) {
                    values[column.c_str()] = FormatDateTime(v.value, 6);  // read as timestamp_ntz
                  } else {
                    values[column.c_str()] = v;
                  }
                },
                value);
          }
          return values;
        },
        nb::arg("capture_instance"), nb::arg("offset"),
        "The values of a seed's metadata columns by name (a timestamp as UTC text); bronze's "
        "other metadata columns are NULL in its rows.");
  m.def("seed_commit_metadata",
        [](const std::string& capture_instance, const std::string& offset) {
          return SeedCommitMetadata(capture_instance, Offset::FromJson(offset));
        },
        nb::arg("capture_instance"), nb::arg("offset"),
        "The userMetadata of the bronze commit that writes a seed.");
  m.def("seed_action",
        [](const std::optional<std::string>& found_lsn, bool found_chunked,
           const std::string& seed_lsn, bool reseed) {
          std::optional<FoundSnapshot> found;
          if (found_lsn) found = FoundSnapshot{Offset{Lsn::ParseLenient(*found_lsn), std::nullopt}, found_chunked};
          return DecideSeed(found, Lsn::ParseLenient(seed_lsn), reseed) == SeedAction::kWrite
                     ? "write"
                     : "existing";
        },
        nb::arg("found_lsn").none(), nb::arg("found_chunked"), nb::arg("seed_lsn"), nb::arg("reseed"),
        "\"write\" or \"existing\" (the target holds this seed already); ConfigError when the "
        "target holds another snapshot that reseed may not replace.");
  m.def("bootstrap_facts_row",
        [](const std::string& app_id, const std::string& target, const std::string& offset,
           std::int64_t rows, const std::string& started_at, std::int64_t duration_ms) {
          const auto started = ParseDateTime(started_at);
          const FactsRow row =
              BootstrapFactsRow(app_id, target, Offset::FromJson(offset), rows,
                                UtcMicros{started.value_or(NowUtc().value)}, duration_ms);
          return ToPyArrowBatch(FactsToRecordBatch({row}));
        },
        nb::arg("app_id"), nb::arg("target"), nb::arg("offset"), nb::arg("rows"),
        nb::arg("started_at"), nb::arg("duration_ms"),
        "The `bootstrap` facts row of a seed (a pyarrow.RecordBatch in the facts schema).");
  m.def("snapshot_schema_json",
        [](nb::handle options) {
          const SourceOptions parsed = ParseSourceOptions(options);
          nb::gil_scoped_release release;
          return delta::ToDeltaSchemaString(*SnapshotScanSchema(parsed));
        },
        nb::arg("options"),
        "The snapshot source's schema as Spark StructType JSON: the output schema, then "
        "_chunk INT with snapshotChunks.");
  m.def("snapshot_offset",
        [](nb::handle options, const std::string& lsn) {
          const SourceOptions parsed = ParseSourceOptions(options);
          const Lsn given = Lsn::ParseLenient(lsn);
          nb::gil_scoped_release release;
          return SnapshotScanOffset(parsed, given).ToJson();
        },
        nb::arg("options"), nb::arg("lsn"),
        "The offset JSON of a snapshot stamped `lsn`: that LSN and its commit time (UTC).");
  m.def("plan_snapshot",
        [](nb::handle options, int partitions) {
          const SourceOptions parsed = ParseSourceOptions(options);
          nb::gil_scoped_release release;
          return PlanSnapshotScan(parsed, partitions).ToJson();
        },
        nb::arg("options"), nb::arg("partitions"),
        "Plans a snapshot scan: the stamp (snapshotLsn, or the max LSN now) and the key "
        "ranges (snapshotChunks, or at most `partitions` planned), as JSON.");
  m.def("plan_snapshot_read",
        [](nb::handle options, int partitions) {
          const SourceOptions parsed = ParseSourceOptions(options);
          SnapshotScan scan;
          {
            nb::gil_scoped_release release;
            scan = PlanSnapshotScan(parsed, partitions);
          }
          std::vector<PlannedRange> ranges;
          for (const auto& range : scan.ranges) ranges.push_back({range.lo, range.hi});
          auto plan = ReadPlanJson(scan.stamp.lsn, scan.key_columns, ranges);
          plan["commit_ts"] = nlohmann::json::parse(scan.stamp.ToJson())["commit_ts"];
          return plan.dump();
        },
        nb::arg("options"), nb::arg("partitions"),
        "Plans a snapshot read as snapshot() takes it: JSON {lsn, commit_ts, keys, chunks: "
        "[[i, lo, hi], ...]}, the options snapshotLsn, snapshotKeys and snapshotChunks read.");
  m.def("read_snapshot_range",
        [](nb::handle options, const std::string& scan, std::size_t range) {
          const SourceOptions parsed = ParseSourceOptions(options);
          const SnapshotScan planned = SnapshotScan::FromJson(scan);
          std::shared_ptr<arrow::RecordBatchReader> reader;
          {
            nb::gil_scoped_release release;
            reader = ReadSnapshotScanRange(parsed, planned, range);
          }
          return ArrowStream(std::move(reader));
        },
        nb::arg("options"), nb::arg("scan"), nb::arg("range"),
        "Range `range` of a planned scan as an Arrow stream of operation-0 rows stamped with "
        "the scan's LSN.");
}

}  // namespace mssql_cdc::python
