// Benchmark tables on the simulator, shared by the benchmarks: the narrow table (10 columns)
// and the wide one (90 columns, two (max) strings), filled with N insert changes and kept in
// a directory so later runs reuse them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sim/database.h"
#include "sim/schema.h"
#include "sim/value.h"

namespace mssql_cdc::bench {

struct BenchShape {
  std::string name;  // "narrow" or "wide"
  sim::TableDef table;
  std::function<sim::Row(std::int64_t)> row;  // the row with key i (i >= 1)
};

BenchShape NarrowShape();
BenchShape WideShape();
// The narrow table with two (max) columns (nvarchar(max), varbinary(max)) that hold 1 MiB
// each in every `lob_every`-th row and are NULL elsewhere: the rows users' bulk loads of
// documents and images make.
BenchShape LobShape(std::int64_t lob_every);

// The path of a simulated database in `dir` holding `rows` insert changes of the shape's
// table, `per_transaction` rows per commit (10,000 by default), built on first use. Without
// `wire_rows` (sim/wire_rows.h) it builds in about half the time but is for the sim backend
// only: `sim serve` answers from its change tables alone, slower.
std::string PrepareBenchDatabase(const BenchShape& shape, std::int64_t rows, const std::string& dir,
                                 std::int64_t per_transaction = 10'000, bool wire_rows = true);

// Resident memory of this process in bytes (VmRSS).
std::int64_t ResidentBytes();

}  // namespace mssql_cdc::bench
