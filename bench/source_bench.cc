// Sim-to-Arrow read throughput: change rows per second that the sim backend of Source turns
// into Arrow record batches, over one range of N changes, for a narrow table (10 columns) and
// a wide one (90 columns, two of them (max) strings). The databases are built once with the
// simulator and kept in --dir for later runs.
//
//   build/bench/source_bench --rows 1000000 --dir bench/out
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
#include "sim/database.h"
#include "sim/transaction.h"
#include "source/sim_source.h"

namespace mssql_cdc::bench {
namespace {

using sim::Row;
using sim::Value;

struct Shape {
  std::string name;
  sim::TableDef table;
  std::function<Row(std::int64_t)> row;
};

std::string Text(std::int64_t i, std::size_t length) {
  std::string s = "v" + std::to_string(i * 2654435761u % 1000003);
  while (s.size() < length) s += s;
  s.resize(length);
  return s;
}

Shape Narrow() {
  Shape s{"narrow", {}, {}};
  s.table.name = sim::TableName{"bench", "narrow"};
  for (const char* decl : {"id bigint not null", "qty int", "total bigint", "name nvarchar(50)",
                           "amount decimal(18,2)", "created datetime2(7)", "active bit",
                           "score float", "day date", "ref uniqueidentifier"}) {
    s.table.columns.push_back(sim::ParseColumnDeclaration(decl));
  }
  s.table.primary_key = {"id"};
  s.row = [](std::int64_t i) {
    char guid[40];
    std::snprintf(guid, sizeof guid, "%08llX-0000-4000-8000-%012llX",
                  static_cast<unsigned long long>(i & 0xFFFFFFFF), static_cast<unsigned long long>(i));
    return Row{{"id", i},
               {"qty", static_cast<std::int64_t>(i % 1000)},
               {"total", i * 7},
               {"name", Text(i, 24)},
               {"amount", std::to_string(i % 100000) + "." + std::to_string(10 + i % 90)},
               {"created", "2026-01-01 00:00:00.1234567"},
               {"active", static_cast<std::int64_t>(i % 2)},
               {"score", static_cast<double>(i) / 7.0},
               {"day", "2026-03-15"},
               {"ref", std::string(guid)}};
  };
  return s;
}

Shape Wide() {
  Shape s{"wide", {}, {}};
  s.table.name = sim::TableName{"bench", "wide"};
  s.table.columns.push_back(sim::ParseColumnDeclaration("id bigint not null"));
  for (int c = 1; c <= 40; ++c) {
    s.table.columns.push_back(sim::ParseColumnDeclaration("d" + std::to_string(c) + " decimal(15,4)"));
  }
  for (int c = 1; c <= 40; ++c) {
    s.table.columns.push_back(sim::ParseColumnDeclaration("s" + std::to_string(c) + " varchar(40)"));
  }
  for (int c = 1; c <= 7; ++c) {
    s.table.columns.push_back(sim::ParseColumnDeclaration("i" + std::to_string(c) + " int"));
  }
  s.table.columns.push_back(sim::ParseColumnDeclaration("m1 varchar(max)"));
  s.table.columns.push_back(sim::ParseColumnDeclaration("m2 nvarchar(max)"));
  s.table.primary_key = {"id"};
  s.row = [](std::int64_t i) {
    Row r{{"id", i}};
    for (int c = 1; c <= 40; ++c) {
      r["d" + std::to_string(c)] = std::to_string((i + c) % 100000) + ".1234";
      r["s" + std::to_string(c)] = Text(i + c, 20);
    }
    for (int c = 1; c <= 7; ++c) r["i" + std::to_string(c)] = static_cast<std::int64_t>((i * c) % 100000);
    r["m1"] = Text(i, 200);
    r["m2"] = Text(i + 1, 300);
    return r;
  };
  return s;
}

// Builds (or reuses) a database holding `rows` insert changes of the shape's table.
std::string Prepare(const Shape& shape, std::int64_t rows, const std::string& dir) {
  const std::string path = dir + "/source_bench_" + shape.name + "_" + std::to_string(rows) + ".sim";
  if (std::filesystem::exists(path)) return path;
  const std::string building = path + ".building";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(building + suffix);
  std::fprintf(stderr, "building %s (%lld changes)...\n", path.c_str(), static_cast<long long>(rows));
  {
    sim::CreateOptions options;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{1'767'225'600'000'000};  // 2026-01-01
    auto db = sim::SimDatabase::Create(building, options);
    db->CreateTable(shape.table);
    db->EnableCdc(shape.table.name);
    constexpr std::int64_t kPerTransaction = 10'000;
    for (std::int64_t first = 1; first <= rows; first += kPerTransaction) {
      std::vector<Row> batch;
      for (std::int64_t i = first; i < std::min(rows + 1, first + kPerTransaction); ++i) {
        batch.push_back(shape.row(i));
      }
      auto txn = db->Begin();
      txn->InsertMany(shape.table.name, std::move(batch));
      txn->Commit();
      db->AdvanceClock(kMicrosPerSecond);
    }
  }
  std::filesystem::rename(building, path);
  for (const char* suffix : {"-wal", "-shm"}) std::filesystem::remove(building + suffix);
  return path;
}

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
  std::string dir = "bench/out";
  int repeats = 3;
  app.add_option("--rows", rows, "Changes in the range")->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Where the benchmark databases are kept");
  app.add_option("--repeats", repeats, "Reads per shape; the median is reported")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  try {
    std::printf("| table | columns | changes | median s | rows/s | Arrow MB/s | best rows/s |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const Shape& shape : {Narrow(), Wide()}) {
      const std::string path = Prepare(shape, rows, dir);
      std::vector<Measurement> runs;
      for (int r = 0; r < repeats; ++r) runs.push_back(ReadAll(path, shape.table.name.DefaultCaptureInstance()));
      std::sort(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; });
      const Measurement& median = runs[runs.size() / 2];
      if (median.rows != rows) {
        std::fprintf(stderr, "read %lld rows, expected %lld\n", static_cast<long long>(median.rows),
                     static_cast<long long>(rows));
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
