#include "reconcile/row_diff.h"

#include <arrow/api.h>
#include <arrow/compare.h>
#include <arrow/compute/api.h>

#include <unordered_map>

#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "delta/table_cells.h"
#include "silver/latest_images.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

std::shared_ptr<arrow::Array> Column(const arrow::Table& table, const std::string& name,
                                     const std::shared_ptr<arrow::DataType>& as = nullptr) {
  const auto column = table.GetColumnByName(name);
  if (!column) throw InternalError("reconcile: rows without column " + name);
  auto combined = delta::WholeColumn(*column);
  if (as && !combined->type()->Equals(*as)) {
    delta::EnsureComputeKernels();
    auto cast = arrow::compute::Cast(*combined, as);
    if (!cast.ok()) {
      throw InternalError("reconcile: column " + name + " of the source does not cast to the lake's " +
                          as->ToString() + ": " + cast.status().ToString());
    }
    combined = *cast;
  }
  return combined;
}

nlohmann::json KeyOf(const std::vector<std::shared_ptr<arrow::Array>>& key_columns,
                     const std::vector<std::string>& keys, std::int64_t row) {
  nlohmann::json key = nlohmann::json::object();
  for (std::size_t k = 0; k < keys.size(); ++k) key[keys[k]] = KeyValueJson(*key_columns[k], row);
  return key;
}

}  // namespace

nlohmann::json KeyValueJson(const arrow::Array& column, std::int64_t row) {
  if (column.IsNull(row)) return nullptr;
  auto scalar = column.GetScalar(row);
  if (!scalar.ok()) throw InternalError("reconcile: " + scalar.status().ToString());
  const auto& value = **scalar;
  if (arrow::is_integer(value.type->id())) {
    auto wide = value.CastTo(arrow::int64());
    if (wide.ok()) return static_cast<const arrow::Int64Scalar&>(**wide).value;
  }
  if (value.type->id() == arrow::Type::BOOL) return static_cast<const arrow::BooleanScalar&>(value).value;
  return value.ToString();
}

std::vector<KeyFailure> DiffRows(const arrow::Table& source, const arrow::Table& lake,
                                 const std::vector<std::string>& keys,
                                 const std::vector<std::string>& columns, bool lake_is_whole_range) {
  const std::vector<std::string> lake_keys = EncodeKeys(lake, keys);
  const std::vector<std::string> source_keys = EncodeKeys(source, keys);
  std::unordered_map<std::string_view, std::int64_t> lake_row;
  lake_row.reserve(lake_keys.size());
  for (std::size_t i = 0; i < lake_keys.size(); ++i) lake_row.emplace(lake_keys[i], std::int64_t(i));

  std::vector<std::shared_ptr<arrow::Array>> lake_columns, source_columns, source_key_columns,
      lake_key_columns;
  for (const auto& name : columns) {
    lake_columns.push_back(Column(lake, name));
    source_columns.push_back(Column(source, name, lake_columns.back()->type()));
  }
  for (const auto& name : keys) {
    source_key_columns.push_back(Column(source, name));
    lake_key_columns.push_back(Column(lake, name));
  }
  const auto lake_lsn = Column(lake, std::string(kStartLsnColumn));
  const auto& lsn = static_cast<const arrow::StringArray&>(*lake_lsn);
  const auto equal = arrow::EqualOptions::Defaults().nans_equal(true);

  std::vector<KeyFailure> failures;
  std::vector<bool> matched(lake_keys.size(), false);
  for (std::size_t i = 0; i < source_keys.size(); ++i) {
    const auto row = static_cast<std::int64_t>(i);
    const auto found = lake_row.find(source_keys[i]);
    if (found == lake_row.end()) {
      failures.push_back({KeyOf(source_key_columns, keys, row), kMissingTarget, "{}"});
      continue;
    }
    const std::int64_t at = found->second;
    matched[static_cast<std::size_t>(at)] = true;
    nlohmann::json differing = nlohmann::json::array();
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (!arrow::ArrayRangeEquals(*source_columns[c], *lake_columns[c], row, row + 1, at, equal)) {
        differing.push_back(columns[c]);
      }
    }
    if (differing.empty()) continue;
    nlohmann::json detail = {{"silver_start_lsn", lsn.IsNull(at) ? nlohmann::json(nullptr)
                                                                  : nlohmann::json(std::string(lsn.GetView(at)))},
                             {"columns", differing}};
    failures.push_back({KeyOf(source_key_columns, keys, row), kRecordDiff, detail.dump()});
  }
  if (lake_is_whole_range) {
    for (std::size_t j = 0; j < matched.size(); ++j) {
      if (matched[j]) continue;
      const auto row = static_cast<std::int64_t>(j);
      nlohmann::json detail = {{"silver_start_lsn", lsn.IsNull(row) ? nlohmann::json(nullptr)
                                                                     : nlohmann::json(std::string(lsn.GetView(row)))}};
      failures.push_back({KeyOf(lake_key_columns, keys, row), kMissingSource, detail.dump()});
    }
  }
  return failures;
}

}  // namespace mssql_cdc
