// A workload generator for a simulated database: transactions of inserts, updates and
// deletes on its tables at a given rate, in a given mix, deterministic for a seed.
//
// With the manual clock, each transaction moves the clock 1/tps seconds forward and nothing
// depends on the machine, so two runs with one seed on equal databases give identical change
// tables, LSNs and commit times. With the real clock, it paces itself in real time.
//
// Modes: the default (short transactions of `statements_per_transaction` single-row
// statements), bulk (multi-row statements of `bulk_rows` rows each, as fast as possible) and
// long-transaction (besides the short ones, one transaction that stays open for
// `long_transaction_seconds`, gathering inserts, and commits after the short ones that ran
// meanwhile, so its commit LSN is later than theirs). While no transaction commits, it writes
// the capture process's idle entries (SimDatabase::WriteDueIdleEntries), every
// `idle_entry_seconds` or, by default, the database's interval.
//
// Other clients may write the same file at the same time (a second workload, `sim dml`):
// SQLite serializes the commits as SQL Server would, and a transaction whose rows another
// client changed first is built again on the keys as they are then (WorkloadReport::conflicts).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lsn.h"
#include "sim/schema.h"

namespace mssql_cdc::sim {

class SimDatabase;

// The share of inserts, updates and deletes among statements.
struct OperationMix {
  double insert = 0.5;
  double update = 0.35;
  double remove = 0.15;

  // "insert=0.5,update=0.35,delete=0.15"; names may be left out (they get 0), weights need
  // not sum to 1 but must be non-negative and sum to more than 0. Throws ConfigError.
  static OperationMix Parse(std::string_view text);
  std::string ToString() const;
};

struct WorkloadOptions {
  double transactions_per_second = 100;
  // When to stop: after this much time (the sim clock's under a manual clock), after this
  // many transactions, or at whichever comes first. At least one must be set.
  std::optional<double> duration_seconds;
  std::optional<std::int64_t> transactions;
  OperationMix mix;
  int statements_per_transaction = 1;
  std::uint64_t seed = 1;
  std::vector<TableName> tables;  // empty: every table with a capture instance
  bool bulk = false;
  int bulk_rows = 10'000;
  double long_transaction_seconds = 0;  // 0: no long transaction
  std::optional<double> idle_entry_seconds;  // nullopt: the database's (305 s by default)
  // Polled between transactions; true stops the run (the CLI's Ctrl-C).
  std::function<bool()> should_stop;
};

struct WorkloadReport {
  std::int64_t transactions = 0;       // committed, the long ones included
  std::int64_t long_transactions = 0;
  std::int64_t inserts = 0;             // rows
  std::int64_t updates = 0;
  std::int64_t deletes = 0;
  std::int64_t idle_entries = 0;
  // Transactions built again because another client had changed their rows first.
  std::int64_t conflicts = 0;
  std::optional<Lsn> first_commit_lsn;
  std::optional<Lsn> last_commit_lsn;
  double elapsed_seconds = 0;           // wall time
};

class Workload {
 public:
  // Throws ConfigError for invalid options.
  Workload(SimDatabase& db, WorkloadOptions options);
  // Runs until the stop condition. Throws ConfigError when a table is missing.
  WorkloadReport Run();

 private:
  SimDatabase& db_;
  WorkloadOptions options_;
};

}  // namespace mssql_cdc::sim
