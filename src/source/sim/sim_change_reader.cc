#include "source/sim/sim_change_reader.h"

#include <sqlite3.h>

#include <cstring>

#include "core/errors.h"
#include "core/timezone.h"
#include "sim/sqlite.h"
#include "sim/storage.h"
#include "core/arrow_status.h"
#include "source/output_batch_builder.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

// Result columns of the change query before the captured ones.
enum ChangeColumn { kStartLsn = 0, kSeqval = 1, kOperation = 2, kCommandId = 3, kFirstCaptured = 4 };

std::string ChangeQuerySql(const SimChangeQuery& query) {
  using sim::QuoteIdent;
  std::string sql = "SELECT \"__$start_lsn\", \"__$seqval\", \"__$operation\", \"__$command_id\"";
  for (const auto& column : query.columns) sql += ", " + QuoteIdent(column.name);
  sql += " FROM " + QuoteIdent(sim::ChangeTableStorageName(query.capture_instance)) +
         " WHERE \"__$start_lsn\" BETWEEN ?1 AND ?2"
         " ORDER BY \"__$start_lsn\", \"__$command_id\", \"__$seqval\", \"__$operation\"";
  return sql;
}

std::vector<std::unique_ptr<ColumnDecoder>> DecodersFor(const SimChangeQuery& query) {
  std::vector<std::unique_ptr<ColumnDecoder>> decoders;
  const std::string table = sim::ChangeTableStorageName(query.capture_instance);
  for (const auto& column : query.columns) {
    decoders.push_back(
        MakeColumnDecoder(column.type, column.name, "column '" + column.name + "' of " + table));
  }
  return decoders;
}

class SimChangeReader final : public arrow::RecordBatchReader {
 public:
  SimChangeReader(const SimChangeQuery& query, const SourceClock& clock)
      : batch_(OutputSchema(query.columns, query.include_command_id), query.capture_instance,
               DecodersFor(query), query.include_command_id, query.batch_rows, query.batch_bytes),
        clock_(clock),
        converter_(clock),
        include_command_id_(query.include_command_id),
        from_(query.from),
        table_(sim::ChangeTableStorageName(query.capture_instance)) {
    db_ = sim::SqliteDb::OpenReadOnly(query.path);
    changes_ = std::make_unique<sim::Statement>(db_, ChangeQuerySql(query));
    changes_->BindLsn(1, query.from);
    changes_->BindLsn(2, query.to);
    commits_ = std::make_unique<sim::Statement>(
        db_,
        "SELECT start_lsn, tran_end_time FROM cdc_lsn_time_mapping"
        " WHERE start_lsn BETWEEN ?1 AND ?2 ORDER BY start_lsn");
    commits_->BindLsn(1, query.from);
    commits_->BindLsn(2, query.to);
  }

