// `mssql-cdc sim ...`: create and drive a simulated SQL Server CDC database from the shell.
// Each command opens the file, does one thing in one transaction and prints what it did;
// bad input is one error line (thrown as mssql_cdc::Error, printed by main) and changes
// nothing on disk.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/errors.h"
#include "core/operations.h"
#include "core/time.h"
#include "core/timezone.h"
#include "sim/database.h"
#include "sim/demo_schema.h"
#include "sim/transaction.h"
#include "sim/value_generator.h"
#include "sim/workload.h"

namespace mssql_cdc::cli {
namespace {

using sim::SimDatabase;

std::atomic<bool> g_stop{false};

std::vector<std::string> SplitList(const std::vector<std::string>& items) {
  // Accepts repeated options and comma-separated lists alike.
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream in(item);
    std::string part;
    while (std::getline(in, part, ',')) {
      if (!part.empty()) out.push_back(part);
    }
  }
  return out;
}

sim::Row RowFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) {
    throw ConfigError(where + " must be a JSON object of column names to values, not " + j.dump());
  }
  sim::Row row;
  for (const auto& [name, value] : j.items()) {
    try {
      row[name] = sim::Value::FromJson(value);
    } catch (const ConfigError& e) {
      throw ConfigError(where + ", column " + name + ": " + e.what());
    }
  }
  return row;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read " + path + ": check the path");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

LocalMicros ParseLocalTime(const std::string& text, const std::string& option) {
  auto micros = ParseDateTime(text);
  if (!micros) {
    throw ConfigError(option + " '" + text + "' is not a time of the form 'YYYY-MM-DD HH:MM:SS'");
  }
  return LocalMicros{*micros};
}

std::string ClockText(SimDatabase& db) {
  if (db.clock_mode() == sim::ClockMode::kReal) return "real";
  const UtcMicros now = db.NowUtc();
  return "manual, at " + db.ServerTime(now) + " server time (" + FormatDateTime(now.value, 6) +
         " UTC)";
}

