// The seam between the TDS server (protocol, sockets, sessions) and the database behind it.
//
// The server parses what a client sends (SQL batches and RPCs) and hands each statement to
// the QueryHandler of its connection as a Statement: the SQL text plus the parameter values.
// The handler answers through a ReplyWriter, which encodes result sets, errors and row counts
// as TDS tokens and streams them to the client as it goes, so a result of any size is never
// held whole. The server adds the framing a request needs (DONE_MORE between statements,
// RETURNSTATUS/RETURNVALUE/DONEPROC for RPCs, the prepared-statement handles of sp_prepexec).
//
// Values passed to a result set are given in the forms SQL Server itself prints and stores
// (see ResultSet below); the writer encodes them for the column's declared type.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sql_type.h"

namespace mssql_cdc::tds {

// A parameter value of an RPC as the client sent it.
struct ParamValue {
  enum class Kind { kNull, kInt, kFloat, kText, kBinary, kOther };
  std::string name;      // "@P1" or empty when sent positionally
  SqlType type;          // as declared on the wire: int, bigint, binary(10), nvarchar(4000)...
  Kind kind = Kind::kNull;
  std::int64_t int_value = 0;  // kInt (tinyint, smallint, int, bigint, bit)
  double float_value = 0;      // kFloat
  std::string text;            // kText (UTF-8), kBinary (raw bytes), kOther (the wire bytes)
};

// One statement to run: the text of a SQL batch, or of an sp_executesql / sp_prepexec /
// sp_execute call (with `?` markers already rewritten by the client to @P1.. names) and its
// parameter values in order.
struct Statement {
  std::string sql;  // UTF-8
  std::vector<ParamValue> params;
  bool is_rpc = false;
};

// A column of a result set.
struct ResultColumn {
  std::string name;  // may be empty, as for SELECT sys.fn_cdc_get_max_lsn()
  SqlType type;      // the declared type; drives the TYPE_INFO sent and the value encoding
  bool nullable = true;
};

// Writes the rows of one result set. Per row: exactly one value call per column, in order.
// Values are given as the storage of sim/storage.h keeps them, which are SQL Server's own
// printed forms:
//   Int      bit, tinyint, smallint, int, bigint
//   Float    real, float
//   Text     char types and xml (UTF-8); decimal, numeric, money, smallmoney ("-12.3400");
//            date ("YYYY-MM-DD"); time ("HH:MM:SS.fffffff"); datetime, smalldatetime,
//            datetime2 ("YYYY-MM-DD HH:MM:SS[.fffffff]"); datetimeoffset
//            ("YYYY-MM-DD HH:MM:SS.fffffff +HH:MM", local time and offset);
//            uniqueidentifier ("8-4-4-4-12" hex, any case)
//   Binary   binary, varbinary, image, timestamp/rowversion
// Values encoded before by tds/encoded_values.h go in whole with EncodedValues, when
// TakesEncodedValues says the result set can take them so.
// A value that does not fit its column's type (bad text, a too-long string) throws
// SourceError naming the column: the server then ends the reply with an error.
// When the client cancels the statement (Attention) or goes away, EndRow throws
// tds::ReplyAborted (tds/message_writer.h), which is deliberately no std::exception: let it
// pass so the handler stops producing rows.
class ResultSet {
 public:
  virtual ~ResultSet() = default;
  virtual void Null() = 0;
  virtual void Int(std::int64_t value) = 0;
  virtual void Float(double value) = 0;
  virtual void Text(std::string_view value) = 0;
  virtual void Binary(std::string_view value) = 0;
  // Whether EncodedValues may be called: a reply sends them only to a client that reads
  // NBCROW (TDS 7.3B and later).
  virtual bool TakesEncodedValues() const = 0;
  // The next `count` values of the row at once, in the form of tds/encoded_values.h, made
  // for columns of the types of these. Only when TakesEncodedValues().
  virtual void EncodedValues(std::string_view encoded, std::size_t count) = 0;
  // Ends the current row; rows are flushed to the client in packets as they fill.
  virtual void EndRow() = 0;
};

// A SQL Server error to send as an ERROR token (number, state, class, message).
struct ServerError {
  std::int32_t number = 0;
  std::uint8_t state = 1;
  std::uint8_t severity = 16;
  std::string message;
};

// The reply to one statement: zero or more result sets, then at most one error.
class ReplyWriter {
 public:
  virtual ~ReplyWriter() = default;
  // Starts a result set (COLMETADATA). The previous one, if any, is ended (DONE with its row
  // count). The returned object is valid until the next call on this writer.
  virtual ResultSet& BeginResult(const std::vector<ResultColumn>& columns) = 0;
  // A message (INFO token), e.g. 5701 after USE.
  virtual void Info(std::int32_t number, const std::string& message) = 0;
  // Ends the statement with an error; nothing may be written after it.
  virtual void Fail(const ServerError& error) = 0;
};

// Answers the statements of one connection. Made by a QueryHandlerFactory after a login
// succeeds; used by that connection's thread only.
class QueryHandler {
 public:
  virtual ~QueryHandler() = default;
  // Runs one statement. Throwing mssql_cdc::Error (or any std::exception) is answered as
  // SQL Server error 50000 with the message; ReplyWriter::Fail is the way to send a
  // specific SQL Server error.
  virtual void Execute(const Statement& statement, ReplyWriter& reply) = 0;
};

// Who logs in: a SQL Server login with its password, or the holder of an access token of
// federated authentication (Entra ID). Both secrets must never reach a log or a message.
struct LoginCredentials {
  std::string user;      // empty with an access token
  std::string password;
  std::optional<std::string> access_token;
};

// A refused login: SQL Server answers error 18456 "Login failed for user '<user>'." and, for
// some causes, a sentence after it (`reason`, e.g. "Token is expired."), never a secret.
struct LoginOutcome {
  std::unique_ptr<QueryHandler> handler;  // nullptr: refused
  std::string reason;
};

// Checks logins and makes a handler per connection. Shared by every connection's thread.
class QueryHandlerFactory {
 public:
  virtual ~QueryHandlerFactory() = default;
  // The handler when the credentials are right. `database` is the LOGIN7 database name,
  // empty when none was given.
  virtual LoginOutcome Login(const LoginCredentials& credentials, const std::string& database) = 0;
  // The name of the database a login lands in (ENVCHANGE), and the server's name.
  virtual std::string DatabaseName() = 0;
  virtual std::string ServerName() = 0;
};

}  // namespace mssql_cdc::tds
