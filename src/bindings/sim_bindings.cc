// Python access to a simulated database as a writer: what mssql_cdc.fake drives (tables with
// CDC, changes logged as the transaction log records them, idle entries, cleanup, the
// clock). Values come as JSON text (sim::Value::FromJson), typed by their column.
#include <arrow/type.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/lsn.h"
#include "core/source_options.h"
#include "core/spark_columns.h"
#include "sim/database.h"
#include "sim/schema.h"
#include "sim/snapshot_read_queue.h"
#include "sim/transaction.h"
#include "sim/value.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

// The SQL Server type a simulated table keeps a column declared in Spark DDL as: the type
// whose values read back as that Spark type (TINYINT as smallint, since SQL Server's
// tinyint has no negatives; text and binary without a length limit).
std::string SqlDeclarationFor(const arrow::Field& field) {
  const auto& type = *field.type();
  switch (type.id()) {
    case arrow::Type::BOOL: return "bit";
    case arrow::Type::INT8:
    case arrow::Type::INT16: return "smallint";
    case arrow::Type::INT32: return "int";
    case arrow::Type::INT64: return "bigint";
    case arrow::Type::FLOAT: return "real";
    case arrow::Type::DOUBLE: return "float";
    case arrow::Type::DECIMAL128: {
      const auto& decimal = static_cast<const arrow::Decimal128Type&>(type);
      return "decimal(" + std::to_string(decimal.precision()) + "," + std::to_string(decimal.scale()) + ")";
    }
    case arrow::Type::STRING: return "nvarchar(max)";
    case arrow::Type::BINARY: return "varbinary(max)";
    case arrow::Type::DATE32: return "date";
    case arrow::Type::TIMESTAMP: return "datetime2(6)";
    default:
      throw ConfigError("column '" + field.name() + "' has Spark type " + type.ToString() +
                        ", which a simulated table has no SQL Server type for");
  }
}

class PySimDatabase {
 public:
  explicit PySimDatabase(std::unique_ptr<sim::SimDatabase> db) : db_(std::move(db)) {}

  // (name, SQL Server declaration) of each column of a Spark DDL list.
  static std::vector<std::pair<std::string, std::string>> DeclarationsOf(const std::string& spark_ddl) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& field : ParseSparkColumns(spark_ddl)) out.emplace_back(field->name(), SqlDeclarationFor(*field));
    return out;
  }

  // A table of `columns` ((name, SQL Server type) pairs) with primary key `key`; key columns
  // are NOT NULL, the others allow NULLs.
  void CreateTable(const std::string& table, const std::vector<std::pair<std::string, std::string>>& columns,
                   const std::vector<std::string>& key) {
    sim::TableDef def;
    def.name = sim::ParseTableName(table);
    for (const auto& [name, declaration] : columns) {
      bool in_key = false;
      for (const auto& k : key) in_key = in_key || k == name;
      def.columns.push_back(Column(name, declaration, !in_key));
    }
    def.primary_key = key;
    db_->CreateTable(def);
  }

  std::string EnableCdc(const std::string& table, const std::string& capture_instance,
                        const std::vector<std::string>& captured_columns) {
    sim::EnableCdcOptions options;
    options.capture_instance = capture_instance;
    options.captured_columns = captured_columns;
    return db_->EnableCdc(sim::ParseTableName(table), options);
  }

  void DisableCdc(const std::string& capture_instance) { db_->DisableCdc(capture_instance); }

  void AddColumn(const std::string& table, const std::string& name, const std::string& declaration) {
    db_->AddColumn(sim::ParseTableName(table), Column(name, declaration, true));
  }
  void DropColumn(const std::string& table, const std::string& name) {
    db_->DropColumn(sim::ParseTableName(table), name);
  }
  void AlterColumn(const std::string& table, const std::string& name, const std::string& declaration) {
    db_->AlterColumn(sim::ParseTableName(table), Column(name, declaration, true));
  }

  // One transaction of logged changes (Transaction::LogChange): `changes` is a JSON array of
  // [operation, {column: value}]. Returns the commit LSN.
  std::optional<std::string> LogChanges(const std::string& table, const std::string& changes_json) {
    const sim::TableName name = sim::ParseTableName(table);
    auto tx = db_->Begin();
    for (auto& change : ChangesOf(changes_json)) tx->LogChange(name, change.operation, std::move(change.image));
    const auto result = tx->Commit();
    return result.commit_lsn ? std::optional<std::string>(result.commit_lsn->ToString()) : std::nullopt;
  }

  // The same, kept to commit just before the next snapshot read (sim/snapshot_read_queue.h).
  void QueueBeforeSnapshotRead(const std::string& table, const std::string& changes_json,
                               std::optional<std::int64_t> at_utc_micros) {
    std::optional<UtcMicros> at;
    if (at_utc_micros) at = UtcMicros{*at_utc_micros};
    sim::QueueBeforeSnapshotRead(*db_, sim::ParseTableName(table), ChangesOf(changes_json), at);
  }

  std::string WriteIdleEntry() { return db_->WriteIdleEntry().ToString(); }

  void CleanupInstance(const std::string& capture_instance, const std::string& low_water_mark) {
    db_->CleanupInstance(capture_instance, Lsn::ParseLenient(low_water_mark));
  }

  void SetClock(std::int64_t utc_micros) { db_->SetManualClock(UtcMicros{utc_micros}); }

  std::optional<std::string> MaxLsn() {
    auto lsn = db_->MaxLsn();
    return lsn ? std::optional<std::string>(lsn->ToString()) : std::nullopt;
  }

  // (capture instance, its table "schema.name") of every instance.
  std::vector<std::pair<std::string, std::string>> Instances() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& instance : db_->CaptureInstances()) out.emplace_back(instance.name, instance.table.ToString());
    return out;
  }

  // "schema.name" of the table a capture instance reads, the instance found as the simulator
  // finds one (its name ignoring case); NotFoundError otherwise.
  std::string TableOf(const std::string& capture_instance) {
    return db_->Instance(capture_instance).table.ToString();
  }

  std::vector<std::string> TableColumns(const std::string& table) {
    std::vector<std::string> out;
    for (const auto& column : db_->Table(sim::ParseTableName(table)).columns) out.push_back(column.name);
    return out;
  }

  std::vector<std::string> Tables() {
    std::vector<std::string> out;
    for (const auto& table : db_->Tables()) out.push_back(table.ToString());
    return out;
  }

  // The LSN of the table's newest DDL history entry.
  std::optional<std::string> LastDdlLsn(const std::string& capture_instance) {
    const auto history = db_->DdlHistory(capture_instance);
    if (history.empty()) return std::nullopt;
    return history.back().ddl_lsn.ToString();
  }

 private:
  static std::vector<sim::LoggedChange> ChangesOf(const std::string& changes_json) {
    std::vector<sim::LoggedChange> out;
    for (const auto& change : nlohmann::json::parse(changes_json)) {
      sim::LoggedChange logged;
      logged.operation = change.at(0).get<int>();
      for (const auto& [column, value] : change.at(1).items()) logged.image[column] = sim::Value::FromJson(value);
      out.push_back(std::move(logged));
    }
    return out;
  }

  static sim::ColumnDef Column(const std::string& name, const std::string& declaration, bool nullable) {
    sim::ColumnDef column = sim::ParseColumnDeclaration("[" + name + "] " + declaration);
    column.nullable = nullable;
    return column;
  }

  std::unique_ptr<sim::SimDatabase> db_;
};

}  // namespace

