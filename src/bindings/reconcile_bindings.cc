// Python access to reconcile (reconcile/reconcile.h) for python/mssql_cdc/reconcile.py: the
// whole run happens here, against the source the options name; Spark answers the lake's
// questions by running the SQL of catalog/reconcile_sql.h through `query` (a callable taking
// SQL text and returning a pyarrow.Table).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <nlohmann/json.hpp>

#include "catalog/reconcile_sql.h"
#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "delta/schema.h"
#include "bindings/arrow_stream.h"
#include "bindings/position_json.h"
#include "bindings/source_options.h"
#include "engine/delta_backfill_tables.h"
#include "reconcile/reconcile.h"
#include "snapshot/plans_table.h"
#include "source/open_source.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

// The lake as Spark reads it: silver and bronze pinned at the versions the run read first.
class SparkLakeSide : public LakeSide {
 public:
  SparkLakeSide(nb::object query, const nlohmann::json& state)
      : query_(std::move(query)),
        silver_sql_(state["silver_sql"]),
        silver_version_(state["silver_version"]),
        bronze_sql_(state["bronze_sql"]),
        bronze_name_(state["bronze_name"]),
        bronze_version_(state["bronze_version"]),
        facts_sql_(state.value("facts_sql", nlohmann::json(nullptr)).is_null()
                       ? std::nullopt : std::optional<std::string>(state["facts_sql"].get<std::string>())),
        plans_sql_(state.value("plans_sql", nlohmann::json(nullptr)).is_null()
                       ? std::nullopt : std::optional<std::string>(state["plans_sql"].get<std::string>())),
        plans_name_(state.value("plans_name", std::string())) {}

  SliceTallies TallySlices(const std::string& key, KeyUnit unit, const KeyGrid& grid) override {
    const auto rows = Query(catalog::SliceTallySql(silver_sql_, silver_version_, key, unit, grid));
    auto batch = rows->CombineChunksToBatch();
    if (!batch.ok()) throw InternalError("reconcile: " + batch.status().ToString());
    SliceTallies tallies;
    const auto slice = Int64s(**batch, 0), count = Int64s(**batch, 1);
    const auto& sum = static_cast<const arrow::Decimal128Array&>(*(*batch)->column(2));
    for (std::int64_t i = 0; i < (*batch)->num_rows(); ++i) {
      const arrow::Decimal128 value(sum.GetValue(i));
      const auto bits = (static_cast<unsigned __int128>(static_cast<std::uint64_t>(value.high_bits())) << 64) |
                        value.low_bits();
      tallies[slice->Value(i)] = Tally{count->Value(i), sum.IsNull(i) ? 0 : static_cast<Int128>(bits)};
    }
    return tallies;
  }
  std::int64_t CountRows() override {
    auto batch = Query(catalog::CountRowsSql(silver_sql_, silver_version_))->CombineChunksToBatch();
    if (!batch.ok()) throw InternalError("reconcile: " + batch.status().ToString());
    return Int64s(**batch, 0)->Value(0);
  }
  std::shared_ptr<arrow::Table> RowsBetween(const std::string& key, KeyUnit unit, std::optional<std::int64_t> lo,
                                            std::optional<std::int64_t> hi) override {
    return Query(catalog::RowsBetweenSql(silver_sql_, silver_version_, key, unit, lo, hi));
  }
  void ScanAllRows(const std::function<void(const arrow::RecordBatch&)>& visit) override {
    const auto rows = Query(catalog::RowsBetweenSql(silver_sql_, silver_version_, "_start_lsn", KeyUnit::kInteger,
                                                    std::nullopt, std::nullopt));
    visit(*ValueOrInternal(arrow::RecordBatch::MakeEmpty(rows->schema()), "reconcile: silver's rows"));
    arrow::TableBatchReader reader(*rows);
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      CheckInternal(reader.ReadNext(&batch), "reconcile: silver's rows");
      if (!batch) break;
      visit(*batch);
    }
  }
  std::shared_ptr<arrow::Table> ChangedKeysAfter(const std::vector<std::string>& keys,
                                                 const std::string& after_lsn) override {
    return Query(catalog::ChangedKeysSql(bronze_sql_, bronze_version_, keys, after_lsn));
  }
  std::vector<SnapshotEvent> SnapshotEvents() override {
    if (!facts_sql_) return {};
    return SnapshotEventsOf(*Query(catalog::SnapshotEventsSql(*facts_sql_, bronze_name_)));
  }
  std::optional<ChunkPlan> Plan(const std::string& app_id, const Lsn& snapshot) override {
    if (!plans_sql_) return std::nullopt;
    return PlanFromTable(*Query(catalog::PlanRowsSql(*plans_sql_, snapshot.ToString())), app_id, snapshot, plans_name_);
  }
  std::map<int, ChunkTally> ChunkTallies(const std::string& snapshot_lsn) override {
    auto batch = Query(catalog::ChunkTalliesSql(bronze_sql_, bronze_version_, snapshot_lsn))->CombineChunksToBatch();
    if (!batch.ok()) throw InternalError("reconcile: " + batch.status().ToString());
    std::map<int, ChunkTally> tallies;
    const auto chunk = Int64s(**batch, 0), rows = Int64s(**batch, 1);
    const auto& stamp = static_cast<const arrow::StringArray&>(*(*batch)->column(2));
    for (std::int64_t i = 0; i < (*batch)->num_rows(); ++i) {
      tallies[static_cast<int>(chunk->Value(i))] = ChunkTally{rows->Value(i), std::string(stamp.GetView(i))};
    }
    return tallies;
  }

 private:
  std::shared_ptr<arrow::Table> Query(const std::string& sql) {
    auto reader = ImportArrowStream(query_(sql), "the rows Spark returned");
    auto table = reader->ToTable();
    if (!table.ok()) throw InternalError("reconcile: " + table.status().ToString());
    return *table;
  }
  static std::shared_ptr<arrow::Int64Array> Int64s(const arrow::RecordBatch& batch, int column) {
    delta::EnsureComputeKernels();
    auto cast = arrow::compute::Cast(*batch.column(column), arrow::int64());
    if (!cast.ok()) throw InternalError("reconcile: " + cast.status().ToString());
    return std::static_pointer_cast<arrow::Int64Array>(*cast);
  }

  nb::object query_;
  std::string silver_sql_;
  std::int64_t silver_version_;
  std::string bronze_sql_;
  std::string bronze_name_;
  std::int64_t bronze_version_;
  std::optional<std::string> facts_sql_, plans_sql_;
  std::string plans_name_;
};

}  // namespace

