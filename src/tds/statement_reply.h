// The ReplyWriter and ResultSet a QueryHandler answers one statement through: result sets
// as COLMETADATA and ROW/NBCROW tokens, messages as INFO, a failure as ERROR, each result
// closed by a DONE (in a SQL batch) or DONEINPROC (inside an RPC) with its row count.
//
// Rows are encoded straight into the connection's output buffer and leave in packets at row
// boundaries, where an Attention from the client is noticed (ReplyAborted). A row stays whole
// in the buffer until it ends, so a value that fails drops its row and never leaves half a
// row on the wire. A row with a NULL goes as NBCROW when the client speaks TDS 7.3B or
// later, otherwise as ROW.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tds/column_codec.h"
#include "tds/query_handler.h"
#include "tds/token_stream.h"

namespace mssql_cdc::tds {

class StatementReply final : public ReplyWriter, public ResultSet {
 public:
  enum class Framing { kBatch, kRpc };

  StatementReply(TokenStream& stream, Framing framing, bool use_nbcrow,
                 const std::string& server_name);

  ResultSet& BeginResult(const std::vector<ResultColumn>& columns) override;
  void Info(std::int32_t number, const std::string& message) override;
  void Fail(const ServerError& error) override;

  void Null() override;
  void Int(std::int64_t value) override;
  void Float(double value) override;
  void Text(std::string_view value) override;
  void Binary(std::string_view value) override;
  bool TakesEncodedValues() const override { return use_nbcrow_; }
  void EncodedValues(std::string_view encoded, std::size_t count) override;
  void EndRow() override;

  // After the handler returned: closes the open result set; a batch statement that sent
  // nothing still gets its DONE.
  void Finish();
  // After the handler threw: drops a half-encoded row, closes the open result set and sends
  // error 50000 with `message`. Does nothing when the statement already failed.
  void FailWithException(const std::string& message);

  bool failed() const { return failed_; }

 private:
  void EndResult();
  void CheckWritable(const char* what) const;
  const ColumnCodec& NextColumn() {
    if (column_ == 0 && !row_open_) StartRow();
    if (column_ >= codecs_.size()) TooManyValues();
    return codecs_[column_++];
  }
  void StartRow();
  [[noreturn]] void TooManyValues() const;

  TokenStream& stream_;
  WireBuffer& out_;
  const Framing framing_;
  const bool use_nbcrow_;
  const std::string& server_name_;

  std::vector<ColumnCodec> codecs_;
  bool result_open_ = false;
  bool done_sent_ = false;  // a DONE/DONEINPROC of this statement ends what was written
  bool failed_ = false;
  std::uint64_t rows_ = 0;

  // The row being encoded: where it starts in the buffer, its next column, its NULLs.
  bool row_open_ = false;
  std::size_t row_start_ = 0;
  std::size_t column_ = 0;
  std::size_t bitmap_bytes_ = 0;
  bool row_has_null_ = false;
};

}  // namespace mssql_cdc::tds
