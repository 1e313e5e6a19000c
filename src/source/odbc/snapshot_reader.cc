#include "source/odbc/snapshot_reader.h"

#include "source/output_schema.h"

namespace mssql_cdc::odbc {
namespace {

// "[schema].[table]".
std::string TableName(const SnapshotReadPlan& plan) {
  return odbc_sql::QuoteName(plan.schema) + "." + odbc_sql::QuoteName(plan.table);
}

std::vector<CapturedOutput> CapturedOutputs(const SnapshotReadPlan& plan,
                                            const std::vector<std::size_t>& positions) {
  const std::string table = TableName(plan);
  std::vector<CapturedOutput> out;
  for (std::size_t i = 0; i < plan.columns.size(); ++i) {
    out.push_back({MakeFetchColumn(plan.columns[i].type, plan.columns[i].name,
                                   "column '" + plan.columns[i].name + "' of " + table, plan.fetch),
                   positions[i]});
  }
  return out;
}

std::vector<std::size_t> PositionsOf(const SnapshotReadPlan& plan) {
  std::vector<SqlType> types;
  for (const auto& c : plan.columns) types.push_back(c.type);
  return SelectPositions(types);
}

class SnapshotReader final : public RowBatchReader {
 public:
  SnapshotReader(std::shared_ptr<const ReaderSettings> settings, const SnapshotReadPlan& plan,
                 const std::vector<std::size_t>& positions)
      : RowBatchReader(std::move(settings), OutputSchema(plan.columns, /*include_command_id=*/true),
                       plan.capture_instance_stamp, /*include_command_id=*/true,
                       CapturedOutputs(plan, positions), plan.batch_rows, plan.batch_bytes,
                       /*resume_key=*/{},  // the whole row: a table may change between attempts
                       FailureContext{"reading the snapshot of table " + TableName(plan),
                                      std::nullopt, "", nullptr, 1, TableName(plan)}),
        snapshot_lsn_(plan.snapshot_lsn),
        commit_ts_(plan.snapshot_commit_ts.value) {
    std::vector<odbc_sql::SnapshotColumn> select(plan.table_columns.size());
    for (std::size_t i = 0; i < plan.table_columns.size(); ++i) {
      select[positions[i]] = plan.table_columns[i];
    }
    statement_ = odbc_sql::SnapshotRangeRows(plan.schema, plan.table, select, plan.key,
                                             plan.lo.has_value(), plan.hi.has_value(),
                                             plan.snapshot_isolation, plan.lock_timeout_ms);
    if (plan.lo) lo_ = *plan.lo;
    if (plan.hi) hi_ = *plan.hi;
  }

 protected:
  std::string Sql() const override { return statement_.sql; }
  // The statement sets the session's isolation level and lock timeout.
  bool LeavesSessionUnchanged() const override { return false; }
  void BindParameters(OdbcStatement& statement) const override {
    SQLUSMALLINT index = 1;
    for (const auto& parameter : statement_.parameters) {
      const auto& parts = parameter.bound == odbc_sql::BoundParameter::Bound::kLo ? lo_ : hi_;
      statement.BindText(index++, parts[parameter.part]);
    }
  }
  std::vector<ResultSlots*> MetadataSlots() override { return {}; }
  void AppendMetadata(OutputBatchBuilder& metadata, std::size_t, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) {
      metadata.AppendMetadata(snapshot_lsn_.data(), /*seqval=*/nullptr, /*operation=*/0,
                              /*command_id=*/std::nullopt, commit_ts_);
    }
  }

 private:
  Lsn snapshot_lsn_;
  std::int64_t commit_ts_;
  odbc_sql::RangeStatement statement_;
  std::vector<std::string> lo_, hi_;
};

}  // namespace

std::unique_ptr<arrow::RecordBatchReader> MakeSnapshotReader(
    std::shared_ptr<const ReaderSettings> settings, const SnapshotReadPlan& plan) {
  return std::make_unique<SnapshotReader>(std::move(settings), plan, PositionsOf(plan));
}

}  // namespace mssql_cdc::odbc