  std::shared_ptr<arrow::Schema> schema() const override { return batch_.schema(); }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    return ReadNextOrStatus(batch, [this] { return Next(); }, [this] { Release(); });
  }

 private:
  std::shared_ptr<arrow::RecordBatch> Next() {
    if (changes_ == nullptr) return nullptr;
    batch_.Start();
    while (!batch_.full()) {
      if (!changes_->Step()) {
        Release();
        break;
      }
      sqlite3_stmt* row = changes_->raw();
      const std::uint8_t* lsn = LsnBytes(row, kStartLsn, "__$start_lsn");
      if (!has_row_lsn_ || std::memcmp(lsn, row_lsn_, Lsn::kSize) != 0) {
        std::memcpy(row_lsn_, lsn, Lsn::kSize);
        has_row_lsn_ = true;
        row_has_commit_ = SeekCommit(lsn);
      }
      if (!row_has_commit_) continue;
      std::optional<std::int32_t> command_id;
      if (include_command_id_) {
        sqlite3_value* value = sqlite3_column_value(row, kCommandId);
        if (sqlite3_value_type(value) != SQLITE_NULL) command_id = sqlite3_value_int(value);
      }
      batch_.AppendMetadata(lsn, LsnBytes(row, kSeqval, "__$seqval"),
                            sqlite3_value_int(sqlite3_column_value(row, kOperation)), command_id,
                            commit_ts_);
      for (std::size_t i = 0; i < batch_.column_count(); ++i) {
        batch_.column(i).Append(sqlite3_column_value(row, kFirstCaptured + static_cast<int>(i)));
      }
    }
    if (batch_.rows() == 0) return nullptr;
    return batch_.Finish();
  }

  // Moves the commit cursor to `lsn`, converting every entry passed on the way. False when
  // lsn_time_mapping has no entry at `lsn`.
  bool SeekCommit(const std::uint8_t* lsn) {
    while (!has_commit_ || std::memcmp(commit_lsn_, lsn, Lsn::kSize) < 0) {
      if (commits_done_) return false;
      if (!commits_->Step()) {
        commits_done_ = true;
        return false;
      }
      sqlite3_stmt* entry = commits_->raw();
      std::memcpy(commit_lsn_, LsnBytes(entry, 0, "start_lsn", "cdc_lsn_time_mapping"),
                  Lsn::kSize);
      const LocalMicros local = CommitLocalTime(*commits_);
      if (!has_commit_) PrimeConverter(local);
      commit_ts_ = converter_.Next(local).value;
      has_commit_ = true;
    }
    return std::memcmp(commit_lsn_, lsn, Lsn::kSize) == 0;
  }

  // A range whose first commit lies in the hour repeated after a fall-back: whether it is the
  // first or the second reading of that hour depends on the commits before the range. Feeds
  // the converter from the last entry before the repeated hour, as the reference's 3-hour
  // look-back does. Runs on the reader's connection, inside its read snapshot.
  void PrimeConverter(LocalMicros first) {
    if (!clock_.SecondReading(first)) return;
    sim::Statement back(*db_,
                        "SELECT start_lsn, tran_end_time FROM cdc_lsn_time_mapping "
                        "WHERE start_lsn < ?1 ORDER BY start_lsn DESC");
    back.BindLsn(1, from_);
    std::vector<LocalMicros> earlier;
    while (back.Step()) {
      earlier.push_back(CommitLocalTime(back));
      if (!clock_.SecondReading(earlier.back())) break;
    }
    for (auto it = earlier.rbegin(); it != earlier.rend(); ++it) converter_.Next(*it);
  }

  // tran_end_time (column 1) of a cdc_lsn_time_mapping row whose start_lsn is column 0.
  static LocalMicros CommitLocalTime(const sim::Statement& entry) {
    const std::string_view text = entry.TextView(1);
    const auto local = ParseDateTime(text);
    if (!local) {
      throw SourceError("cdc_lsn_time_mapping.tran_end_time '" + std::string(text) + "' at " +
                        entry.LsnAt(0, "cdc_lsn_time_mapping.start_lsn").ToString() +
                        " is not a time 'YYYY-MM-DD HH:MM:SS.fff'");
    }
    return LocalMicros{*local};
  }

  const std::uint8_t* LsnBytes(sqlite3_stmt* row, int column, const char* name,
                               const char* table = nullptr) const {
    sqlite3_value* value = sqlite3_column_value(row, column);
    if (sqlite3_value_type(value) != SQLITE_BLOB ||
        sqlite3_value_bytes(value) != static_cast<int>(Lsn::kSize)) {
      throw SourceError(std::string(name) + " of " + (table != nullptr ? table : table_) +
                        " is not a 10-byte binary value: the file is not a sim database this "
                        "build can read");
    }
    return static_cast<const std::uint8_t*>(sqlite3_value_blob(value));
  }

  // Ends the read: finalizing the statements ends its read snapshot; closing the connection
  // lets go of the file.
  void Release() {
    changes_.reset();
    commits_.reset();
    db_.reset();
  }

  OutputBatchBuilder batch_;
  SourceClock clock_;
  CommitTimeConverter converter_;
  bool include_command_id_;
  Lsn from_;
  std::string table_;
  std::shared_ptr<sim::SqliteDb> db_;
  std::unique_ptr<sim::Statement> changes_;
  std::unique_ptr<sim::Statement> commits_;

  bool has_row_lsn_ = false;
  std::uint8_t row_lsn_[Lsn::kSize] = {};
  bool row_has_commit_ = false;

  bool has_commit_ = false;
  bool commits_done_ = false;
  std::uint8_t commit_lsn_[Lsn::kSize] = {};
  std::int64_t commit_ts_ = 0;
};

}  // namespace

std::unique_ptr<arrow::RecordBatchReader> MakeSimChangeReader(const SimChangeQuery& query,
                                                              const SourceClock& clock) {
  return std::make_unique<SimChangeReader>(query, clock);
}

}  // namespace mssql_cdc
