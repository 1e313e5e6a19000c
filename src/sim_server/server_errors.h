// The SQL Server errors the simulator answers with: the numbers, states, classes and message
// texts SQL Server itself sends, so that a client's error handling meets what it would meet on
// a real server. SqlError carries one through the statement handlers to ReplyWriter::Fail.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

class SqlError : public std::exception {
 public:
  explicit SqlError(tds::ServerError error) : error_(std::move(error)) {}
  const tds::ServerError& error() const { return error_; }
  const char* what() const noexcept override { return error_.message.c_str(); }

 private:
  tds::ServerError error_;
};

namespace errors {

tds::ServerError IncorrectSyntax(std::string_view near);                  // 102
tds::ServerError UnclosedQuotation(std::string_view text);                // 105
tds::ServerError MustDeclareVariable(std::string_view name);              // 137
tds::ServerError InvalidColumnName(std::string_view name);                // 207
tds::ServerError InvalidObjectName(std::string_view name);                // 208
tds::ServerError SelectPermissionDenied(std::string_view object, std::string_view database,
                                        std::string_view schema);         // 229
tds::ServerError DateConversionFailed();                                  // 241
tds::ServerError DivideByZero();                                          // 8134
tds::ServerError UndefinedType(std::string_view name);                    // 243
tds::ServerError ConversionFailed(std::string_view value, std::string_view from,
                                  std::string_view to);                   // 245
tds::ServerError ImplicitConversion(std::string_view from, std::string_view to);  // 257
// What cdc.fn_cdc_get_all_changes_<ci> raises for an LSN range outside the instance's
// validity interval or a bad row filter option.
tds::ServerError InsufficientArguments();                                 // 313
tds::ServerError DatabaseDoesNotExist(std::string_view name);             // 911
// Transaction statements with no transaction open, and a rollback to an unknown name.
tds::ServerError SaveWithoutTransaction();                                // 628
tds::ServerError CommitWithoutBegin();                                    // 3902
tds::ServerError RollbackWithoutBegin();                                  // 3903
tds::ServerError NoTransactionOrSavepoint(std::string_view name);        // 6401
tds::ServerError InvalidTopValue();                                       // 1014
tds::ServerError NtileArgumentNotPositive();                              // 4115
tds::ServerError InvalidTimeZone(std::string_view name);                 // 9820
// sys.sp_cdc_get_captured_columns and sp_cdc_get_ddl_history for an unknown instance.
tds::ServerError ObjectDoesNotExistOrAccessDenied();                      // 22981
// sp_spaceused of an object the database lacks, or the login cannot see.
tds::ServerError ObjectNotInDatabase(std::string_view object, std::string_view database);  // 15009

}  // namespace errors
}  // namespace mssql_cdc::sim_server
