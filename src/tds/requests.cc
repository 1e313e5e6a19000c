#include "tds/requests.h"

#include "tds/text_encoding.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

constexpr std::uint16_t kTmBegin = 5;
constexpr std::uint16_t kTmCommit = 7;
constexpr std::uint16_t kTmRollback = 8;

}  // namespace

std::string_view SkipAllHeaders(std::string_view payload, const char* what) {
  if (payload.size() < 4) return payload;
  WireReader reader(payload, what);
  const std::uint32_t total = reader.U32();
  // A block that cannot be ALL_HEADERS (too short or longer than the message) means the
  // client sent none and the payload starts with the request itself.
  if (total < 4 || total > payload.size()) return payload;
  while (reader.position() < total) {
    const std::uint32_t length = reader.U32();
    if (length < 6 || reader.position() - 4 + length > total) {
      reader.Fail("ALL_HEADERS entry of length " + std::to_string(length));
    }
    reader.Skip(length - 4);
  }
  return payload.substr(total);
}

std::string ParseSqlBatch(std::string_view payload) {
  return Utf16ToUtf8(SkipAllHeaders(payload, "SQLBatch"));
}

TransactionRequest ParseTransactionRequest(std::string_view payload) {
  WireReader reader(SkipAllHeaders(payload, "transaction manager"), "transaction manager");
  TransactionRequest request;
  request.request_type = reader.U16();
  switch (request.request_type) {
    case kTmBegin:
      request.kind = TransactionRequest::Kind::kBegin;
      break;
    case kTmCommit:
    case kTmRollback: {
      request.kind = request.request_type == kTmCommit ? TransactionRequest::Kind::kCommit
                                                       : TransactionRequest::Kind::kRollback;
      if (reader.AtEnd()) break;
      reader.Skip(reader.U8());  // transaction name (B_VARBYTE)
      if (!reader.AtEnd()) request.begin_after = (reader.U8() & 0x01) != 0;
      break;
    }
    default:
      break;
  }
  return request;
}

}  // namespace mssql_cdc::tds
