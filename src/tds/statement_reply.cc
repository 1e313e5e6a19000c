#include "tds/statement_reply.h"

#include <cstring>

#include "core/errors.h"
#include "tds/encoded_values.h"
#include "tds/packet.h"

namespace mssql_cdc::tds {
namespace {

// CurCmd of the DONE after a result set: the code SQL Server uses for SELECT.
constexpr std::uint16_t kSelectCommand = 0xC1;
constexpr std::int32_t kHandlerFailure = 50000;

}  // namespace

StatementReply::StatementReply(TokenStream& stream, Framing framing, bool use_nbcrow,
                               const std::string& server_name)
    : stream_(stream),
      out_(stream.buffer()),
      framing_(framing),
      use_nbcrow_(use_nbcrow),
      server_name_(server_name) {}

void StatementReply::CheckWritable(const char* what) const {
  if (failed_) throw InternalError(std::string(what) + " after ReplyWriter::Fail");
  if (row_open_) {
    throw InternalError(std::string(what) + " in the middle of a row (" +
                        std::to_string(column_) + " of " + std::to_string(codecs_.size()) +
                        " values given)");
  }
}

ResultSet& StatementReply::BeginResult(const std::vector<ResultColumn>& columns) {
  CheckWritable("BeginResult");
  if (columns.empty() || columns.size() > 4096) {
    throw InternalError("a result set needs 1 to 4096 columns, not " +
                        std::to_string(columns.size()));
  }
  EndResult();
  codecs_.clear();
  codecs_.reserve(columns.size());
  for (const ResultColumn& column : columns) codecs_.emplace_back(column);
  WireBuffer& out = stream_.Next();
  out.PutU8(token::kColMetadata);
  out.PutU16(static_cast<std::uint16_t>(codecs_.size()));
  for (const ColumnCodec& codec : codecs_) codec.WriteMetadata(out);
  result_open_ = true;
  rows_ = 0;
  column_ = 0;
  bitmap_bytes_ = use_nbcrow_ ? (codecs_.size() + 7) / 8 : 0;
  return *this;
}

void StatementReply::EndResult() {
  if (!result_open_) return;
  result_open_ = false;
  DoneToken done;
  done.type = framing_ == Framing::kBatch ? token::kDone : token::kDoneInProc;
  done.status = done::kCount;
  done.current_command = kSelectCommand;
  done.row_count = rows_;
  stream_.Done(done);
  done_sent_ = true;
}

void StatementReply::Info(std::int32_t number, const std::string& message) {
  CheckWritable("Info");
  EndResult();
  MessageToken info;
  info.number = number;
  info.state = 1;
  info.severity = 0;
  info.text = message;
  info.server_name = server_name_;
  info.line = 1;
  WriteInfo(stream_.Next(), info);
  done_sent_ = false;  // a reply cannot end on an INFO: a DONE must follow
}

void StatementReply::Fail(const ServerError& error) {
  CheckWritable("Fail");
  EndResult();
  MessageToken message;
  message.number = error.number;
  message.state = error.state;
  message.severity = error.severity;
  message.text = error.message;
  message.server_name = server_name_;
  message.line = 1;
  WriteError(stream_.Next(), message);
  DoneToken done;
  done.type = framing_ == Framing::kBatch ? token::kDone : token::kDoneInProc;
  done.status = done::kError;
  stream_.Done(done);
  done_sent_ = true;
  failed_ = true;
}

void StatementReply::Finish() {
  if (failed_) return;
  if (row_open_) {
    throw InternalError("the statement ended in the middle of a row (" +
                        std::to_string(column_) + " of " + std::to_string(codecs_.size()) +
                        " values given)");
  }
  EndResult();
  if (!done_sent_ && framing_ == Framing::kBatch) {
    stream_.Done(DoneToken{token::kDone, done::kFinal, 0, 0});
    done_sent_ = true;
  }
}

void StatementReply::FailWithException(const std::string& message) {
  if (failed_) return;
  if (row_open_) {
    out_.Truncate(row_start_);
    row_open_ = false;
    column_ = 0;
  }
  Fail(ServerError{kHandlerFailure, 1, 16, message});
}

void StatementReply::StartRow() {
  if (!result_open_) throw InternalError("a value outside a result set");
  row_open_ = true;
  row_has_null_ = false;
  row_start_ = out_.size();
  std::uint8_t* p = out_.Extend(1 + bitmap_bytes_);
  p[0] = token::kRow;
  if (bitmap_bytes_ != 0) std::memset(p + 1, 0, bitmap_bytes_);
}

void StatementReply::TooManyValues() const {
  throw InternalError("a row of a result set with " + std::to_string(codecs_.size()) +
                      " columns got more values");
}

void StatementReply::Null() {
  const std::size_t index = column_;
  const ColumnCodec& codec = NextColumn();
  row_has_null_ = true;
  if (!use_nbcrow_) {
    codec.Null(out_);
    return;
  }
  if (!codec.nullable()) {
    WireBuffer scratch;
    codec.Null(scratch);  // throws, naming the column
  }
  out_.data()[row_start_ + 1 + index / 8] |= static_cast<std::uint8_t>(1u << (index % 8));
}

void StatementReply::Int(std::int64_t value) { NextColumn().Int(out_, value); }

void StatementReply::Float(double value) { NextColumn().Float(out_, value); }

void StatementReply::Text(std::string_view value) { NextColumn().Text(out_, value); }

void StatementReply::Binary(std::string_view value) { NextColumn().Binary(out_, value); }

void StatementReply::EncodedValues(std::string_view encoded, std::size_t count) {
  if (!use_nbcrow_) throw InternalError("encoded values for a client that reads no NBCROW");
  if (count == 0) return;
  if (column_ == 0 && !row_open_) StartRow();
  if (column_ + count > codecs_.size()) TooManyValues();
  if (CopyNullBits(encoded, count, out_.data() + row_start_ + 1, column_)) row_has_null_ = true;
  out_.PutBytes(encoded.substr(EncodedBitmapBytes(count)));
  column_ += count;
}

void StatementReply::EndRow() {
  if (!row_open_) {
    if (!result_open_) throw InternalError("EndRow outside a result set");
    StartRow();  // EndRow of a row without values: let the column check below report it
  }
  if (column_ != codecs_.size()) {
    throw InternalError("a row of a result set with " + std::to_string(codecs_.size()) +
                        " columns ended after " + std::to_string(column_) + " values");
  }
  if (bitmap_bytes_ != 0) {
    if (row_has_null_) {
      out_.data()[row_start_] = token::kNbcRow;
    } else {
      out_.Erase(row_start_ + 1, bitmap_bytes_);  // no NULL: a plain ROW is shorter
    }
  }
  row_open_ = false;
  column_ = 0;
  ++rows_;
  stream_.RowBoundary();
}

}  // namespace mssql_cdc::tds
