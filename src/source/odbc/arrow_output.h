// Arrow arrays assembled from fetched values without an allocation per value: a validity
// bitmap that is dropped when nothing is NULL, and the offsets and bytes of string and
// binary arrays, written in place. The bytes of a batch start at the size the previous
// batch reached, instead of doubling up to it again.
#pragma once

#include <arrow/array.h>
#include <arrow/buffer_builder.h>
#include <arrow/result.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

namespace mssql_cdc::odbc {

// Throws SourceError naming `label` (the column) unless `status` is OK.
void CheckArrow(const arrow::Status& status, const std::string& label);

template <typename T>
T CheckArrow(arrow::Result<T> result, const std::string& label) {
  CheckArrow(result.status(), label);
  return std::move(result).ValueUnsafe();
}

// The validity bitmap of an array being built; dropped when nothing is NULL.
class Validity {
 public:
  void Reserve(std::int64_t rows, const std::string& label) {
    // Arrow's bitmap builder resizes on every Reserve; rows fetched one at a time would pay
    // that per value.
    if (bits_.length() + rows > bits_.capacity()) CheckArrow(bits_.Reserve(rows), label);
  }
  void Append(bool valid) { bits_.UnsafeAppend(valid); }
  std::int64_t length() const { return bits_.length(); }
  std::int64_t null_count() const { return bits_.false_count(); }
  std::shared_ptr<arrow::Buffer> Finish(const std::string& label) {
    const bool any_null = bits_.false_count() > 0;
    auto buffer = CheckArrow(bits_.Finish(/*shrink_to_fit=*/false), label);
    return any_null ? buffer : nullptr;
  }

 private:
  arrow::TypedBufferBuilder<bool> bits_;
};

// Offsets and bytes of a string or binary array being built. Values are written in place:
// Room(n) gives a pointer with n bytes free, Commit(k) closes a value of k bytes there.
class VariableValues {
 public:
  explicit VariableValues(std::string label) : label_(std::move(label)) {}
  const std::string& label() const { return label_; }

  // Room for `rows` more values' offsets and validity; Append and AppendNull are
  // unchecked after it.
  void Reserve(std::int64_t rows);
  // Throws SourceError when the array would pass 2 GiB, which 32-bit offsets cannot address.
  // Inline while the buffer has the room (every value but a few per batch), which spares a
  // call and a Status per value.
  char* Room(std::size_t bytes) {
    const std::int64_t end = data_.length() + static_cast<std::int64_t>(bytes);
    if (end <= data_.capacity() && end <= std::numeric_limits<std::int32_t>::max()) {
      return reinterpret_cast<char*>(data_.mutable_data() + data_.length());
    }
    return Grow(bytes);
  }
  void Commit(std::size_t bytes) {
    data_.UnsafeAdvance(static_cast<std::int64_t>(bytes));
    offsets_.UnsafeAppend(static_cast<std::int32_t>(data_.length()));
    validity_.Append(true);
  }
  void Append(const void* bytes, std::size_t size) {
    char* at = Room(size);
    if (size > 0) std::memcpy(at, bytes, size);
    Commit(size);
  }
  void AppendNull() {
    offsets_.UnsafeAppend(static_cast<std::int32_t>(data_.length()));
    validity_.Append(false);
  }
  std::int64_t data_bytes() const { return data_.length(); }

  // The array of the values appended so far; the builder is then empty.
  std::shared_ptr<arrow::Array> Finish(const std::shared_ptr<arrow::DataType>& type);

 private:
  char* Grow(std::size_t bytes);

  std::string label_;
  Validity validity_;
  arrow::TypedBufferBuilder<std::int32_t> offsets_;
  arrow::BufferBuilder data_;
  std::int64_t last_data_bytes_ = 0;
};

}  // namespace mssql_cdc::odbc
