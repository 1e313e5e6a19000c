#include "source/odbc/tds_change_reader.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/arrow_status.h"
#include "source/odbc/commit_stamps.h"
#include "source/odbc/failure_errors.h"
#include "source/odbc/failure_kind.h"
#include "source/odbc/statements.h"
#include "source/odbc/wire_columns.h"
#include "source/output_batch_builder.h"
#include "source/output_schema.h"

namespace mssql_cdc::odbc {
namespace {

using tds::ClientConnection;
using tds::ClientFailure;
using tds::ReplyStream;

constexpr std::uint8_t kColMetadata = 0x81;
constexpr std::uint8_t kRow = 0xD1;
constexpr std::uint8_t kNbcRow = 0xD2;

// The failure as the driver reader's failures are classified and reported: network failures
// under the SQLSTATE of a lost connection, the server's errors under their numbers.
OdbcFailure AsOdbcFailure(const ClientFailure& failure) {
  std::vector<OdbcDiagnostic> records;
  switch (failure.kind()) {
    case ClientFailure::Kind::kNetwork:
      records.push_back({"08S01", 0, failure.what()});
      break;
    case ClientFailure::Kind::kServer:
      for (const auto& m : failure.server_messages()) {
        const std::string state = m.number == 18456 ? "28000" : m.number == 1205 ? "40001" : "42000";
        records.push_back({state, m.number, m.message});
      }
      if (records.empty()) records.push_back({"HY000", 0, failure.what()});
      break;
    case ClientFailure::Kind::kCertificateRefused:
      // As Driver 18 reports it, so that it is classified the same way.
      records.push_back({"08001", -1, std::string("SSL Provider: [") + failure.what() + "]"});
      break;
    default:
      records.push_back({"HY000", 0, failure.what()});
  }
  return OdbcFailure("the engine's TDS reader", std::move(records));
}

// One result column's description.
struct ResultColumn {
  WireType type;
  std::string name;
};

// Reads COLMETADATA's body (its token byte read already).
std::vector<ResultColumn> ReadColumns(ReplyStream& in) {
  const std::uint16_t count = in.U16();
  if (count == 0xFFFF) return {};
  std::vector<ResultColumn> columns(count);
  for (auto& column : columns) {
    in.U32();  // UserType
    in.U16();  // Flags
    column.type = ReadTypeInfo(in);
    if (column.type.type == 0x22 || column.type.type == 0x23 || column.type.type == 0x63) {
      const std::uint8_t parts = in.U8();  // text, ntext and image name their table
      for (std::uint8_t i = 0; i < parts; ++i) in.UsVarChar();
    }
    column.name = in.BVarChar();
  }
  return columns;
}

// Reads tokens up to the result's COLMETADATA and returns its columns; nullopt when the reply
// ends without one. ClientFailure (kServer) when the server sent errors.
std::optional<std::vector<ResultColumn>> ReadUpToColumns(ReplyStream& in) {
  std::vector<tds::ServerMessage> errors;
  while (!in.AtEnd()) {
    const std::uint8_t token = in.U8();
    if (token == kColMetadata) {
      auto columns = ReadColumns(in);
      if (!errors.empty()) {
        tds::DrainReply(in);
        break;
      }
      return columns;
    }
    tds::SkipToken(in, token, &errors);
  }
  if (!errors.empty()) {
    std::string text;
    for (const auto& e : errors) text += (text.empty() ? "" : "; ") + e.message;
    throw ClientFailure(ClientFailure::Kind::kServer, text, errors);
  }
  return std::nullopt;
}

// The null bitmap of an NBCROW, or none for a ROW.
class NullBitmap {
 public:
  void Read(ReplyStream& in, std::size_t columns, bool present) {
    present_ = present;
    if (!present) return;
    const std::size_t bytes = (columns + 7) / 8;
    bits_.resize(bytes);
    std::memcpy(bits_.data(), in.Need(bytes), bytes);
    in.Advance(bytes);
  }
  bool IsNull(std::size_t column) const {
    return present_ && ((bits_[column / 8] >> (column % 8)) & 1) != 0;
  }

