#include "core/errors.h"

namespace mssql_cdc {

std::string_view ErrorClassName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kConfig: return "ConfigError";
    case ErrorCode::kDataLoss: return "DataLossError";
    case ErrorCode::kSchemaChanged: return "SchemaChangedError";
    case ErrorCode::kPermission: return "PermissionError";
    case ErrorCode::kNotFound: return "NotFoundError";
    case ErrorCode::kSource: return "SourceError";
    case ErrorCode::kUnsupportedType: return "UnsupportedTypeError";
    case ErrorCode::kInternal: return "InternalError";
  }
  return "Error";
}

}  // namespace mssql_cdc
