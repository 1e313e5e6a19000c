#include "core/arrow_status.h"

#include <exception>
#include <memory>
#include <string>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

constexpr const char kDetailType[] = "mssql_cdc::Error";

class ErrorDetail : public arrow::StatusDetail {
 public:
  ErrorDetail(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  const char* type_id() const override { return kDetailType; }
  std::string ToString() const override { return std::string(ErrorClassName(code_)); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

arrow::Status StatusOf(ErrorCode code, const std::string& message) {
  return arrow::Status(arrow::StatusCode::IOError, message,
                       std::make_shared<ErrorDetail>(code, message));
}

// The engine Error a status carries, thrown as its own class; nothing when it carries none.
void ThrowCarriedError(const arrow::Status& status) {
  const auto& detail = status.detail();
  if (detail != nullptr && std::string(detail->type_id()) == kDetailType) {
    const auto& error = static_cast<const ErrorDetail&>(*detail);
    ThrowError(error.code(), error.message());
  }
}

}  // namespace

arrow::Status CurrentExceptionToStatus() {
  try {
    throw;
  } catch (const Error& e) {
    return StatusOf(e.code(), e.what());
  } catch (const std::exception& e) {
    return StatusOf(ErrorCode::kInternal, std::string("unexpected failure: ") + e.what());
  } catch (...) {
    return StatusOf(ErrorCode::kInternal, "unexpected failure of an unknown kind");
  }
}

void ThrowIfError(const arrow::Status& status) {
  if (status.ok()) return;
  ThrowCarriedError(status);
  throw SourceError(status.ToString());
}

void ThrowIfError(const arrow::Status& status, std::string_view doing) {
  if (status.ok()) return;
  ThrowCarriedError(status);
  throw SourceError(std::string(doing) + ": " + status.ToString());
}

void CheckInternal(const arrow::Status& status, std::string_view what) {
  if (!status.ok()) throw InternalError(std::string(what) + ": " + status.ToString());
}

}  // namespace mssql_cdc