void BindReconcile(nb::module_& m) {
  m.def("check_reconcile_options", &CheckReconcileOptions, nb::arg("bucket_rows"), nb::arg("sample"),
        "ConfigError for bucket_rows < 1 or a sample outside [0, 1].");
  m.def("check_report_columns",
        [](const std::vector<std::string>& columns, const std::string& where) { CheckReportColumns(columns, where); },
        nb::arg("columns"), nb::arg("where"), "ConfigError when a table is not a reconcile report.");
  m.def("silver_current_to",
        [](const std::optional<std::string>& position_json) { return SilverCurrentTo(PositionOf(position_json)); },
        nb::arg("position_json"), "The LSN silver is current to, from its position.");
  m.def(
      "reconcile",
      [](nb::dict options, const std::optional<std::vector<std::string>>& keys, std::int64_t bucket_rows,
         double sample, std::optional<std::uint64_t> seed, const std::string& state_json, nb::object query) {
        const SourceOptions source_options = ParseSourceOptions(options);
        const auto state_object = nlohmann::json::parse(state_json);
        LakeState state;
        state.silver_name = state_object["silver_name"];
        state.silver_schema = delta::FromDeltaSchemaString(state_object["silver_schema"], state.silver_name);
        state.silver_properties = state_object["silver_properties"].get<delta::StringMap>();
        state.silver_version = state_object["silver_version"];
        state.silver_lsn = SilverCurrentTo(PositionOf(
            state_object["position"].is_null() ? std::nullopt
                                               : std::optional<std::string>(state_object["position"].get<std::string>())));
        state.bronze_name = state_object["bronze_name"];
        state.bronze_schema = delta::FromDeltaSchemaString(state_object["bronze_schema"], state.bronze_name);
        state.bronze_id = state_object["bronze_id"];
        state.has_facts = state_object.value("has_facts", false);
        ReconcileOptions run;
        run.capture_instance = source_options.capture_instance;
        run.keys = keys.value_or(std::vector<std::string>{});
        run.bucket_rows = bucket_rows;
        run.sample = sample;
        run.seed = seed;
        SparkLakeSide lake(std::move(query), state_object);
        std::unique_ptr<Source> source = MakeSourceFactory(source_options)();
        const ReconcileResult result = Reconcile(run, state, *source, lake);
        nlohmann::json summary = {{"run_id", result.run.run_id},     {"silver_version", result.run.silver_version},
                                  {"silver_lsn", result.run.silver_lsn ? nlohmann::json(*result.run.silver_lsn) : nlohmann::json(nullptr)},
                                  {"source_lsn", result.source_lsn}, {"buckets", result.buckets},
                                  {"match", result.match},           {"in_flight", result.in_flight},
                                  {"mismatch", result.mismatch},     {"hashed", result.hashed},
                                  {"failures", result.failures}};
        summary["keys_in_flight"] = nlohmann::json::array();
        for (const auto& key : result.keys_in_flight) summary["keys_in_flight"].push_back(nlohmann::json::parse(key));
        return nb::make_tuple(summary.dump(), ToPyArrowBatch(ReportBatch(result.run, result.report)));
      },
      nb::arg("options"), nb::arg("keys").none(), nb::arg("bucket_rows"), nb::arg("sample"), nb::arg("seed").none(),
      nb::arg("state_json"), nb::arg("query"),
      "One reconcile run (reconcile/reconcile.h); returns (summary JSON, report as a pyarrow.RecordBatch).");
}

}  // namespace mssql_cdc::python
