// Sim-to-Arrow read throughput: change rows per second that the sim backend of Source turns
// into Arrow record batches, over one range of N changes, for a narrow table (10 columns) and
// a wide one (90 columns, two of them (max) strings). The databases are built once with the
// simulator and kept in --dir for later runs.
//
//   build/bench/source_bench --rows 1000000 [--wide-rows 400000] --dir bench/out
#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/errors.h"
#include "core/timezone.h"
#include "bench_tables.h"
#include "source/sim/sim_source.h"

namespace mssql_cdc::bench {
namespace {

struct Measurement {
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
  double seconds = 0;
};

Measurement ReadAll(const std::string& path, const std::string& capture_instance) {
  auto source = OpenSimSource(path);
  ChangeReadRequest request;
  request.capture_instance = capture_instance;
  request.from = source->MinLsn(capture_instance);
  request.to = *source->MaxLsn();
  Measurement m;
  const auto start = std::chrono::steady_clock::now();
  auto reader = source->ReadChanges(request, SourceClock::Utc());
  std::shared_ptr<arrow::RecordBatch> batch;
  while (reader->ReadNext(&batch).ok() && batch) {
    m.rows += batch->num_rows();
    m.bytes += arrow::util::TotalBufferSize(*batch);
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace
}  // namespace mssql_cdc::bench

int main(int argc, char** argv) {
  using namespace mssql_cdc::bench;
  CLI::App app{"Sim-to-Arrow change read throughput"};
  std::int64_t rows = 1'000'000;
  std::int64_t wide_rows = 0;
  std::string dir = "bench/out";
  int repeats = 3;
  app.add_option("--rows", rows, "Changes in the range")->check(CLI::PositiveNumber);
  app.add_option("--wide-rows", wide_rows, "Changes in the wide table's range (default: --rows)")
      ->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Where the benchmark databases are kept");
  app.add_option("--repeats", repeats, "Reads per shape; the median is reported")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  try {
    std::printf("| table | columns | changes | median s | rows/s | Arrow MB/s | best rows/s |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const BenchShape& shape : {NarrowShape(), WideShape()}) {
      const std::int64_t changes = shape.name == "wide" && wide_rows > 0 ? wide_rows : rows;
      const std::string path = PrepareBenchDatabase(shape, changes, dir);
      std::vector<Measurement> runs;
      for (int r = 0; r < repeats; ++r) runs.push_back(ReadAll(path, shape.table.name.DefaultCaptureInstance()));
      std::sort(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; });
      const Measurement& median = runs[runs.size() / 2];
      if (median.rows != changes) {
        std::fprintf(stderr, "read %lld rows, expected %lld\n", static_cast<long long>(median.rows),
                     static_cast<long long>(changes));
        return 1;
      }
      std::printf("| %s | %zu | %lld | %.3f | %.0f | %.1f | %.0f |\n", shape.name.c_str(),
                  shape.table.columns.size(), static_cast<long long>(median.rows), median.seconds,
                  median.rows / median.seconds, median.bytes / median.seconds / 1e6,
                  runs.front().rows / runs.front().seconds);
    }
  } catch (const mssql_cdc::Error& e) {
    std::fprintf(stderr, "source_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