 private:
  bool present_ = false;
  std::vector<std::uint8_t> bits_;
};

// The columns that identify a row of a change table range: the order of the read.
struct RowKey {
  std::uint8_t start_lsn[Lsn::kSize] = {};
  std::uint8_t seqval[Lsn::kSize] = {};
  bool seqval_null = false;
  std::int32_t operation = 0;
  std::optional<std::int32_t> command_id;
  friend bool operator==(const RowKey& a, const RowKey& b) {
    return std::memcmp(a.start_lsn, b.start_lsn, Lsn::kSize) == 0 &&
           a.seqval_null == b.seqval_null &&
           (a.seqval_null || std::memcmp(a.seqval, b.seqval, Lsn::kSize) == 0) &&
           a.operation == b.operation && a.command_id == b.command_id;
  }
};

class TdsChangeReader final : public arrow::RecordBatchReader {
 public:
  TdsChangeReader(std::shared_ptr<const TdsReaderSettings> settings, const ChangeReadPlan& plan,
                  const SourceClock& clock, TdsFallback fallback)
      : settings_(std::move(settings)),
        plan_(plan),
        schema_(OutputSchema(plan.columns, plan.include_command_id)),
        metadata_(OutputSchema(arrow::FieldVector{}, plan.include_command_id), plan.capture_instance, {},
                  plan.include_command_id, plan.batch_rows),
        stamps_(clock),
        fallback_(std::move(fallback)),
        metadata_columns_(plan.include_command_id ? 5 : 4) {
    std::vector<std::string> names;
    for (const auto& c : plan_.columns) names.push_back(c.name);
    sql_ = odbc_sql::NamedParameters(
        odbc_sql::ChangeRows(plan_.capture_instance, names, plan_.include_command_id));
    context_.action = "reading the change rows of capture instance '" + plan_.capture_instance +
                      "' from " + plan_.from.ToString() + " to " + plan_.to.ToString();
    context_.change_table_of = plan_.capture_instance;
    context_.login = settings_->login.user;
    context_.access_token = settings_->login.access_token.has_value();
  }

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    return ReadNextOrStatus(batch, [this] { return Next(); }, [this] {
      finished_ = true;
      CloseConnection();
    });
  }

 private:
  std::shared_ptr<arrow::RecordBatch> Next() {
    if (delegate_) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ThrowIfError(delegate_->ReadNext(&batch));
      return batch;
    }
    if (finished_) return nullptr;
    int retries = 0;
    while (true) {
      try {
        if (!exhausted_ && !reading_) Open();
        metadata_.Start();
        for (auto& column : captured_) column->Reserve(last_batch_rows_);
        while (metadata_.rows() < plan_.batch_rows && DataBytes() < plan_.batch_bytes) {
          if (!ReadRow()) break;
        }
        TallyWait();
        if (exhausted_) Release();
        if (metadata_.rows() == 0) {
          finished_ = true;
          Discard();
          return nullptr;
        }
        auto batch = Finish();
        delivered_ += batch->num_rows();
        delivered_last_ = row_key_;
        stamps_.Save();
        return batch;
      } catch (const WireTypeUnsupported& unsupported) {
        Discard();
        CloseConnection();
        if (CanFallBack()) return FallBack(unsupported.what(), /*every_read=*/false);
        throw SourceError(context_.action + ": " + unsupported.what() +
                          "; set changeReader=driver to read it through the ODBC driver");
      } catch (const ClientFailure& failure) {
        Discard();
        const bool dead = connection_ == nullptr || connection_->dead();
        CloseConnection();
        const bool login = logging_in_;
        logging_in_ = false;
        if (failure.kind() == ClientFailure::Kind::kEncryptionUnavailable) {
          ThrowEncryptionUnavailable(settings_->server, settings_->encryption_setting,
                                     std::string("the engine's TDS reader said: ") + failure.what());
        }
        if (CanFallBack() && (failure.kind() == ClientFailure::Kind::kEncryptionRequired ||
                              failure.kind() == ClientFailure::Kind::kProtocol ||
                              (login && failure.kind() == ClientFailure::Kind::kServer))) {
          return FallBack(std::string(login ? "logging in: " : "") + failure.what(),
                          /*every_read=*/true);
        }
        const OdbcFailure odbc = AsOdbcFailure(failure);
        const bool network = failure.kind() == ClientFailure::Kind::kNetwork;
        FailureContext context = context_;
        context.connection_dead = network;
        context.database_user = [this] { return DatabaseUser(); };
        settings_->retry.RetryOrThrow(retries, odbc, network && dead, std::move(context));
        stamps_.Restore();
        exhausted_ = false;
      }
    }
  }

