#include "bench_tables.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/time.h"
#include "sim/transaction.h"

namespace mssql_cdc::bench {

using sim::Row;
using sim::Value;

namespace {

std::string Text(std::int64_t i, std::size_t length) {
  std::string s = "v" + std::to_string(i * 2654435761u % 1000003);
  while (s.size() < length) s += s;
  s.resize(length);
  return s;
}

}  // namespace

BenchShape NarrowShape() {
  BenchShape s{"narrow", {}, {}};
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

BenchShape WideShape() {
  BenchShape s{"wide", {}, {}};
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

BenchShape LobShape(std::int64_t lob_every) {
  BenchShape narrow = NarrowShape();
  BenchShape s{"lob" + std::to_string(lob_every), narrow.table, {}};
  s.table.name = sim::TableName{"bench", "lob"};
  s.table.columns.push_back(sim::ParseColumnDeclaration("doc nvarchar(max)"));
  s.table.columns.push_back(sim::ParseColumnDeclaration("data varbinary(max)"));
  s.row = [narrow_row = narrow.row, lob_every](std::int64_t i) {
    Row r = narrow_row(i);
    if (i % lob_every == 0) {
      constexpr std::size_t kMiB = 1 << 20;
      r["doc"] = Text(i, kMiB);
      std::string bytes(kMiB, '\0');
      for (std::size_t k = 0; k < kMiB; ++k) bytes[k] = static_cast<char>((k * 131 + i) & 0xFF);
      r["data"] = sim::Bytes{std::move(bytes)};
    }
    return r;
  };
  return s;
}

std::string PrepareBenchDatabase(const BenchShape& shape, std::int64_t rows,
                                 const std::string& dir, std::int64_t per_transaction,
                                 bool wire_rows) {
  const std::string path = dir + "/source_bench_" + shape.name + "_" + std::to_string(rows) +
                           (per_transaction == 10'000 ? "" : "_t" + std::to_string(per_transaction)) +
                           (wire_rows ? "" : "_nowire") + ".sim";
  if (std::filesystem::exists(path)) return path;
  const std::string building = path + ".building";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(building + suffix);
  std::fprintf(stderr, "building %s (%lld changes)...\n", path.c_str(), static_cast<long long>(rows));
  {
    sim::CreateOptions options;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{1'767'225'600'000'000};  // 2026-01-01
    options.wire_rows = wire_rows;
    auto db = sim::SimDatabase::Create(building, options);
    db->CreateTable(shape.table);
    db->EnableCdc(shape.table.name);
    for (std::int64_t first = 1; first <= rows; first += per_transaction) {
      auto txn = db->Begin();
      const std::int64_t last = std::min(rows, first + per_transaction - 1);
      // Statements of 10,000 rows, so that building one huge transaction holds no more than
      // the simulator's own statement list.
      for (std::int64_t from = first; from <= last; from += 10'000) {
        std::vector<Row> batch;
        for (std::int64_t i = from; i <= std::min(last, from + 9'999); ++i) batch.push_back(shape.row(i));
        txn->InsertMany(shape.table.name, std::move(batch));
      }
      txn->Commit();
      db->AdvanceClock(kMicrosPerSecond);
    }
  }
  std::filesystem::rename(building, path);
  for (const char* suffix : {"-wal", "-shm"}) std::filesystem::remove(building + suffix);
  return path;
}

std::int64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

}  // namespace mssql_cdc::bench
