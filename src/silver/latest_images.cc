#include "silver/latest_images.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "delta/schema.h"
#include "delta/table_cells.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

// A column's values as bytes: strings and binaries as they are, other types as their text.
std::shared_ptr<arrow::Array> AsBytes(const std::shared_ptr<arrow::Array>& column) {
  switch (column->type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return column;
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::FIXED_SIZE_BINARY: {
      auto cast = arrow::compute::Cast(*column, arrow::binary());
      CheckInternal(cast.status(), "encoding a key column");
      return *cast;
    }
    default: {
      auto cast = arrow::compute::Cast(*column, arrow::utf8());
      CheckInternal(cast.status(), "encoding a key column");
      return *cast;
    }
  }
}

std::string_view ViewAt(const arrow::Array& bytes, std::int64_t i) {
  return static_cast<const arrow::BinaryArray&>(bytes).GetView(i);
}

template <typename T>
int CompareNullsLast(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return a.has_value() ? -1 : 1;
  if (!a) return 0;
  return *a < *b ? -1 : (*b < *a ? 1 : 0);
}

std::shared_ptr<arrow::Array> ColumnOrNull(const arrow::Table& table, std::string_view name) {
  auto column = table.GetColumnByName(std::string(name));
  return column ? delta::WholeColumn(*column) : nullptr;
}

// An integer column as int64 values, cast once rather than per row.
std::shared_ptr<arrow::Int64Array> AsInt64(const std::shared_ptr<arrow::Array>& column) {
  if (!column) return nullptr;
  auto cast = arrow::compute::Cast(*column, arrow::int64());
  CheckInternal(cast.status(), "reading a rank column");
  return std::static_pointer_cast<arrow::Int64Array>(*cast);
}

std::optional<std::int64_t> IntAt(const std::shared_ptr<arrow::Int64Array>& column, std::int64_t i) {
  if (!column || column->IsNull(i)) return std::nullopt;
  return column->Value(i);
}

}  // namespace

ImageRanks::ImageRanks(const arrow::Table& rows) {
  delta::EnsureComputeKernels();
  Bind(ColumnOrNull(rows, kStartLsnColumn), ColumnOrNull(rows, kOperationColumn), ColumnOrNull(rows, kCommandIdColumn),
       ColumnOrNull(rows, kSeqvalColumn));
}

ImageRanks::ImageRanks(const arrow::RecordBatch& rows) {
  delta::EnsureComputeKernels();
  auto column = [&](std::string_view name) { return rows.GetColumnByName(std::string(name)); };
  Bind(column(kStartLsnColumn), column(kOperationColumn), column(kCommandIdColumn), column(kSeqvalColumn));
}

void ImageRanks::Bind(std::shared_ptr<arrow::Array> lsns, std::shared_ptr<arrow::Array> operations,
                      std::shared_ptr<arrow::Array> command_ids, std::shared_ptr<arrow::Array> seqvals) {
  if (!lsns || !operations) throw InternalError("bronze rows lack _start_lsn or _operation");
  lsns_ = std::static_pointer_cast<arrow::StringArray>(lsns);
  operations_ = AsInt64(operations);
  command_ids_ = AsInt64(command_ids);
  seqvals_ = std::static_pointer_cast<arrow::StringArray>(seqvals);
}

bool ImageRanks::Outranks(const ImageRanks& x, std::int64_t a, const ImageRanks& y, std::int64_t b) {
  if (int c = x.lsns_->GetView(a).compare(y.lsns_->GetView(b)); c != 0) return c > 0;
  if (int c = CompareNullsLast(IntAt(x.command_ids_, a), IntAt(y.command_ids_, b)); c != 0) return c > 0;
  auto seqval = [](const ImageRanks& r, std::int64_t i) -> std::optional<std::string_view> {
    if (!r.seqvals_ || r.seqvals_->IsNull(i)) return std::nullopt;
    return r.seqvals_->GetView(i);
  };
  if (int c = CompareNullsLast(seqval(x, a), seqval(y, b)); c != 0) return c > 0;
  return x.Operation(a) > y.Operation(b);
}

std::int64_t ImageRanks::Operation(std::int64_t row) const { return IntAt(operations_, row).value_or(0); }

bool ImageRanks::Deletes(std::int64_t row) const {
  const auto operation = Operation(row);
  return operation == 1 || operation == 3;
}

std::string_view ImageRanks::Lsn(std::int64_t row) const { return lsns_->GetView(row); }

bool IsSingleIntegerKey(const arrow::Schema& schema, const std::vector<std::string>& keys) {
  const auto field = keys.size() == 1 ? schema.GetFieldByName(keys.front()) : nullptr;
  if (!field) return false;
  switch (field->type()->id()) {
    case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32: case arrow::Type::INT64:
    case arrow::Type::UINT8: case arrow::Type::UINT16: case arrow::Type::UINT32:
      return true;
    default:
      return false;
  }
}

std::shared_ptr<arrow::Int64Array> IntegerKeyValues(const arrow::Table& rows, const std::string& key) {
  delta::EnsureComputeKernels();
  return AsInt64(delta::WholeColumn(*rows.GetColumnByName(key)));
}

