// The reconcile report (docs/reference/tables.md): one row per bucket, one per failing key, one
// per failed chunk check, appended per run to a report table when one is named. Both modes
// build the rows here; the native engine appends them itself, Spark through a DataFrame.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/int128.h"
#include "core/time.h"
#include "delta/table_options.h"

namespace mssql_cdc {

inline constexpr char kReconcileSchemaVersion[] = "0";

// One report row. Bucket rows set the counts, sums, status and hashed; key rows the key,
// failure_type and detail; chunk rows failure_type, detail and the chunk's bounds.
struct ReportRow {
  std::optional<std::string> bucket_lo, bucket_hi;  // JSON
  std::optional<std::string> source_lsn;
  std::optional<std::int64_t> source_rows, silver_rows;
  std::optional<Int128> source_key_sum, silver_key_sum;
  std::optional<std::string> status;
  std::optional<bool> hashed;
  std::optional<std::string> key;  // JSON object
  std::optional<std::string> failure_type, detail;
};

// What every row of one run shares.
struct ReportRun {
  std::string run_id;
  UtcMicros run_at;
  std::string silver;
  std::int64_t silver_version = -1;
  std::optional<std::string> silver_lsn;
};

std::shared_ptr<arrow::Schema> ReportSchema();
// The report table's create options: ReportSchema, its comment and schema version.
delta::CreateOptions ReportTableOptions();
std::shared_ptr<arrow::RecordBatch> ReportBatch(const ReportRun& run, const std::vector<ReportRow>& rows);

// ConfigError naming `where` when `columns` lack one of ReportSchema's.
void CheckReportColumns(const std::vector<std::string>& columns, const std::string& where);
// ConfigError when an existing table at `uri` is not a reconcile report (lacks a column of
// ReportSchema); nothing happens when there is none.
void CheckReportTable(const std::string& uri);
// Appends the run's rows, creating the table first when missing.
void AppendReport(const std::string& uri, const std::shared_ptr<arrow::RecordBatch>& rows);

}  // namespace mssql_cdc
