// Carries the engine's errors (core/errors.h) through arrow::Status and back.
//
// Arrow's RecordBatchReader::ReadNext reports failure as a Status, and Arrow code (and the C
// stream interface) between a reader and its caller expects no C++ exceptions. The readers
// of this component catch their Error, return it as a Status that keeps its ErrorCode, and
// callers that want the exception back call ThrowIfError.
#pragma once

#include <arrow/status.h>
#include <arrow/type_fwd.h>

#include <memory>

namespace mssql_cdc {

// The status of the exception being handled; call only inside a catch block. An Error keeps
// its code; any other exception becomes an InternalError.
arrow::Status CurrentExceptionToStatus();

// Nothing for an OK status; else throws the Error it carries, as its own class, or a
// SourceError with Arrow's message for a status that carries none.
void ThrowIfError(const arrow::Status& status);

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
