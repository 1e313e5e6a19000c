#include "source/odbc/arrow_output.h"

#include <limits>

#include "core/errors.h"

namespace mssql_cdc::odbc {

void CheckArrow(const arrow::Status& status, const std::string& label) {
  if (!status.ok()) throw SourceError("cannot build the Arrow array of " + label + ": " + status.ToString());
}

void VariableValues::Reserve(std::int64_t rows) {
  validity_.Reserve(rows, label_);
  if (data_.length() == 0 && data_.capacity() < last_data_bytes_) {
    CheckArrow(data_.Reserve(last_data_bytes_), label_);
  }
  if (offsets_.length() == 0) {
    CheckArrow(offsets_.Reserve(rows + 1), label_);
    offsets_.UnsafeAppend(0);
  } else {
    CheckArrow(offsets_.Reserve(rows), label_);
  }
}

char* VariableValues::Grow(std::size_t bytes) {
  if (data_.length() + static_cast<std::int64_t>(bytes) > std::numeric_limits<std::int32_t>::max()) {
    throw SourceError(label_ + " holds more than 2 GiB in one record batch, more than an Arrow "
                      "array can take: lower arrowBatchSize");
  }
  CheckArrow(data_.Reserve(static_cast<std::int64_t>(bytes)), label_);
  return reinterpret_cast<char*>(data_.mutable_data() + data_.length());
}

std::shared_ptr<arrow::Array> VariableValues::Finish(const std::shared_ptr<arrow::DataType>& type) {
  if (offsets_.length() == 0) CheckArrow(offsets_.Append(0), label_);  // no row at all
  const std::int64_t length = validity_.length();
  const std::int64_t nulls = validity_.null_count();
  auto validity = validity_.Finish(label_);
  auto offsets = CheckArrow(offsets_.Finish(/*shrink_to_fit=*/false), label_);
  last_data_bytes_ = data_.length();
  auto data = CheckArrow(data_.Finish(/*shrink_to_fit=*/false), label_);
  return arrow::MakeArray(arrow::ArrayData::Make(type, length, {validity, offsets, data}, nulls));
}

}  // namespace mssql_cdc::odbc
