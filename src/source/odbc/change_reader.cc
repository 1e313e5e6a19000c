#include "source/odbc/change_reader.h"

#include <cstring>
#include <optional>

#include "core/errors.h"
#include "source/odbc/commit_stamps.h"
#include "source/odbc/lsn_slots.h"
#include "source/odbc/statements.h"
#include "source/output_schema.h"

namespace mssql_cdc::odbc {
namespace {

std::vector<CapturedOutput> CapturedOutputs(const std::vector<CapturedColumn>& columns,
                                            const std::string& table, const FetchOptions& fetch) {
  std::vector<SqlType> types;
  for (const auto& c : columns) types.push_back(c.type);
  const std::vector<std::size_t> positions = SelectPositions(types);
  std::vector<CapturedOutput> out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    out.push_back({MakeFetchColumn(columns[i].type, columns[i].name,
                                   "column '" + columns[i].name + "' of " + table, fetch),
                   positions[i]});
  }
  return out;
}

class ChangeReader final : public RowBatchReader {
 public:
  ChangeReader(std::shared_ptr<const ReaderSettings> settings, const ChangeReadPlan& plan,
               const SourceClock& clock)
      : RowBatchReader(std::move(settings), OutputSchema(plan.columns, plan.include_command_id),
                       plan.capture_instance, plan.include_command_id,
                       CapturedOutputs(plan.columns, ChangeTable(plan.capture_instance), plan.fetch),
                       plan.batch_rows, plan.batch_bytes, ResumeKey(plan.include_command_id),
                       FailureContext{"reading the change rows of capture instance '" +
                                          plan.capture_instance + "' from " +
                                          plan.from.ToString() + " to " + plan.to.ToString(),
                                      plan.capture_instance, "", nullptr, 1}),
        plan_(plan),
        stamps_(clock) {
    std::vector<SqlType> types;
    for (const auto& c : plan_.columns) types.push_back(c.type);
    const std::vector<std::size_t> positions = SelectPositions(types);
    select_names_.resize(plan_.columns.size());
    for (std::size_t i = 0; i < plan_.columns.size(); ++i) {
      select_names_[positions[i]] = plan_.columns[i].name;
    }
    sql_ = odbc_sql::ChangeRows(plan_.capture_instance, select_names_, plan_.include_command_id);
  }

 protected:
  void Prepare(OdbcConnection& connection) override {
    // Only a zone with transitions has a repeated hour; the commit before the range tells
    // whether a first commit inside it is its first or its second reading.
    if (!stamps_.NeedsCommitBefore(plan_.from)) return;
    OdbcStatement statement(connection);
    statement.BindLsn(1, plan_.from.Decrement());
    if (statement.Execute(odbc_sql::kCommitTimeAtOrBefore) && statement.Fetch()) {
      if (const auto time = statement.GetTimestamp(1)) {
        stamps_.set_commit_before(LocalMicros{TimestampMicros(*time)});
      }
    }
  }

  std::string Sql() const override { return sql_; }

  void BindParameters(OdbcStatement& statement) const override {
    statement.BindLsn(1, plan_.from);
    statement.BindLsn(2, plan_.to);
  }

  std::vector<ResultSlots*> MetadataSlots() override {
    std::vector<ResultSlots*> slots = {start_lsn_.slots(), seqval_.slots(), &operation_};
    if (plan_.include_command_id) slots.push_back(&command_id_);
    slots.push_back(&commit_time_);
    return slots;
  }

  void AppendMetadata(OutputBatchBuilder& metadata, std::size_t first, std::size_t count) override {
    for (std::size_t i = first; i < first + count; ++i) {
      const std::uint8_t* lsn = start_lsn_.At(i);
      if (stamps_.IsNewCommit(lsn)) {
        if (commit_time_.IsNull(i)) {
          throw SourceError("the server returned a change row of " +
                            ChangeTable(plan_.capture_instance) + " without a commit time");
        }
        stamps_.Start(lsn, LocalMicros{TimestampMicros(commit_time_.Value(i))});
      }
      if (operation_.IsNull(i)) {
        throw SourceError("the server returned a NULL __$operation in " +
                          ChangeTable(plan_.capture_instance));
      }
      std::optional<std::int32_t> command_id;
      if (plan_.include_command_id && !command_id_.IsNull(i)) command_id = command_id_.Value(i);
      metadata.AppendMetadata(lsn, seqval_.IsNull(i) ? nullptr : seqval_.At(i),
                              operation_.Value(i), command_id, stamps_.current());
    }
  }

  void SaveProgress() override { stamps_.Save(); }
  void RestoreProgress() override { stamps_.Restore(); }

 private:

  static std::string ChangeTable(const std::string& capture_instance) {
    return "cdc." + odbc_sql::QuoteName(capture_instance + "_CT");
  }

  static std::vector<int> ResumeKey(bool include_command_id) {
    // _start_lsn, _seqval, _operation and _command_id: the order of the read, unique.
    std::vector<int> key = {1, 2, 3};
    if (include_command_id) key.push_back(4);
    return key;
  }

  ChangeReadPlan plan_;
  CommitStamps stamps_;
  std::vector<std::string> select_names_;
  std::string sql_;

  LsnSlots start_lsn_{"__$start_lsn"};
  LsnSlots seqval_{"__$seqval"};
  FixedSlots<SQLINTEGER> operation_{SQL_C_SLONG};
  FixedSlots<SQLINTEGER> command_id_{SQL_C_SLONG};
  FixedSlots<SQL_TIMESTAMP_STRUCT> commit_time_{SQL_C_TYPE_TIMESTAMP};
};

}  // namespace

std::unique_ptr<arrow::RecordBatchReader> MakeChangeReader(
    std::shared_ptr<const ReaderSettings> settings, const ChangeReadPlan& plan,
    const SourceClock& clock) {
  return std::make_unique<ChangeReader>(std::move(settings), plan, clock);
}

}  // namespace mssql_cdc::odbc
