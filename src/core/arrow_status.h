// How an arrow::Status becomes one of the engine's errors (core/errors.h), and back.
//
// Arrow reports failure as a Status. The engine's own Arrow calls fail in two ways, each with
// one rule here:
// - reading or writing data from outside (a file, a source's rows, a reader's ReadNext): the
//   engine Error the status carries keeps its class and code; a plain status is a SourceError;
// - building its own arrays and tables: a broken invariant, an InternalError.
// Arrow code (and the C stream interface) between a reader and its caller expects no C++
// exceptions, so readers catch their Error and return it as a Status that keeps its
// ErrorCode (CurrentExceptionToStatus); callers that want the exception back call ThrowIfError.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>
#include <arrow/type_fwd.h>

#include <memory>
#include <string_view>
#include <utility>

namespace mssql_cdc {

// The status of the exception being handled; call only inside a catch block. An Error keeps
// its code; any other exception becomes an InternalError.
arrow::Status CurrentExceptionToStatus();

// Nothing for an OK status; else throws the Error it carries, as its own class, or a
// SourceError with Arrow's message (after "doing: " when `doing` is given) for a status that
// carries none.
void ThrowIfError(const arrow::Status& status);
void ThrowIfError(const arrow::Status& status, std::string_view doing);

// Nothing for an OK status; else an InternalError "what: Arrow's message". For the engine's
// own arrays, whose building fails only on a bug.
void CheckInternal(const arrow::Status& status, std::string_view what);

template <typename T>
T ValueOrInternal(arrow::Result<T> result, std::string_view what) {
  CheckInternal(result.status(), what);
  return std::move(result).ValueOrDie();
}

// The body of a RecordBatchReader::ReadNext: sets *batch to next() (null at the end) and
// returns OK; when next() throws, runs `release` (which must not throw) to end the read, sets
// *batch to null and returns the exception as CurrentExceptionToStatus does.
template <typename Next, typename Release>
arrow::Status ReadNextOrStatus(std::shared_ptr<arrow::RecordBatch>* batch, Next&& next,
                               Release&& release) {
  try {
    *batch = next();
    return arrow::Status::OK();
  } catch (...) {
    release();
    *batch = nullptr;
    return CurrentExceptionToStatus();
  }
}

}  // namespace mssql_cdc
