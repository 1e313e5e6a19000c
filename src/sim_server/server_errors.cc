#include "sim_server/server_errors.h"

#include <fmt/format.h>

namespace mssql_cdc::sim_server::errors {
namespace {

tds::ServerError Make(std::int32_t number, std::uint8_t state, std::uint8_t severity,
                      std::string message) {
  return tds::ServerError{number, state, severity, std::move(message)};
}

}  // namespace

tds::ServerError IncorrectSyntax(std::string_view near) {
  return Make(102, 1, 15, fmt::format("Incorrect syntax near '{}'.", near));
}

tds::ServerError UnclosedQuotation(std::string_view text) {
  return Make(105, 1, 15,
              fmt::format("Unclosed quotation mark after the character string '{}'.", text));
}

tds::ServerError MustDeclareVariable(std::string_view name) {
  return Make(137, 2, 15, fmt::format("Must declare the scalar variable \"{}\".", name));
}

tds::ServerError InvalidColumnName(std::string_view name) {
  return Make(207, 1, 16, fmt::format("Invalid column name '{}'.", name));
}

tds::ServerError InvalidObjectName(std::string_view name) {
  return Make(208, 1, 16, fmt::format("Invalid object name '{}'.", name));
}

tds::ServerError SelectPermissionDenied(std::string_view object, std::string_view database,
                                        std::string_view schema) {
  return Make(229, 5, 14,
              fmt::format("The SELECT permission was denied on the object '{}', database '{}', "
                          "schema '{}'.",
                          object, database, schema));
}

tds::ServerError UndefinedType(std::string_view name) {
  return Make(243, 2, 16, fmt::format("Type {} is not a defined system type.", name));
}

tds::ServerError DivideByZero() { return Make(8134, 1, 16, "Divide by zero error encountered."); }

tds::ServerError DateConversionFailed() {
  return Make(241, 1, 16, "Conversion failed when converting date and/or time from character string.");
}

tds::ServerError ConversionFailed(std::string_view value, std::string_view from,
                                  std::string_view to) {
  return Make(245, 1, 16,
              fmt::format("Conversion failed when converting the {} value '{}' to data type {}.",
                          from, value, to));
}

tds::ServerError ImplicitConversion(std::string_view from, std::string_view to) {
  return Make(257, 3, 16,
              fmt::format("Implicit conversion from data type {} to {} is not allowed. Use the "
                          "CONVERT function to run this query.",
                          from, to));
}

tds::ServerError InsufficientArguments() {
  return Make(313, 3, 16,
              "An insufficient number of arguments were supplied for the procedure or function "
              "cdc.fn_cdc_get_all_changes_ ...");
}

tds::ServerError DatabaseDoesNotExist(std::string_view name) {
  return Make(911, 1, 16,
              fmt::format("Database '{}' does not exist. Make sure that the name is entered "
                          "correctly.",
                          name));
}

tds::ServerError InvalidTopValue() {
  return Make(1014, 1, 15, "A TOP or FETCH clause contains an invalid value.");
}

tds::ServerError NtileArgumentNotPositive() {
  return Make(4115, 1, 16,
              "The argument 1 of the windowing function ntile has to be a positive integer.");
}

tds::ServerError SaveWithoutTransaction() {
  return Make(628, 0, 16, "Cannot issue SAVE TRANSACTION when there is no active transaction.");
}

tds::ServerError CommitWithoutBegin() {
  return Make(3902, 1, 16,
              "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.");
}

tds::ServerError RollbackWithoutBegin() {
  return Make(3903, 1, 16,
              "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.");
}

tds::ServerError NoTransactionOrSavepoint(std::string_view name) {
  return Make(6401, 1, 16,
              fmt::format("Cannot roll back {}. No transaction or savepoint of that name was found.",
                          name));
}

tds::ServerError ObjectNotInDatabase(std::string_view object, std::string_view database) {
  return Make(15009, 1, 16,
              fmt::format("The object '{}' does not exist in database '{}' or is invalid for "
                          "this operation.",
                          object, database));
}

tds::ServerError InvalidTimeZone(std::string_view name) {
  return Make(9820, 1, 16,
              fmt::format("The time zone parameter '{}' provided to AT TIME ZONE clause is invalid.", name));
}

tds::ServerError ObjectDoesNotExistOrAccessDenied() {
  return Make(22981, 1, 16, "Object does not exist or access is denied.");
}

}  // namespace mssql_cdc::sim_server::errors
