#include "silver/latest_images.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/errors.h"
#include "delta/schema.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

void Check(const arrow::Status& status, const std::string& what) {
  if (!status.ok()) throw InternalError(what + ": " + status.ToString());
}

std::shared_ptr<arrow::Array> Combined(const std::shared_ptr<arrow::ChunkedArray>& column) {
  if (column->num_chunks() == 1) return column->chunk(0);
  auto combined = arrow::Concatenate(column->chunks());
  Check(combined.status(), "combining a column");
  return *combined;
}

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
      Check(cast.status(), "encoding a key column");
      return *cast;
    }
    default: {
      auto cast = arrow::compute::Cast(*column, arrow::utf8());
      Check(cast.status(), "encoding a key column");
      return *cast;
    }
  }
}

std::string_view ViewAt(const arrow::Array& bytes, std::int64_t i) {
  return static_cast<const arrow::BinaryArray&>(bytes).GetView(i);
}

// One bronze row's rank, compared as (lsn, command id, seqval, operation), NULLs last.
struct Rank {
  std::string_view lsn;
  std::optional<std::int64_t> command_id;
  std::optional<std::string_view> seqval;
  std::int64_t operation = 0;
};

template <typename T>
int CompareNullsLast(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return a.has_value() ? -1 : 1;
  if (!a) return 0;
  return *a < *b ? -1 : (*b < *a ? 1 : 0);
}

bool Outranks(const Rank& a, const Rank& b) {
  if (int c = a.lsn.compare(b.lsn); c != 0) return c > 0;
  if (int c = CompareNullsLast(a.command_id, b.command_id); c != 0) return c > 0;
  if (int c = CompareNullsLast(a.seqval, b.seqval); c != 0) return c > 0;
  return a.operation > b.operation;
}

std::shared_ptr<arrow::Array> ColumnOrNull(const arrow::Table& table, std::string_view name) {
  auto column = table.GetColumnByName(std::string(name));
  return column ? Combined(column) : nullptr;
}

// An integer column as int64 values, cast once rather than per row.
std::shared_ptr<arrow::Int64Array> AsInt64(const std::shared_ptr<arrow::Array>& column) {
  if (!column) return nullptr;
  auto cast = arrow::compute::Cast(*column, arrow::int64());
  Check(cast.status(), "reading a rank column");
  return std::static_pointer_cast<arrow::Int64Array>(*cast);
}

std::optional<std::int64_t> IntAt(const std::shared_ptr<arrow::Int64Array>& column, std::int64_t i) {
  if (!column || column->IsNull(i)) return std::nullopt;
  return column->Value(i);
}

}  // namespace

std::vector<std::string> EncodeKeys(const arrow::Table& table, const std::vector<std::string>& keys) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& key : keys) {
    auto column = table.GetColumnByName(key);
    if (!column) throw InternalError("key column " + key + " is missing from rows to match");
    columns.push_back(AsBytes(Combined(column)));
  }
  std::vector<std::string> encoded(static_cast<std::size_t>(table.num_rows()));
  for (std::int64_t i = 0; i < table.num_rows(); ++i) {
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

LatestImages LatestImagesOf(const std::shared_ptr<arrow::Table>& bronze_rows,
                            const std::vector<std::string>& keys,
                            const std::shared_ptr<arrow::Schema>& silver) {
  LatestImages images;
  const auto lsns = ColumnOrNull(*bronze_rows, kStartLsnColumn);
  const auto operations = AsInt64(ColumnOrNull(*bronze_rows, kOperationColumn));
  if (!lsns || !operations) throw InternalError("bronze rows lack _start_lsn or _operation");
  const auto command_ids = AsInt64(ColumnOrNull(*bronze_rows, kCommandIdColumn));
  const auto seqvals = ColumnOrNull(*bronze_rows, kSeqvalColumn);
  const auto& lsn_strings = static_cast<const arrow::StringArray&>(*lsns);
  const auto* seqval_strings = static_cast<const arrow::StringArray*>(seqvals.get());

  auto rank_at = [&](std::int64_t i) {
    Rank rank;
    rank.lsn = lsn_strings.GetView(i);
    rank.command_id = IntAt(command_ids, i);
    if (seqval_strings && seqval_strings->IsValid(i)) rank.seqval = seqval_strings->GetView(i);
    rank.operation = IntAt(operations, i).value_or(0);
    return rank;
  };

  const auto encoded = EncodeKeys(*bronze_rows, keys);
  std::unordered_map<std::string_view, std::int64_t> latest;  // key -> row of its latest image
  latest.reserve(encoded.size());
  std::vector<std::int64_t> order;  // rows that are a key's latest image, first seen first
  for (std::int64_t i = 0; i < bronze_rows->num_rows(); ++i) {
    const auto lsn = lsn_strings.GetView(i);
    if (images.max_lsn.empty() || lsn > images.max_lsn) images.max_lsn = std::string(lsn);
    if (IntAt(operations, i).value_or(0) != 0 && (images.max_change_lsn.empty() || lsn > images.max_change_lsn)) {
      images.max_change_lsn = std::string(lsn);
    }
    auto [it, inserted] = latest.emplace(encoded[static_cast<std::size_t>(i)], i);
    if (inserted) {
      order.push_back(i);
    } else if (Outranks(rank_at(i), rank_at(it->second))) {
      it->second = i;
    }
  }

  arrow::Int64Builder take;
  Check(take.Reserve(static_cast<std::int64_t>(order.size())), "choosing images");
  for (auto first_row : order) {
    const std::int64_t row = latest.at(encoded[static_cast<std::size_t>(first_row)]);
    take.UnsafeAppend(row);
    const auto operation = IntAt(operations, row).value_or(0);
    images.deletes.push_back(operation == 1 || operation == 3);
    images.keys.push_back(encoded[static_cast<std::size_t>(row)]);
  }
  std::shared_ptr<arrow::Array> indices;
  Check(take.Finish(&indices), "choosing images");
  auto taken = arrow::compute::Take(bronze_rows, indices);
  Check(taken.status(), "choosing images");
  auto batch = taken->table()->CombineChunksToBatch();
  Check(batch.status(), "choosing images");
  images.rows = *arrow::Table::FromRecordBatches(
      {delta::AlignBatchToSchema(**batch, silver, "silver")});
  return images;
}

}  // namespace mssql_cdc
