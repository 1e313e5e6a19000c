// The Spark SQL of apply_changes on Spark (docs/silver.md): the same rules as the native
// engine's silver (silver/), written as statements Spark runs, so that a silver table in any
// catalog or store is kept as the native engine keeps one at a path. A table is referred to by
// `table_sql`: a quoted name, or delta.`<path>` (delta::PathTableSql).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "core/table_ref.h"
#include "engine/finalization.h"
#include "silver/apply_plan.h"
#include "silver/wave_ranges.h"

namespace mssql_cdc::catalog {

// The column of the images that says the key's latest image deletes it.
inline constexpr char kDeletedColumn[] = "_mssql_cdc_deleted";

// The oldest stamp of the waves' rows the plan applies (a SELECT of one value); empty when the
// plan applies no wave.
std::string WaveStampSql(const std::string& bronze_sql, std::int64_t version, const SilverApplyPlan& plan);

// The bronze rows the plan applies, from `bronze_sql` at `version` (a SELECT);
// `oldest_wave_stamp` as WaveStampSql found it.
std::string PlanRowsSql(const std::string& bronze_sql, std::int64_t version, const SilverApplyPlan& plan,
                        const std::string& oldest_wave_stamp);

// The capture instances of bronze's rows within the plan's LSN bounds (a SELECT DISTINCT
// _capture_instance), every one of which must be the table's.
std::string PlanInstancesSql(const std::string& bronze_sql, std::int64_t version, const SilverApplyPlan& plan,
                             const std::string& oldest_wave_stamp);

// The rows of view `plan_view` (the rows the plan applies, in bronze's schema `bronze`) and the
// waves' range deletes (silver/range_deletes.h: one operation-1 row at the range's stamp for
// each key of silver inside a range, older than the stamp, that no chunk row holds), a SELECT.
std::string WithRangeDeletesSql(const std::string& plan_view, const std::string& silver_sql,
                                const arrow::Schema& bronze, const WaveRanges& ranges);

// The latest image of each key among the rows of view `rows_view` (a SELECT): silver's
// columns and kDeletedColumn. NULL keys are one key (Spark's PARTITION BY is null-safe).
std::string LatestImagesSql(const std::string& rows_view, const arrow::Schema& bronze,
                            const std::vector<std::string>& keys);

// The MERGE of the images of view `images_view` into silver `silver_sql` (whose columns are
// `silver`): null-safe key equality; a row takes an image only when newer than its
// _start_lsn; a rebuild also deletes every row without an image.
std::string MergeImagesSql(const std::string& silver_sql, const std::string& images_view,
                           const arrow::Schema& silver, const std::vector<std::string>& keys, bool rebuild);

// The MERGE that sets silver's position in a named control table, only when the stored one is
// still `expected` (compare and set: it changes no row otherwise), and its verdict to `verdict`
// when that is later than the stored one.
std::string SilverPositionSql(const TableRef& control, const std::string& silver_name,
                              const std::optional<SilverPosition>& expected, const SilverPosition& position,
                              const std::optional<Verdict>& verdict);

}  // namespace mssql_cdc::catalog