void AddCreate(CLI::App& sim) {
  struct Args {
    std::string db, name = "sim", time_zone = "UTC", clock = "real", start;
    double idle_entry_seconds = sim::kDefaultIdleEntrySeconds;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("create", "Create a new simulated database file");
  cmd->add_option("--db", args->db, "The database file to create")->required();
  cmd->add_option("--name", args->name, "Database name (DB_NAME())")->capture_default_str();
  cmd->add_option("--time-zone", args->time_zone, "Windows time-zone name of the server clock")
      ->capture_default_str();
  cmd->add_option("--clock", args->clock, "real, or manual (moves only when set or advanced)")
      ->check(CLI::IsMember({"real", "manual"}))
      ->capture_default_str();
  cmd->add_option("--start", args->start,
                  "Manual clock start, server local time 'YYYY-MM-DD HH:MM:SS' (default: now)");
  cmd->add_option("--idle-entry-seconds", args->idle_entry_seconds,
                  "How long the capture process waits on a quiet database before an idle entry "
                  "(SQL Server 2022: about 305 s)")
      ->capture_default_str();
  cmd->callback([args] {
    sim::CreateOptions options;
    options.idle_entry_seconds = args->idle_entry_seconds;
    options.database_name = args->name;
    options.time_zone = args->time_zone;
    options.clock = args->clock == "manual" ? sim::ClockMode::kManual : sim::ClockMode::kReal;
    if (!args->start.empty() && options.clock != sim::ClockMode::kManual) {
      throw ConfigError("--start sets the manual clock: add --clock manual");
    }
    const SourceClock clock = SourceClock::ForWindowsZone(args->time_zone);
    options.manual_start = args->start.empty() ? NowUtc()
                                               : clock.ToUtc(ParseLocalTime(args->start, "--start"));
    auto db = SimDatabase::Create(args->db, options);
    std::cout << "created simulated database " << db->database_name() << " in " << args->db
              << " (time zone " << db->time_zone() << ", clock " << ClockText(*db) << ")\n";
  });
}

void AddClock(CLI::App& sim) {
  struct Args {
    std::string db, set;
    double advance = 0;
    bool real = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("clock", "Show, set or advance the database's clock");
  cmd->add_option("--db", args->db, "The database file")->required();
  auto* set = cmd->add_option("--set", args->set,
                              "Switch to the manual clock at this server local time");
  auto* advance = cmd->add_option("--advance", args->advance, "Move the manual clock forward (s)");
  auto* real = cmd->add_flag("--real", args->real, "Switch to the real clock");
  set->excludes(advance)->excludes(real);
  advance->excludes(real);
  cmd->callback([args] {
    auto db = SimDatabase::Open(args->db);
    if (!args->set.empty()) {
      db->SetManualClock(db->clock().ToUtc(ParseLocalTime(args->set, "--set")));
    } else if (args->advance != 0) {
      db->AdvanceClock(static_cast<std::int64_t>(args->advance * 1e6));
    } else if (args->real) {
      db->UseRealClock();
    }
    std::cout << "clock " << ClockText(*db) << "\n";
  });
}

void AddCreateTable(CLI::App& sim) {
  struct Args {
    std::string db, table, capture_instance;
    std::vector<std::string> columns, keys;
    bool no_cdc = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("create-table", "Create a table with a primary key, and enable CDC on it");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--table", args->table, "schema.table, e.g. dbo.customers")->required();
  cmd->add_option("--column", args->columns, "'name type [not null]', repeated")->required();
  cmd->add_option("--key", args->keys, "Primary-key column(s), repeated or comma-separated")
      ->required();
  cmd->add_flag("--no-cdc", args->no_cdc, "Do not enable CDC");
  cmd->add_option("--capture-instance", args->capture_instance,
                  "Capture instance name (default schema_table)");
  cmd->callback([args] {
    sim::TableDef def;
    def.name = sim::ParseTableName(args->table);
    for (const auto& c : args->columns) def.columns.push_back(sim::ParseColumnDeclaration(c));
    def.primary_key = SplitList(args->keys);
    if (args->no_cdc && !args->capture_instance.empty()) {
      throw ConfigError("--capture-instance names the instance --no-cdc skips: give one or the other");
    }
    auto db = SimDatabase::Open(args->db);
    db->CreateTable(def);
    std::cout << "created table " << def.name.ToString();
    if (!args->no_cdc) {
      sim::EnableCdcOptions options;
      options.capture_instance = args->capture_instance;
      const std::string name = db->EnableCdc(def.name, options);
      std::cout << " with capture instance " << name << " (start LSN "
                << db->MinLsn(name).ToString() << ")";
    }
    std::cout << "\n";
  });
}

void AddEnableCdc(CLI::App& sim) {
  struct Args {
    std::string db, table, capture_instance, role;
    std::vector<std::string> captured;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("enable-cdc", "Enable CDC on a table (sys.sp_cdc_enable_table)");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--table", args->table, "schema.table")->required();
  cmd->add_option("--capture-instance", args->capture_instance, "Name (default schema_table)");
  cmd->add_option("--captured-columns", args->captured,
                  "Columns to capture, repeated or comma-separated (default all)");
  cmd->add_option("--role", args->role, "Gating role name (default none)");
  cmd->callback([args] {
    auto db = SimDatabase::Open(args->db);
    sim::EnableCdcOptions options;
    options.capture_instance = args->capture_instance;
    options.captured_columns = SplitList(args->captured);
    options.role_name = args->role;
    const std::string name = db->EnableCdc(sim::ParseTableName(args->table), options);
    std::cout << "enabled capture instance " << name << " (start LSN "
              << db->MinLsn(name).ToString() << ")\n";
  });
}

void AddDisableCdc(CLI::App& sim) {
  struct Args {
    std::string db, capture_instance;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("disable-cdc", "Drop a capture instance and its change table");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--capture-instance", args->capture_instance, "The capture instance")->required();
  cmd->callback([args] {
    auto db = SimDatabase::Open(args->db);
    db->DisableCdc(args->capture_instance);
    std::cout << "disabled capture instance " << args->capture_instance << "\n";
  });
}

void AddAlterColumn(CLI::App& sim) {
  struct Args {
    std::string db, table, column;
  };
  auto add = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("add-column", "ALTER TABLE ADD a column");
  cmd->add_option("--db", add->db, "The database file")->required();
  cmd->add_option("--table", add->table, "schema.table")->required();
  cmd->add_option("--column", add->column, "'name type [not null]'")->required();
  cmd->callback([add] {
    const auto table = sim::ParseTableName(add->table);
    const auto column = sim::ParseColumnDeclaration(add->column);
    auto db = SimDatabase::Open(add->db);
    db->AddColumn(table, column);
    std::cout << "added column " << column.name << " " << column.type.ToString() << " to "
              << table.ToString() << "\n";
  });
  auto drop = std::make_shared<Args>();
  auto* drop_cmd = sim.add_subcommand("drop-column", "ALTER TABLE DROP COLUMN");
  drop_cmd->add_option("--db", drop->db, "The database file")->required();
  drop_cmd->add_option("--table", drop->table, "schema.table")->required();
  drop_cmd->add_option("--column", drop->column, "Column name")->required();
  drop_cmd->callback([drop] {
    const auto table = sim::ParseTableName(drop->table);
    auto db = SimDatabase::Open(drop->db);
    db->DropColumn(table, drop->column);
    std::cout << "dropped column " << drop->column << " from " << table.ToString() << "\n";
  });
  auto alter = std::make_shared<Args>();
  auto* alter_cmd = sim.add_subcommand("alter-column", "ALTER TABLE ALTER COLUMN (a new type)");
  alter_cmd->add_option("--db", alter->db, "The database file")->required();
  alter_cmd->add_option("--table", alter->table, "schema.table")->required();
  alter_cmd->add_option("--column", alter->column, "'name type [not null]'")->required();
  alter_cmd->callback([alter] {
    const auto table = sim::ParseTableName(alter->table);
    const auto column = sim::ParseColumnDeclaration(alter->column);
    auto db = SimDatabase::Open(alter->db);
    db->AlterColumn(table, column);
    std::cout << "altered column " << column.name << " of " << table.ToString() << " to "
              << column.type.ToString() << "\n";
  });
}

void AddDml(CLI::App& sim) {
  struct Args {
    std::string db, json, file;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand(
      "dml", "Run statements in one transaction: a JSON array of "
             "{\"op\":\"insert\",\"table\":T,\"row\":{...}}, "
             "{\"op\":\"update\",\"table\":T,\"key\":{...},\"set\":{...}}, "
             "{\"op\":\"delete\",\"table\":T,\"key\":{...}}");
  cmd->add_option("--db", args->db, "The database file")->required();
  auto* json = cmd->add_option("--json", args->json, "The statements as JSON text");
  auto* file = cmd->add_option("--file", args->file, "A file holding the statements' JSON");
  json->excludes(file);
  cmd->callback([args] {
    if (args->json.empty() && args->file.empty()) {
      throw ConfigError("give the statements with --json '[...]' or --file PATH");
    }
    const std::string text = args->file.empty() ? args->json : ReadFile(args->file);
    nlohmann::json statements;
    try {
      statements = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw ConfigError(std::string("the statements are not valid JSON: ") + e.what());
    }
    if (!statements.is_array()) statements = nlohmann::json::array({statements});
    auto db = SimDatabase::Open(args->db);
    auto txn = db->Begin();
    for (std::size_t i = 0; i < statements.size(); ++i) {
      const auto& s = statements[i];
      const std::string where = "statement " + std::to_string(i + 1);
      if (!s.is_object() || !s.contains("op") || !s["op"].is_string() || !s.contains("table") ||
          !s["table"].is_string()) {
        throw ConfigError(where + " needs \"op\" and \"table\" strings: " + s.dump());
      }
      const std::string op = s["op"];
      const auto table = sim::ParseTableName(s["table"].get<std::string>());
      auto field = [&](const char* name) {
        if (!s.contains(name)) throw ConfigError(where + " (" + op + ") needs \"" + name + "\"");
        return RowFromJson(s[name], where + " \"" + name + "\"");
      };
      if (op == "insert") {
        txn->Insert(table, field("row"));
      } else if (op == "update") {
        txn->Update(table, field("key"), field("set"));
      } else if (op == "delete") {
        txn->Delete(table, field("key"));
      } else {
        throw ConfigError(where + ": unknown op '" + op + "' (use insert, update, delete)");
      }
    }
    const auto result = txn->Commit();
    std::cout << "committed " << result.rows_affected << " row change(s)";
    if (result.commit_lsn) {
      std::cout << " at LSN " << result.commit_lsn->ToString() << ", " << result.change_rows
                << " change row(s)";
    } else {
      std::cout << " (no table with CDC touched: no commit LSN)";
    }
    std::cout << "\n";
  });
}

void AddIdle(CLI::App& sim) {
  struct Args {
    std::string db;
    int count = 1;
    bool due = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("idle", "Write idle entries (tran_id 0) to lsn_time_mapping");
  cmd->add_option("--db", args->db, "The database file")->required();
  auto* count = cmd->add_option("--count", args->count, "How many")->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  cmd->add_flag("--due", args->due,
                "Instead: the entries the capture process writes on a quiet database up to now, one "
                "per idle-entry interval since the last entry (for a manual clock moved ahead)")
      ->excludes(count);
  cmd->callback([args] {
    auto db = SimDatabase::Open(args->db);
    if (args->due) {
      const auto written = db->WriteDueIdleEntries();
      const auto max = db->MaxLsn();
      std::cout << "wrote " << written << " idle entr" << (written == 1 ? "y" : "ies") << "; max LSN "
                << (max ? max->ToString() : "none") << "\n";
      return;
    }
    Lsn last;
    for (int i = 0; i < args->count; ++i) last = db->WriteIdleEntry();
    std::cout << "wrote " << args->count << " idle entr" << (args->count == 1 ? "y" : "ies")
              << "; max LSN " << last.ToString() << "\n";
  });
}

void AddCleanup(CLI::App& sim) {
  struct Args {
    std::string db;
    std::int64_t retention = 4320;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("cleanup", "Run CDC cleanup with a retention (sp_cdc_cleanup_change_table)");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--retention-minutes", args->retention, "Retention in minutes")
      ->capture_default_str();
  cmd->callback([args] {
    auto db = SimDatabase::Open(args->db);
    const auto result = db->Cleanup(args->retention);
    if (!result.low_water_mark) {
      std::cout << "nothing to clean: lsn_time_mapping is empty\n";
      return;
    }
    std::cout << "low-water mark " << result.low_water_mark->ToString() << "; deleted "
              << result.change_rows_deleted << " change row(s) and "
              << result.lsn_time_entries_deleted << " lsn_time_mapping entr"
              << (result.lsn_time_entries_deleted == 1 ? "y" : "ies") << "\n";
  });
}

void AddWorkload(CLI::App& sim) {
  struct Args {
    std::string db, mix = "insert=0.5,update=0.35,delete=0.15";
    double tps = 100, duration = 0, long_seconds = 0, idle_seconds = 0;
    std::int64_t transactions = 0;
    int statements = 1, bulk_rows = 10'000;
    std::uint64_t seed = 1;
    bool bulk = false;
    std::vector<std::string> tables;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("workload", "Drive the tables with generated transactions");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--tps", args->tps, "Transactions per second")->capture_default_str();
  auto* duration = cmd->add_option("--duration", args->duration, "Seconds to run");
  auto* transactions = cmd->add_option("--transactions", args->transactions,
                                       "Transactions to run");
  cmd->add_option("--mix", args->mix, "Share of each operation")->capture_default_str();
  cmd->add_option("--statements", args->statements, "Statements per transaction")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Random seed")->capture_default_str();
  cmd->add_flag("--bulk", args->bulk, "Multi-row statements, as fast as possible");
  cmd->add_option("--bulk-rows", args->bulk_rows, "Rows per bulk statement")->capture_default_str();
  cmd->add_option("--long-transaction-seconds", args->long_seconds,
                  "Keep a transaction open this long while short ones commit (0: none)");
  auto* idle = cmd->add_option("--idle-seconds", args->idle_seconds,
                               "Write an idle entry after this long without a commit (default: the "
                               "database's, 305 unless `sim create --idle-entry-seconds` set another)");
  cmd->add_option("--tables", args->tables, "Tables to drive (default: all with CDC)");
  cmd->callback([args, duration, transactions, idle] {
    sim::WorkloadOptions options;
    options.transactions_per_second = args->tps;
    if (duration->count()) options.duration_seconds = args->duration;
    if (transactions->count()) options.transactions = args->transactions;
    options.mix = sim::OperationMix::Parse(args->mix);
    options.statements_per_transaction = args->statements;
    options.seed = args->seed;
    options.bulk = args->bulk;
    options.bulk_rows = args->bulk_rows;
    options.long_transaction_seconds = args->long_seconds;
    if (idle->count()) options.idle_entry_seconds = args->idle_seconds;
    for (const auto& t : SplitList(args->tables)) options.tables.push_back(sim::ParseTableName(t));
    options.should_stop = [] { return g_stop.load(); };
    auto db = SimDatabase::Open(args->db);
    sim::Workload workload(*db, options);
    std::signal(SIGINT, [](int) { g_stop = true; });
    std::signal(SIGTERM, [](int) { g_stop = true; });
    const auto report = workload.Run();
    std::cout << "committed " << report.transactions << " transaction(s) in "
              << report.elapsed_seconds << " s: " << report.inserts << " insert(s), "
              << report.updates << " update(s), " << report.deletes << " delete(s)";
    if (report.long_transactions) std::cout << ", " << report.long_transactions << " long";
    std::cout << ", " << report.idle_entries << " idle entr"
              << (report.idle_entries == 1 ? "y" : "ies");
    if (report.conflicts) {
      std::cout << ", " << report.conflicts << " built again after another client's commit";
    }
    if (report.last_commit_lsn) {
      std::cout << "; LSNs " << report.first_commit_lsn->ToString() << " to "
                << report.last_commit_lsn->ToString();
    }
    std::cout << "\n";
  });
}

void AddDemoSchema(CLI::App& sim) {
  struct Args {
    std::string db;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand(
      "demo-schema", "Create dbo.customers, dbo.orders, dbo.order_items with CDC (and the file "
                     "with default settings when it does not exist)");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->callback([args] {
    std::ifstream probe(args->db);
    auto db = probe ? SimDatabase::Open(args->db) : SimDatabase::Create(args->db);
    sim::CreateDemoSchema(*db);
    std::cout << "created dbo.customers, dbo.orders, dbo.order_items with CDC in " << args->db
              << "\n";
  });
}

void AddLoad(CLI::App& sim) {
  struct Args {
    std::string db, table;
    std::int64_t rows = 0, first = 1;
    std::uint64_t seed = 1;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand(
      "load", "Bulk-load generated rows into a table before CDC is enabled on it (no change rows)");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--table", args->table, "schema.table, created with create-table --no-cdc")->required();
  cmd->add_option("--rows", args->rows, "How many rows")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--first", args->first, "The number of the first row's key")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the random values")->capture_default_str();
  cmd->callback([args] {
    auto db = SimDatabase::Open(args->db);
    const sim::TableName name = sim::ParseTableName(args->table);
    const sim::TableInfo info = db->Table(name);
    sim::Random random(args->seed);
    const auto started = std::chrono::steady_clock::now();
    // Keys numbered from --first; other columns random, NULL now and then where allowed.
    db->LoadRows(name, args->first, args->rows, [&](std::int64_t n) {
      sim::Row row;
      for (const auto& column : info.columns) {
        if (column.key_ordinal > 0) {
          row[column.name] = sim::KeyValue(column.type, n);
        } else if (!(column.nullable && random.Uniform(0, 9) == 0)) {
          row[column.name] = sim::RandomValue(column.type, random);
        }
      }
      return row;
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cout << "loaded " << args->rows << " rows into " << name.ToString() << " in "
              << fmt::format("{:.1f}", seconds) << " s\n";
  });
}

void AddInfo(CLI::App& sim) {
  struct Args {
    std::string db;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("info", "Show tables, capture instances and LSNs");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] {
    auto db = SimDatabase::Open(args->db);
    nlohmann::json out;
    out["database"] = db->database_name();
    out["path"] = db->path();
    out["time_zone"] = db->time_zone();
    out["clock"] = {{"mode", db->clock_mode() == sim::ClockMode::kManual ? "manual" : "real"},
                    {"now_utc", FormatDateTime(db->NowUtc().value, 6)},
                    {"now_server", db->ServerTime(db->NowUtc())}};
    const auto max = db->MaxLsn();
    out["max_lsn"] = max ? nlohmann::json(max->ToString()) : nlohmann::json(nullptr);
    out["tables"] = nlohmann::json::array();
    for (const auto& name : db->Tables()) {
      const auto info = db->Table(name);
      nlohmann::json columns = nlohmann::json::array();
      for (const auto& c : info.columns) {
        columns.push_back({{"name", c.name}, {"type", c.type.ToString()},
                           {"nullable", c.nullable}, {"key_ordinal", c.key_ordinal}});
      }
      out["tables"].push_back(
          {{"name", name.ToString()}, {"rows", db->RowCount(name)}, {"columns", columns}});
    }
    out["capture_instances"] = nlohmann::json::array();
    for (const auto& ci : db->CaptureInstances()) {
      nlohmann::json captured = nlohmann::json::array();
      for (const auto& c : ci.columns) captured.push_back(c.name);
      nlohmann::json ops = nlohmann::json::object();
      std::int64_t total = 0;
      for (const auto& [op, count] : db->OperationCounts(ci.name)) {
        ops[std::string(OperationName(op))] = count;
        total += count;
      }
      out["capture_instances"].push_back({{"name", ci.name},
                                          {"table", ci.table.ToString()},
                                          {"start_lsn", ci.start_lsn.ToString()},
                                          {"create_date", ci.create_date},
                                          {"captured_columns", captured},
                                          {"index_columns", ci.index_columns},
                                          {"change_rows", total},
                                          {"operations", ops}});
    }
    std::int64_t idle = 0;
    const auto mapping = db->LsnTimeMapping();
    for (const auto& e : mapping) idle += e.is_idle() ? 1 : 0;
    out["lsn_time_mapping"] = {{"entries", mapping.size()}, {"idle_entries", idle},
                               {"idle_entry_seconds", db->idle_entry_seconds()}};
    if (args->json) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    std::cout << "database " << out["database"].get<std::string>() << " (" << db->path()
              << "), time zone " << db->time_zone() << ", clock " << ClockText(*db) << "\n";
    std::cout << "max LSN " << (max ? max->ToString() : "(none)") << "; lsn_time_mapping "
              << mapping.size() << " entries, " << idle << " idle (one per " << db->idle_entry_seconds()
              << " s on a quiet database)\n";
    std::cout << "tables:\n";
    for (const auto& t : out["tables"]) {
      std::cout << "  " << t["name"].get<std::string>() << ": " << t["rows"] << " rows, "
                << t["columns"].size() << " columns\n";
    }
    std::cout << "capture instances:\n";
    for (const auto& ci : out["capture_instances"]) {
      std::cout << "  " << ci["name"].get<std::string>() << " on "
                << ci["table"].get<std::string>() << ": min LSN "
                << ci["start_lsn"].get<std::string>() << ", " << ci["change_rows"]
                << " change rows";
      for (const auto& [op, count] : ci["operations"].items()) std::cout << ", " << op << " " << count;
      std::cout << "\n";
    }
  });
}

}  // namespace

void AddSimCommands(CLI::App& app) {
  auto* sim = app.add_subcommand("sim", "Work with a simulated SQL Server CDC database");
  sim->require_subcommand(1);
  AddCreate(*sim);
  AddClock(*sim);
  AddCreateTable(*sim);
  AddEnableCdc(*sim);
  AddDisableCdc(*sim);
  AddAlterColumn(*sim);
  AddDml(*sim);
  AddIdle(*sim);
  AddCleanup(*sim);
  AddWorkload(*sim);
  AddDemoSchema(*sim);
  AddLoad(*sim);
  AddInfo(*sim);
}

}  // namespace mssql_cdc::cli