  bool CanFallBack() const { return fallback_.make_reader != nullptr && delivered_ == 0; }

  std::shared_ptr<arrow::RecordBatch> FallBack(const std::string& reason, bool every_read) {
    if (fallback_.on_fallback) fallback_.on_fallback(reason, every_read);
    delegate_ = fallback_.make_reader();
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(delegate_->ReadNext(&batch));
    return batch;
  }

  void Connect() {
    if (connection_ != nullptr) return;
    if (settings_->slot) connection_ = settings_->slot->Take();
    if (connection_ == nullptr) {
      logging_in_ = true;
      connection_ = ClientConnection::Open(settings_->login);
      logging_in_ = false;
    }
    wait_mark_ = connection_->network_wait();
    if (plan_.waits) plan_.waits->reader = connection_->encrypted() ? "tds+tls" : "tds";
  }

  // Adds the time the connection waited for the server since the last tally to the plan's
  // waits: after each batch read on this reader's own socket.
  void TallyWait() {
    if (plan_.waits == nullptr || connection_ == nullptr) return;
    const auto now = connection_->network_wait();
    const double ms = std::chrono::duration<double, std::milli>(now - wait_mark_).count();
    plan_.waits->network_wait_ms = plan_.waits->network_wait_ms.value_or(0) + ms;
    wait_mark_ = now;
  }

  void Open() {
    Connect();
    if (!prepared_) {
      if (stamps_.NeedsCommitBefore(plan_.from)) stamps_.set_commit_before(CommitBefore());
      prepared_ = true;
    }
    connection_->ExecuteSql(sql_, {{"@P1", BytesOf(plan_.from)}, {"@P2", BytesOf(plan_.to)}});
    auto columns = ReadUpToColumns(connection_->reply());
    if (!columns) {
      throw SourceError(context_.action + ": the server answered without a result set");
    }
    reading_ = true;
    BindColumns(*columns);
    if (delivered_ > 0) SkipDelivered();
  }

  static std::string BytesOf(const Lsn& lsn) {
    return std::string(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize);
  }

  // The local time of the last commit before the range, for CommitStamps.
  std::optional<LocalMicros> CommitBefore() {
    connection_->ExecuteSql(odbc_sql::NamedParameters(odbc_sql::kCommitTimeAtOrBefore),
                            {{"@P1", BytesOf(plan_.from.Decrement())}});
    ReplyStream& in = connection_->reply();
    auto columns = ReadUpToColumns(in);
    std::optional<LocalMicros> time;
    if (columns && columns->size() == 1) {
      NullBitmap nulls;
      std::vector<tds::ServerMessage> errors;
      while (!in.AtEnd()) {
        const std::uint8_t token = in.U8();
        if (token == kRow || token == kNbcRow) {
          nulls.Read(in, 1, token == kNbcRow);
          std::int64_t micros = 0;
          if (!nulls.IsNull(0) && ReadDateTimeValue(in, (*columns)[0].type, &micros)) {
            time = LocalMicros{micros};
          }
        } else {
          tds::SkipToken(in, token, &errors);
        }
      }
    } else {
      tds::DrainReply(in);
    }
    return time;
  }

  void BindColumns(const std::vector<ResultColumn>& columns) {
    if (columns.size() != metadata_columns_ + plan_.columns.size()) {
      throw ClientFailure(ClientFailure::Kind::kProtocol,
                          "the server returned " + std::to_string(columns.size()) +
                              " columns for a statement that selects " +
                              std::to_string(metadata_columns_ + plan_.columns.size()));
    }
    if (!wire_.empty()) {
      for (std::size_t i = 0; i < columns.size(); ++i) {
        if (columns[i].type.type != wire_[i].type || columns[i].type.scale != wire_[i].scale) {
          throw ClientFailure(ClientFailure::Kind::kProtocol,
                              "after reconnecting, column '" + columns[i].name +
                                  "' came back as another type");
        }
      }
      return;
    }
    for (const auto& column : columns) wire_.push_back(column.type);
    for (std::size_t i = 0; i < plan_.columns.size(); ++i) {
      captured_.push_back(MakeWireColumn(plan_.columns[i], wire_[metadata_columns_ + i]));
    }
  }

