#include "storage/store_errors.h"

#include "core/errors.h"

namespace mssql_cdc::storage {

void ThrowStoreError(const arrow::Status& status, const std::string& doing) {
  const std::string text = status.message();
  const std::string message = doing + ": " + text;
  if (text.find("ACCESS_DENIED") != std::string::npos ||
      text.find("INVALID_ACCESS_KEY_ID") != std::string::npos ||
      text.find("SIGNATURE_DOES_NOT_MATCH") != std::string::npos ||
      text.find("AuthorizationFailure") != std::string::npos ||
      text.find("AuthenticationFailed") != std::string::npos) {
    throw PermissionError(message + " (check the store's credentials and their permissions)");
  }
  if (text.find("NO_SUCH_BUCKET") != std::string::npos ||
      text.find("ContainerNotFound") != std::string::npos) {
    throw ConfigError(message);
  }
  throw SourceError(message);
}

}  // namespace mssql_cdc::storage
