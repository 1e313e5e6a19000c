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
    case ErrorCode::kConcurrentModification: return "ConcurrentModificationError";
    case ErrorCode::kCheckpointInUse: return "CheckpointInUseError";
  }
  return "Error";
}

void ThrowError(ErrorCode code, const std::string& message) {
  switch (code) {
    case ErrorCode::kConfig: throw ConfigError(message);
    case ErrorCode::kDataLoss: throw DataLossError(message);
    case ErrorCode::kSchemaChanged: throw SchemaChangedError(message);
    case ErrorCode::kPermission: throw PermissionError(message);
    case ErrorCode::kNotFound: throw NotFoundError(message);
    case ErrorCode::kSource: throw SourceError(message);
    case ErrorCode::kUnsupportedType: throw UnsupportedTypeError(message);
    case ErrorCode::kInternal: throw InternalError(message);
    case ErrorCode::kConcurrentModification: throw ConcurrentModificationError(message);
    case ErrorCode::kCheckpointInUse: throw CheckpointInUseError(message);
  }
  throw Error(code, message);
}

}  // namespace mssql_cdc
