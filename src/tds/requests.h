// The client requests other than RPC: a SQL batch (its text), a transaction-manager request
// (begin, commit, rollback), and the ALL_HEADERS block that starts each of them and RPCs
// (MS-TDS 2.2.5.3, 2.2.6.7, 2.2.6.9).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mssql_cdc::tds {

// What follows ALL_HEADERS. The headers (transaction descriptor, trace activity) carry
// nothing this server uses. A payload without them (a pre-7.2 client) is returned whole.
// Throws SourceError when the header block is malformed.
std::string_view SkipAllHeaders(std::string_view payload, const char* what);

// The UTF-8 text of a SQLBatch message.
std::string ParseSqlBatch(std::string_view payload);

struct TransactionRequest {
  enum class Kind { kBegin, kCommit, kRollback, kOther };
  Kind kind = Kind::kOther;
  std::uint16_t request_type = 0;  // the wire value: 5 begin, 7 commit, 8 rollback, ...
  bool begin_after = false;        // commit/rollback that starts a new transaction
};

// Throws SourceError when the message is truncated.
TransactionRequest ParseTransactionRequest(std::string_view payload);

}  // namespace mssql_cdc::tds
