// Errors of the engine. Every failure the engine reports is an Error with a stable code and
// the class name the reference library uses, so callers (C++, the CLI, Python) can tell a
// data-loss stop from a bad option without parsing messages. Messages say what is wrong and
// how to fix it, and never carry a secret.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace mssql_cdc {

// Stable numeric codes: only added, never renumbered (they reach logs, exit codes and Python).
enum class ErrorCode : int {
  kConfig = 1,          // a bad option, argument or name given by the user
  kDataLoss = 2,        // CDC cleanup purged changes the stream has not read
  kSchemaChanged = 3,   // the source's schema changed in a way the target cannot take
  kPermission = 4,      // the login lacks a permission
  kNotFound = 5,        // a named object (capture instance, table) does not exist
  kSource = 6,          // the source failed to answer (I/O, connection, a corrupt file)
  kUnsupportedType = 7, // a SQL Server type with no mapping
  kInternal = 8,        // a broken invariant: a bug
  kConcurrentModification = 9,  // another writer committed a conflicting change first
  kCheckpointInUse = 10,  // another process runs the stream of this checkpoint now
};

// Every code, in order: what the Python package and other callers enumerate.
inline constexpr ErrorCode kErrorCodes[] = {
    ErrorCode::kConfig,         ErrorCode::kDataLoss,        ErrorCode::kSchemaChanged,
    ErrorCode::kPermission,     ErrorCode::kNotFound,        ErrorCode::kSource,
    ErrorCode::kUnsupportedType, ErrorCode::kInternal,       ErrorCode::kConcurrentModification,
    ErrorCode::kCheckpointInUse,
};

// The reference's class name of each code ("DataLossError", "ValueError"-like "ConfigError", ...).
std::string_view ErrorClassName(ErrorCode code);

// Throws the Error class of `code` with `message`: how an error that crossed a boundary as a
// code (an arrow::Status, another process) becomes its own class again.
[[noreturn]] void ThrowError(ErrorCode code, const std::string& message);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }
  std::string_view class_name() const { return ErrorClassName(code_); }

 private:
  ErrorCode code_;
};

class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& m) : Error(ErrorCode::kConfig, m) {}
};
class DataLossError : public Error {
 public:
  explicit DataLossError(const std::string& m) : Error(ErrorCode::kDataLoss, m) {}
};
class SchemaChangedError : public Error {
 public:
  explicit SchemaChangedError(const std::string& m) : Error(ErrorCode::kSchemaChanged, m) {}
};
class PermissionError : public Error {
 public:
  explicit PermissionError(const std::string& m) : Error(ErrorCode::kPermission, m) {}
};
class NotFoundError : public Error {
 public:
  explicit NotFoundError(const std::string& m) : Error(ErrorCode::kNotFound, m) {}
};
class SourceError : public Error {
 public:
  explicit SourceError(const std::string& m) : Error(ErrorCode::kSource, m) {}
};
class UnsupportedTypeError : public Error {
 public:
  explicit UnsupportedTypeError(const std::string& m) : Error(ErrorCode::kUnsupportedType, m) {}
};
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& m) : Error(ErrorCode::kInternal, m) {}
};
// A commit lost the race to another writer whose change it cannot be retried on top of
// (a schema or protocol change, a removed file the commit read). Re-run the operation.
class ConcurrentModificationError : public Error {
 public:
  explicit ConcurrentModificationError(const std::string& m)
      : Error(ErrorCode::kConcurrentModification, m) {}
};

// A stream's checkpoint is owned by another running process (invariant 8 of docs/invariants.md: one writer per
// stream). The message names the holder; nothing was read or written.
class CheckpointInUseError : public Error {
 public:
  explicit CheckpointInUseError(const std::string& m) : Error(ErrorCode::kCheckpointInUse, m) {}
};

}  // namespace mssql_cdc