  // Reads tokens up to the next row and appends it; false at the end of the result.
  bool ReadRow() {
    if (exhausted_) return false;
    ReplyStream& in = connection_->reply();
    while (!in.AtEnd()) {
      const std::uint8_t token = in.U8();
      if (token == kRow || token == kNbcRow) {
        nulls_.Read(in, wire_.size(), token == kNbcRow);
        ReadKey(in);
        Stamp();
        metadata_.AppendMetadata(row_key_.start_lsn, row_key_.seqval_null ? nullptr : row_key_.seqval,
                                 row_key_.operation, row_key_.command_id, stamps_.current());
        for (std::size_t i = 0; i < captured_.size(); ++i) {
          if (nulls_.IsNull(metadata_columns_ + i)) {
            captured_[i]->AppendNull();
          } else {
            captured_[i]->Read(in);
          }
        }
        return true;
      }
      if (token == kColMetadata) {
        throw ClientFailure(ClientFailure::Kind::kProtocol,
                            "the server returned a second result set");
      }
      tds::SkipToken(in, token, &errors_);
    }
    reading_ = false;
    exhausted_ = true;
    if (!errors_.empty()) {
      auto errors = std::move(errors_);
      errors_.clear();
      std::string text;
      for (const auto& e : errors) text += (text.empty() ? "" : "; ") + e.message;
      throw ClientFailure(ClientFailure::Kind::kServer, text, errors);
    }
    return false;
  }

  // Reads the metadata columns of a row into row_key_ and row_time_.
  void ReadKey(ReplyStream& in) {
    if (nulls_.IsNull(0) || !ReadLsnValue(in, wire_[0], row_key_.start_lsn)) {
      throw SourceError("the server returned a NULL __$start_lsn in " + ChangeTable());
    }
    row_key_.seqval_null = nulls_.IsNull(1) || !ReadLsnValue(in, wire_[1], row_key_.seqval);
    if (nulls_.IsNull(2) || !ReadIntValue(in, wire_[2], &row_key_.operation)) {
      throw SourceError("the server returned a NULL __$operation in " + ChangeTable());
    }
    std::size_t next = 3;
    row_key_.command_id.reset();
    if (plan_.include_command_id) {
      std::int32_t command_id = 0;
      if (!nulls_.IsNull(next) && ReadIntValue(in, wire_[next], &command_id)) {
        row_key_.command_id = command_id;
      }
      ++next;
    }
    std::int64_t local = 0;
    row_time_.reset();
    if (!nulls_.IsNull(next) && ReadDateTimeValue(in, wire_[next], &local)) {
      row_time_ = LocalMicros{local};
    }
  }

  // Stamps the row read last with its commit's UTC time.
  void Stamp() {
    if (!stamps_.IsNewCommit(row_key_.start_lsn)) return;
    if (!row_time_) {
      throw SourceError("the server returned a change row of " + ChangeTable() +
                        " without a commit time");
    }
    stamps_.Start(row_key_.start_lsn, *row_time_);
  }

  // After a retry: passes over the rows delivered before it and checks that the last of them
  // is where it was (rows of a change table range never move).
  void SkipDelivered() {
    ReplyStream& in = connection_->reply();
    std::int64_t seen = 0;
    while (seen < delivered_ && !in.AtEnd()) {
      const std::uint8_t token = in.U8();
      if (token != kRow && token != kNbcRow) {
        tds::SkipToken(in, token, &errors_);
        continue;
      }
      nulls_.Read(in, wire_.size(), token == kNbcRow);
      ReadKey(in);  // not stamped: the commits were stamped when the rows were delivered
      for (std::size_t i = 0; i < captured_.size(); ++i) {
        if (!nulls_.IsNull(metadata_columns_ + i)) SkipValue(in, wire_[metadata_columns_ + i]);
      }
      ++seen;
    }
    if (seen < delivered_) {
      throw SourceError(context_.action + ": after reconnecting, the statement returned fewer "
                        "rows than the " + std::to_string(delivered_) + " already delivered, so "
                        "the read cannot resume where it stopped; run it again");
    }
    if (!(row_key_ == delivered_last_)) {
      throw SourceError(context_.action + ": after reconnecting, row " +
                        std::to_string(delivered_) + " is not the row delivered there before, "
                        "so the read cannot resume where it stopped; run it again");
    }
    spdlog::info("odbc: {}: resumed after {} delivered rows on a new connection", context_.action,
                 delivered_);
  }

