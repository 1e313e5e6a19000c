// A read's rows in bronze's columns.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>

#include "delta/compute_kernels.h"
#include "engine/batch_reader.h"

namespace mssql_cdc {
namespace {

// Arrow registers its compute functions again when they are first registered in a process,
// and a cast asked meanwhile finds no "cast" function: a stream's read thread cast a widened
// column while its writer registered them for file statistics. Each ctest test runs in a
// process of its own, so the registration below is the process's first (without the engine's
// registration before its cast, 9 of 10 processes failed here on 2026-12-07).
TEST(AlignToBronzeTest, AWidenedColumnIsCastWhileAnotherThreadRegistersComputeFunctions) {
  arrow::Int32Builder quantities;
  ASSERT_TRUE(quantities.AppendValues({1, 2}).ok());
  std::shared_ptr<arrow::Array> read;
  ASSERT_TRUE(quantities.Finish(&read).ok());
  const auto batch =
      arrow::RecordBatch::Make(arrow::schema({arrow::field("qty", arrow::int32())}), 2, {read});
  const auto bronze = arrow::schema({arrow::field("qty", arrow::int64()),
                                     arrow::field("_batch_id", arrow::int64())});

  std::atomic<bool> go{false};
  std::thread writer([&] {
    while (!go) std::this_thread::yield();
    delta::EnsureComputeKernels();
  });
  go = true;
  int failures = 0;
  std::string first;
  for (int i = 0; i < 2000; ++i) {
    try {
      const auto aligned = AlignToBronze(batch, bronze, 7, std::nullopt);
      ASSERT_TRUE(aligned->schema()->Equals(*bronze));
      EXPECT_EQ(static_cast<const arrow::Int64Array&>(*aligned->column(0)).Value(1), 2);
      EXPECT_EQ(static_cast<const arrow::Int64Array&>(*aligned->column(1)).Value(0), 7);
    } catch (const std::exception& e) {
      if (failures++ == 0) first = e.what();
    }
  }
  writer.join();
  EXPECT_EQ(failures, 0) << first;
}

}  // namespace
}  // namespace mssql_cdc