void BindSim(nb::module_& m) {
  nb::class_<PySimDatabase>(m, "SimDatabase", "A simulated SQL Server database with CDC, as a writer.")
      .def_static("declarations_of", &PySimDatabase::DeclarationsOf, nb::arg("spark_ddl"))
      .def("create_table", &PySimDatabase::CreateTable, nb::arg("table"), nb::arg("columns"), nb::arg("key"))
      .def("enable_cdc", &PySimDatabase::EnableCdc, nb::arg("table"), nb::arg("capture_instance"),
           nb::arg("captured_columns"))
      .def("disable_cdc", &PySimDatabase::DisableCdc, nb::arg("capture_instance"))
      .def("add_column", &PySimDatabase::AddColumn, nb::arg("table"), nb::arg("name"), nb::arg("declaration"))
      .def("drop_column", &PySimDatabase::DropColumn, nb::arg("table"), nb::arg("name"))
      .def("alter_column", &PySimDatabase::AlterColumn, nb::arg("table"), nb::arg("name"), nb::arg("declaration"))
      .def("log_changes", &PySimDatabase::LogChanges, nb::arg("table"), nb::arg("changes_json"))
      .def("queue_before_snapshot_read", &PySimDatabase::QueueBeforeSnapshotRead, nb::arg("table"),
           nb::arg("changes_json"), nb::arg("at_utc_micros").none())
      .def("write_idle_entry", &PySimDatabase::WriteIdleEntry)
      .def("cleanup_instance", &PySimDatabase::CleanupInstance, nb::arg("capture_instance"),
           nb::arg("low_water_mark"))
      .def("set_clock", &PySimDatabase::SetClock, nb::arg("utc_micros"))
      .def("max_lsn", &PySimDatabase::MaxLsn)
      .def("instances", &PySimDatabase::Instances)
      .def("tables", &PySimDatabase::Tables)
      .def("table_columns", &PySimDatabase::TableColumns, nb::arg("table"))
      .def("table_of", &PySimDatabase::TableOf, nb::arg("capture_instance"))
      .def("last_ddl_lsn", &PySimDatabase::LastDdlLsn, nb::arg("capture_instance"));

  m.def("create_sim_database", [](const std::string& path, const std::string& database_name,
                                  std::int64_t manual_start_utc_micros, const std::optional<std::string>& first_lsn) {
    sim::CreateOptions options;
    options.database_name = database_name;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{manual_start_utc_micros};
    if (first_lsn) options.first_lsn = Lsn::ParseLenient(*first_lsn);
    return PySimDatabase(sim::SimDatabase::Create(path, options));
  }, nb::arg("path"), nb::arg("database_name"), nb::arg("manual_start_utc_micros"), nb::arg("first_lsn").none(),
  "Creates a simulated database file on a manual UTC clock.");
  m.def("open_sim_database", [](const std::string& path) { return PySimDatabase(sim::SimDatabase::Open(path)); },
        nb::arg("path"), "Opens a simulated database file to write to it.");
  m.def("fake_database_file", [](const std::string& fake_path) { return FakeDatabaseFile(fake_path); },
        nb::arg("fake_path"), "The simulated database file backend fake reads in fakePath.");
}

}  // namespace mssql_cdc::python