  std::int64_t DataBytes() const {
    std::int64_t bytes = 0;
    for (const auto& column : captured_) bytes += column->data_bytes();
    return bytes;
  }

  std::shared_ptr<arrow::RecordBatch> Finish() {
    const std::int64_t rows = metadata_.rows();
    last_batch_rows_ = rows;
    std::vector<std::shared_ptr<arrow::Array>> arrays = metadata_.Finish()->columns();
    for (auto& column : captured_) arrays.push_back(column->Finish());
    return arrow::RecordBatch::Make(schema_, rows, std::move(arrays));
  }

  void Discard() {
    metadata_.Finish();
    for (auto& column : captured_) column->Finish();
  }

  // The connection goes back to the Source once its reply was read to the end.
  void Release() {
    if (settings_->slot && connection_ != nullptr && !connection_->dead()) {
      settings_->slot->GiveBack(std::move(connection_));
    }
    connection_.reset();
  }

  void CloseConnection() {
    connection_.reset();
    reading_ = false;
    errors_.clear();
  }

  std::optional<std::string> DatabaseUser() {
    try {
      auto connection = ClientConnection::Open(settings_->login);
      connection->ExecuteSql("SELECT USER_NAME()", {});
      ReplyStream& in = connection->reply();
      auto columns = ReadUpToColumns(in);
      std::optional<std::string> user;
      std::vector<tds::ServerMessage> errors;
      while (!in.AtEnd()) {
        const std::uint8_t token = in.U8();
        if (columns && columns->size() == 1 && (token == kRow || token == kNbcRow)) {
          NullBitmap nulls;
          nulls.Read(in, 1, token == kNbcRow);
          CapturedColumn text{"user", 1, 1, SqlType::Parse("nvarchar(128)")};
          auto column = MakeWireColumn(text, (*columns)[0].type);
          if (nulls.IsNull(0)) {
            column->AppendNull();
          } else {
            column->Read(in);
          }
          const auto array = column->Finish();
          if (array->IsValid(0)) user = array->GetScalar(0).ValueOrDie()->ToString();
        } else {
          tds::SkipToken(in, token, &errors);
        }
      }
      return user;
    } catch (const std::exception&) {
      return std::nullopt;  // the GRANT then names the login
    }
  }

  std::string ChangeTable() const {
    return "cdc." + odbc_sql::QuoteName(plan_.capture_instance + "_CT");
  }

  std::shared_ptr<const TdsReaderSettings> settings_;
  ChangeReadPlan plan_;
  std::shared_ptr<arrow::Schema> schema_;
  OutputBatchBuilder metadata_;
  std::int64_t last_batch_rows_ = 0;  // what the captured columns reserve for the next batch
  CommitStamps stamps_;
  TdsFallback fallback_;
  const std::size_t metadata_columns_;
  std::string sql_;
  FailureContext context_;

  std::unique_ptr<ClientConnection> connection_;
  std::vector<WireType> wire_;  // every result column's type
  std::vector<std::unique_ptr<WireColumn>> captured_;
  NullBitmap nulls_;
  RowKey row_key_;          // of the row read last
  std::optional<LocalMicros> row_time_;  // its commit's local time
  RowKey delivered_last_;   // of the last row delivered
  std::vector<tds::ServerMessage> errors_;
  bool prepared_ = false;
  bool logging_in_ = false;
  bool reading_ = false;    // a reply's rows are being read
  std::chrono::nanoseconds wait_mark_{0};  // the connection's network wait at the last tally
  bool exhausted_ = false;  // the result has no more rows
  bool finished_ = false;
  std::int64_t delivered_ = 0;
  std::unique_ptr<arrow::RecordBatchReader> delegate_;
};

}  // namespace

std::unique_ptr<arrow::RecordBatchReader> MakeTdsChangeReader(
    std::shared_ptr<const TdsReaderSettings> settings, const ChangeReadPlan& plan,
    const SourceClock& clock, TdsFallback fallback) {
  return std::make_unique<TdsChangeReader>(std::move(settings), plan, clock, std::move(fallback));
}

}  // namespace mssql_cdc::odbc
