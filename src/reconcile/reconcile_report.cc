#include "reconcile/reconcile_report.h"

#include <arrow/api.h>

#include <algorithm>

#include "core/errors.h"
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
      arrow::field("run_id", text), arrow::field("run_at", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("silver", text), arrow::field("silver_version", arrow::int64()),
      arrow::field("silver_lsn", text), arrow::field("source_lsn", text),
      arrow::field("bucket_lo", text), arrow::field("bucket_hi", text),
      arrow::field("source_rows", arrow::int64()), arrow::field("source_key_sum", sum),
      arrow::field("silver_rows", arrow::int64()), arrow::field("silver_key_sum", sum),
      arrow::field("status", text), arrow::field("hashed", arrow::boolean()),
      arrow::field("key", text), arrow::field("failure_type", text), arrow::field("detail", text),
  });
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
  const auto schema = delta::DeltaTable::Open(uri).state().schema();
  CheckReportColumns(schema->field_names(), uri);
}

void AppendReport(const std::string& uri, const std::shared_ptr<arrow::RecordBatch>& rows) {
  delta::DeltaTable table = delta::DeltaTable::Exists(uri)
                                ? delta::DeltaTable::Open(uri)
                                : delta::DeltaTable::Create(
                                      uri, delta::CreateOptions{ReportSchema(),
                                                                {{kSchemaVersionProperty, kReconcileSchemaVersion}},
                                                                std::nullopt,
                                                                "mssql-cdc reconcile report: one row per bucket, "
                                                                "failing key and failed chunk check, per run"});
  delta::AppendOptions options;
  options.merge_schema = false;
  table.Append({rows}, options);
}

}  // namespace mssql_cdc