std::vector<std::int64_t> KeyGroups(const arrow::Table& rows, const std::vector<std::string>& keys,
                                    std::int64_t* groups) {
  delta::EnsureComputeKernels();
  std::vector<std::int64_t> group_of(static_cast<std::size_t>(rows.num_rows()));
  *groups = 0;
  if (IsSingleIntegerKey(*rows.schema(), keys)) {
    // One integer key: grouped by value, without a text per row.
    const auto values = IntegerKeyValues(rows, keys.front());
    std::unordered_map<std::int64_t, std::int64_t> by_value;
    by_value.reserve(static_cast<std::size_t>(values->length()));
    std::optional<std::int64_t> null_group;
    for (std::int64_t i = 0; i < values->length(); ++i) {
      if (values->IsNull(i)) {
        if (!null_group) null_group = (*groups)++;
        group_of[static_cast<std::size_t>(i)] = *null_group;
      } else {
        group_of[static_cast<std::size_t>(i)] = by_value.emplace(values->Value(i), *groups).first->second;
        if (group_of[static_cast<std::size_t>(i)] == *groups) ++*groups;
      }
    }
    return group_of;
  }
  const auto encoded = EncodeKeys(rows, keys);
  std::unordered_map<std::string_view, std::int64_t> by_key;
  by_key.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    group_of[i] = by_key.emplace(encoded[i], *groups).first->second;
    if (group_of[i] == *groups) ++*groups;
  }
  return group_of;
}

namespace {

// Rows' keys encoded from their key columns; `column_of` gives a key's column as one array
// (null when the rows lack it).
template <typename ColumnOf>
std::vector<std::string> EncodeKeyColumns(const std::vector<std::string>& keys, std::int64_t rows,
                                          const ColumnOf& column_of) {
  delta::EnsureComputeKernels();
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& key : keys) {
    std::shared_ptr<arrow::Array> column = column_of(key);
    if (!column) throw InternalError("key column " + key + " is missing from rows to match");
    columns.push_back(AsBytes(column));
  }
  std::vector<std::string> encoded(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) {
    std::string& out = encoded[static_cast<std::size_t>(i)];
    for (const auto& column : columns) {
      if (column->IsNull(i)) {
        out.push_back('\0');
        continue;
      }
      const auto view = ViewAt(*column, i);
      const auto size = static_cast<std::uint32_t>(view.size());
      out.push_back('\1');
      out.append(reinterpret_cast<const char*>(&size), sizeof size);
      out.append(view);
    }
  }
  return encoded;
}

}  // namespace

std::vector<std::string> EncodeKeys(const arrow::Table& table, const std::vector<std::string>& keys) {
  return EncodeKeyColumns(keys, table.num_rows(), [&](const std::string& key) -> std::shared_ptr<arrow::Array> {
    const auto column = table.GetColumnByName(key);
    return column ? delta::WholeColumn(*column) : nullptr;
  });
}

std::vector<std::string> EncodeKeys(const arrow::RecordBatch& rows, const std::vector<std::string>& keys) {
  return EncodeKeyColumns(keys, rows.num_rows(), [&](const std::string& key) { return rows.GetColumnByName(key); });
}

std::string NewestChangeLsn(const arrow::Table& bronze_rows) {
  delta::EnsureComputeKernels();
  const auto lsns = ColumnOrNull(bronze_rows, kStartLsnColumn);
  const auto operations = AsInt64(ColumnOrNull(bronze_rows, kOperationColumn));
  if (!lsns || !operations) throw InternalError("bronze rows lack _start_lsn or _operation");
  const auto& lsn_strings = static_cast<const arrow::StringArray&>(*lsns);
  std::string newest;
  for (std::int64_t i = 0; i < bronze_rows.num_rows(); ++i) {
    if (IntAt(operations, i).value_or(0) == 0) continue;
    const auto lsn = lsn_strings.GetView(i);
    if (newest.empty() || lsn > newest) newest = std::string(lsn);
  }
  return newest;
}

LatestImages LatestImagesOf(const std::shared_ptr<arrow::Table>& bronze_rows,
                            const std::vector<std::string>& keys,
                            const std::shared_ptr<arrow::Schema>& silver) {
  delta::EnsureComputeKernels();
  LatestImages images;
  const ImageRanks ranks(*bronze_rows);
  std::int64_t groups = 0;
  const auto group_of = KeyGroups(*bronze_rows, keys, &groups);
  std::vector<std::int64_t> latest(static_cast<std::size_t>(groups), -1);  // group -> row of its latest image
  for (std::int64_t i = 0; i < bronze_rows->num_rows(); ++i) {
    const auto lsn = ranks.Lsn(i);
    if (images.max_lsn.empty() || lsn > images.max_lsn) images.max_lsn = std::string(lsn);
    auto& best = latest[static_cast<std::size_t>(group_of[static_cast<std::size_t>(i)])];
    if (best < 0 || ImageRanks::Outranks(ranks, i, ranks, best)) best = i;
  }

  images.max_change_lsn = NewestChangeLsn(*bronze_rows);
  arrow::Int64Builder take;
  CheckInternal(take.Reserve(groups), "choosing images");
  for (const std::int64_t row : latest) {
    take.UnsafeAppend(row);
    images.deletes.push_back(ranks.Deletes(row));
  }
  std::shared_ptr<arrow::Array> indices;
  CheckInternal(take.Finish(&indices), "choosing images");
  auto taken = arrow::compute::Take(bronze_rows, indices);
  CheckInternal(taken.status(), "choosing images");
  auto batch = taken->table()->CombineChunksToBatch();
  CheckInternal(batch.status(), "choosing images");
  images.rows = *arrow::Table::FromRecordBatches(
      {delta::AlignBatchToSchema(**batch, silver, "silver")});
  return images;
}

}  // namespace mssql_cdc
