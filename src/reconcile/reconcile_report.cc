#include "reconcile/reconcile_report.h"

#include <arrow/api.h>

#include <algorithm>

#include "core/errors.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "engine/table_schemas.h"

namespace mssql_cdc {
namespace {

template <typename Builder, typename Value>
void Put(Builder& builder, const std::optional<Value>& value) {
  arrow::Status status = value ? builder.Append(*value) : builder.AppendNull();
  if (!status.ok()) throw InternalError("building the reconcile report: " + status.ToString());
}

void PutDecimal(arrow::Decimal128Builder& builder, const std::optional<Int128>& value) {
  arrow::Status status;
  if (value) {
    const auto bits = static_cast<unsigned __int128>(*value);
    status = builder.Append(arrow::Decimal128(static_cast<std::int64_t>(bits >> 64),
                                              static_cast<std::uint64_t>(bits)));
  } else {
    status = builder.AppendNull();
  }
  if (!status.ok()) throw InternalError("building the reconcile report: " + status.ToString());
}

std::shared_ptr<arrow::Array> Done(arrow::ArrayBuilder& builder) {
  std::shared_ptr<arrow::Array> out;
  if (!builder.Finish(&out).ok()) throw InternalError("building the reconcile report");
  return out;
}

}  // namespace

std::shared_ptr<arrow::Schema> ReportSchema() {
  const auto text = arrow::utf8();
  const auto sum = arrow::decimal128(38, 0);
  return arrow::schema({
      delta::CommentedField("run_id", text, "the run that wrote the row (a UUID): every row of one run has it"),
      delta::CommentedField("run_at", arrow::timestamp(arrow::TimeUnit::MICRO), "when the run started, UTC"),
      delta::CommentedField("silver", text, "the silver table compared, as it was named"),
      delta::CommentedField("silver_version", arrow::int64(), "the Delta version of silver the run read"),
      delta::CommentedField("silver_lsn", text, "the LSN silver was current to: the later of the changes it applied "
                                 "and the snapshot it was last rebuilt from"),
      delta::CommentedField("source_lsn", text, "the source's max LSN, read before the source's rows"),
      delta::CommentedField("bucket_lo", text, "the bucket's or chunk's lower key bound, included, as JSON; null: "
                                "no lower bound"),
      delta::CommentedField("bucket_hi", text, "the bucket's or chunk's upper key bound, excluded, as JSON; null: "
                                "no upper bound"),
      delta::CommentedField("source_rows", arrow::int64(), "bucket rows: rows of the bucket in the source"),
      delta::CommentedField("source_key_sum", sum, "bucket rows: the sum of the bucket's keys in the source "
                                    "(one integer or date key)"),
      delta::CommentedField("silver_rows", arrow::int64(), "bucket rows: rows of the bucket in silver"),
      delta::CommentedField("silver_key_sum", sum, "bucket rows: the sum of the bucket's keys in silver"),
      delta::CommentedField("status", text, "bucket rows: MATCH, IN_FLIGHT or MISMATCH"),
      delta::CommentedField("hashed", arrow::boolean(), "bucket rows: whether the bucket was compared row by row"),
      delta::CommentedField("key", text, "key rows: the failing key, as a JSON object"),
      delta::CommentedField("failure_type", text, "MISSING_TARGET, MISSING_SOURCE or RECORD_DIFF for a key; "
                                   "CHUNK_TILING, CHUNK_ROWS or CHUNK_STAMP for a chunk check"),
      delta::CommentedField("detail", text, "what differs: the columns and silver's _start_lsn of a key, what a "
                             "chunk check found"),
  });
}

delta::CreateOptions ReportTableOptions() {
  return delta::CreateOptions{ReportSchema(),
                              {{kSchemaVersionProperty, kReconcileSchemaVersion}},
                              std::nullopt,
                              "mssql-cdc reconcile report: one row per bucket, failing key and "
                              "failed chunk check, per run"};
}

std::shared_ptr<arrow::RecordBatch> ReportBatch(const ReportRun& run, const std::vector<ReportRow>& rows) {
  const auto sum_type = arrow::decimal128(38, 0);
  arrow::StringBuilder run_id, silver, silver_lsn, source_lsn, lo, hi, status, key, failure, detail;
  arrow::TimestampBuilder run_at(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  arrow::Int64Builder version, source_rows, silver_rows;
  arrow::Decimal128Builder source_sum(sum_type), silver_sum(sum_type);
  arrow::BooleanBuilder hashed;
  for (const ReportRow& row : rows) {
    Put(run_id, std::optional<std::string>(run.run_id));
    Put(run_at, std::optional<std::int64_t>(run.run_at.value));
    Put(silver, std::optional<std::string>(run.silver));
    Put(version, std::optional<std::int64_t>(run.silver_version));
    Put(silver_lsn, run.silver_lsn);
    Put(source_lsn, row.source_lsn);
    Put(lo, row.bucket_lo);
    Put(hi, row.bucket_hi);
    Put(source_rows, row.source_rows);
    PutDecimal(source_sum, row.source_key_sum);
    Put(silver_rows, row.silver_rows);
    PutDecimal(silver_sum, row.silver_key_sum);
    Put(status, row.status);
    Put(hashed, row.hashed);
    Put(key, row.key);
    Put(failure, row.failure_type);
    Put(detail, row.detail);
  }
  return arrow::RecordBatch::Make(
      ReportSchema(), static_cast<std::int64_t>(rows.size()),
      {Done(run_id), Done(run_at), Done(silver), Done(version), Done(silver_lsn), Done(source_lsn),
       Done(lo), Done(hi), Done(source_rows), Done(source_sum), Done(silver_rows), Done(silver_sum),
       Done(status), Done(hashed), Done(key), Done(failure), Done(detail)});
}

void CheckReportColumns(const std::vector<std::string>& columns, const std::string& where) {
  const auto report = ReportSchema();
  for (const auto& field : report->fields()) {
    if (std::find(columns.begin(), columns.end(), field->name()) == columns.end()) {
      throw ConfigError("the report table " + where + " is not a reconcile report: it has no '" + field->name() +
                        "' column; name a new table or an earlier report");
    }
  }
}

void CheckReportTable(const std::string& uri) {
  if (!delta::DeltaTable::Exists(uri)) return;
  const auto table = delta::DeltaTable::Open(uri);
  CheckReportColumns(table.state().schema()->field_names(), uri);
  CheckSchemaVersion(table.state().metadata.configuration, std::stoi(kReconcileSchemaVersion),
                     "reconcile report table", "Delta table " + uri);
}

void AppendReport(const std::string& uri, const std::shared_ptr<arrow::RecordBatch>& rows) {
  delta::DeltaTable table = delta::DeltaTable::Exists(uri)
                                ? delta::DeltaTable::Open(uri)
                                : delta::DeltaTable::Create(uri, ReportTableOptions());
  delta::AppendOptions options;
  options.merge_schema = false;
  table.Append({rows}, options);
}

}  // namespace mssql_cdc
