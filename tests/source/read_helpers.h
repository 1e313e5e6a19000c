// Helpers for tests of Source reads: drain a RecordBatchReader, look at its columns.
#pragma once

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/arrow_status.h"

namespace mssql_cdc::testing {

inline std::vector<std::shared_ptr<arrow::RecordBatch>> Drain(arrow::RecordBatchReader& reader) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader.ReadNext(&batch));
    if (batch == nullptr) return batches;
    batches.push_back(std::move(batch));
  }
}

// All batches as one, validated in full.
inline std::shared_ptr<arrow::RecordBatch> ReadAll(arrow::RecordBatchReader& reader) {
  auto batches = Drain(reader);
  auto table = arrow::Table::FromRecordBatches(reader.schema(), batches).ValueOrDie();
  auto batch = table->CombineChunksToBatch().ValueOrDie();
  EXPECT_TRUE(batch->ValidateFull().ok()) << batch->ValidateFull().ToString();
  return batch;
}

template <typename ArrayType>
std::shared_ptr<ArrayType> Column(const arrow::RecordBatch& batch, const std::string& name) {
  auto array = batch.GetColumnByName(name);
  if (array == nullptr) throw std::runtime_error("no column " + name);
  return std::static_pointer_cast<ArrayType>(array);
}

// The values of a string column, "NULL" for nulls.
inline std::vector<std::string> Strings(const arrow::RecordBatch& batch, const std::string& name) {
  auto array = Column<arrow::StringArray>(batch, name);
  std::vector<std::string> out;
  for (int64_t i = 0; i < array->length(); ++i) {
    out.push_back(array->IsNull(i) ? "NULL" : std::string(array->GetView(i)));
  }
  return out;
}

template <typename ArrayType>
std::vector<int64_t> Ints(const arrow::RecordBatch& batch, const std::string& name) {
  auto array = Column<ArrayType>(batch, name);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < array->length(); ++i) {
    out.push_back(array->IsNull(i) ? -999 : static_cast<int64_t>(array->Value(i)));
  }
  return out;
}

}  // namespace mssql_cdc::testing
