#include "silver/sortable_keys.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cstdint>
#include <cstring>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"

namespace mssql_cdc {
namespace {

void AppendBigEndian(std::string& out, std::uint64_t value, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

// A signed value with its sign bit flipped sorts as unsigned bytes do.
void AppendSigned(std::string& out, std::int64_t value) {
  AppendBigEndian(out, static_cast<std::uint64_t>(value) ^ (std::uint64_t{1} << 63), 8);
}

void AppendDouble(std::string& out, double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  // Negative numbers sort in reverse of their bits; positive ones above every negative.
  bits = (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
  AppendBigEndian(out, bits, 8);
}

// Bytes escaped so that a shorter value sorts before every longer one it begins: 0x00 becomes
// 0x00 0xFF, and 0x00 0x00 ends the value.
void AppendBytes(std::string& out, std::string_view bytes) {
  for (char c : bytes) {
    out.push_back(c);
    if (c == '\0') out.push_back('\xFF');
  }
  out.append("\0\0", 2);
}

// Appends each row's encoding of one column to `out`.
class ColumnEncoder {
 public:
  explicit ColumnEncoder(std::shared_ptr<arrow::Array> column) : column_(std::move(column)) {
    switch (column_->type_id()) {
      case arrow::Type::BOOL:
      case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32: case arrow::Type::INT64:
      case arrow::Type::UINT8: case arrow::Type::UINT16: case arrow::Type::UINT32: case arrow::Type::UINT64:
      case arrow::Type::HALF_FLOAT: case arrow::Type::FLOAT: case arrow::Type::DOUBLE:
      case arrow::Type::STRING: case arrow::Type::LARGE_STRING:
      case arrow::Type::BINARY: case arrow::Type::LARGE_BINARY: case arrow::Type::FIXED_SIZE_BINARY:
      case arrow::Type::DECIMAL128:
        break;
      case arrow::Type::DATE32: case arrow::Type::TIME32:
        column_ = Cast(arrow::int32());
        break;
      case arrow::Type::DATE64: case arrow::Type::TIME64: case arrow::Type::TIMESTAMP: case arrow::Type::DURATION:
        column_ = Cast(arrow::int64());
        break;
      default:
        column_ = Cast(arrow::utf8());
        break;
    }
  }

  void Append(std::string& out, std::int64_t row) const {
    if (column_->IsNull(row)) {
      out.push_back('\1');
      return;
    }
    out.push_back('\0');
    const arrow::Array& a = *column_;
    switch (a.type_id()) {
      case arrow::Type::BOOL:
        out.push_back(static_cast<const arrow::BooleanArray&>(a).Value(row) ? '\1' : '\0');
        return;
      case arrow::Type::INT8: return AppendSigned(out, static_cast<const arrow::Int8Array&>(a).Value(row));
      case arrow::Type::INT16: return AppendSigned(out, static_cast<const arrow::Int16Array&>(a).Value(row));
      case arrow::Type::INT32: return AppendSigned(out, static_cast<const arrow::Int32Array&>(a).Value(row));
      case arrow::Type::INT64: return AppendSigned(out, static_cast<const arrow::Int64Array&>(a).Value(row));
      case arrow::Type::UINT8: return AppendBigEndian(out, static_cast<const arrow::UInt8Array&>(a).Value(row), 8);
      case arrow::Type::UINT16: return AppendBigEndian(out, static_cast<const arrow::UInt16Array&>(a).Value(row), 8);
      case arrow::Type::UINT32: return AppendBigEndian(out, static_cast<const arrow::UInt32Array&>(a).Value(row), 8);
      case arrow::Type::UINT64: return AppendBigEndian(out, static_cast<const arrow::UInt64Array&>(a).Value(row), 8);
      case arrow::Type::HALF_FLOAT: {
        const auto scalar = ValueOrInternal(a.GetScalar(row), "encoding a key");
        const auto as_double = ValueOrInternal(scalar->CastTo(arrow::float64()), "encoding a key");
        return AppendDouble(out, static_cast<const arrow::DoubleScalar&>(*as_double).value);
      }
      case arrow::Type::FLOAT: return AppendDouble(out, static_cast<const arrow::FloatArray&>(a).Value(row));
      case arrow::Type::DOUBLE: return AppendDouble(out, static_cast<const arrow::DoubleArray&>(a).Value(row));
      case arrow::Type::STRING: case arrow::Type::BINARY:
        return AppendBytes(out, static_cast<const arrow::BinaryArray&>(a).GetView(row));
      case arrow::Type::LARGE_STRING: case arrow::Type::LARGE_BINARY:
        return AppendBytes(out, static_cast<const arrow::LargeBinaryArray&>(a).GetView(row));
      case arrow::Type::FIXED_SIZE_BINARY:
        return AppendBytes(out, static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(row));
      case arrow::Type::DECIMAL128: {
        // Two's complement, little endian: big endian with the sign bit flipped sorts by value
        // (one column has one scale).
        const auto* value = static_cast<const arrow::Decimal128Array&>(a).GetValue(row);
        std::uint64_t low, high;
        std::memcpy(&low, value, 8);
        std::memcpy(&high, value + 8, 8);
        AppendBigEndian(out, high ^ (std::uint64_t{1} << 63), 8);
        AppendBigEndian(out, low, 8);
        return;
      }
      default:
        throw InternalError("a key column of type " + a.type()->ToString() + " cannot be encoded");
    }
  }

 private:
  std::shared_ptr<arrow::Array> Cast(const std::shared_ptr<arrow::DataType>& type) const {
    delta::EnsureComputeKernels();
    auto cast = arrow::compute::Cast(*column_, type, arrow::compute::CastOptions::Unsafe(type));
    return ValueOrInternal(std::move(cast), "encoding a key column");
  }

  std::shared_ptr<arrow::Array> column_;
};

}  // namespace

std::vector<std::string> SortableKeys(const arrow::RecordBatch& rows, const std::vector<std::string>& keys) {
  std::vector<ColumnEncoder> encoders;
  for (const auto& key : keys) {
    auto column = rows.GetColumnByName(key);
    if (!column) throw InternalError("key column " + key + " is missing from rows to sort");
    encoders.emplace_back(std::move(column));
  }
  std::vector<std::string> encoded(static_cast<std::size_t>(rows.num_rows()));
  for (std::int64_t i = 0; i < rows.num_rows(); ++i) {
    for (const auto& encoder : encoders) encoder.Append(encoded[static_cast<std::size_t>(i)], i);
  }
  return encoded;
}

}  // namespace mssql_cdc
