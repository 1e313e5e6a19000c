// Test data for the sim backend: writes simulated databases in the layout of sim/storage.h
// directly with SQL, so the reader is tested against the documented format and not against
// the simulator's own writer. Header-only: each tests/<component> binary is built from its
// *_test.cc files alone.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/lsn.h"
#include "sim/storage.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::testing {

struct Blob {
  std::string bytes;
};
// A stored value: NULL, INTEGER, REAL, TEXT or BLOB.
using Stored = std::variant<std::nullptr_t, std::int64_t, double, std::string, Blob>;

struct FixtureColumn {
  std::string name;
  std::string type;     // SQL Server declaration, e.g. "decimal(38,10)"
  int key_ordinal = 0;  // 1.. for primary-key columns
};

inline Lsn L(std::uint64_t value) { return Lsn::FromUint64(value); }

// Writes one sim database. The connection stays open in WAL mode, as a simulator's would.
class SimFixture {
 public:
  explicit SimFixture(const std::string& path, const std::string& time_zone = "UTC")
      : path_(path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK) {
      throw std::runtime_error("cannot create " + path);
    }
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=OFF");  // test data: no fsync per statement
    Exec(std::string(sim::kCatalogSchema));
    SetMeta(std::string(sim::kMetaFormat), std::string(sim::kFormatName));
    SetMeta(std::string(sim::kMetaFormatVersion), std::to_string(sim::kFormatVersion));
    SetMeta(std::string(sim::kMetaTimeZone), time_zone);
    SetMeta(std::string(sim::kMetaDatabaseName), "testdb");
  }
  ~SimFixture() { sqlite3_close_v2(db_); }
  SimFixture(const SimFixture&) = delete;
  SimFixture& operator=(const SimFixture&) = delete;

  const std::string& path() const { return path_; }

  void Exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error != nullptr ? error : "?";
      sqlite3_free(error);
      throw std::runtime_error("fixture SQL failed: " + message + " in: " + sql);
    }
  }

  // Runs `sql` with `values` bound to ?1, ?2, ...
  void Run(const std::string& sql, const std::vector<Stored>& values) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string("fixture prepare failed: ") + sqlite3_errmsg(db_) +
                               " in: " + sql);
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      const Stored& v = values[i];
      if (std::holds_alternative<std::int64_t>(v)) {
        sqlite3_bind_int64(stmt, index, std::get<std::int64_t>(v));
      } else if (std::holds_alternative<double>(v)) {
        sqlite3_bind_double(stmt, index, std::get<double>(v));
      } else if (std::holds_alternative<std::string>(v)) {
        const auto& s = std::get<std::string>(v);
        sqlite3_bind_text(stmt, index, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      } else if (std::holds_alternative<Blob>(v)) {
        const auto& b = std::get<Blob>(v).bytes;
        sqlite3_bind_blob(stmt, index, b.data(), static_cast<int>(b.size()), SQLITE_TRANSIENT);
      } else {
        sqlite3_bind_null(stmt, index);
      }
    }
    const int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
      throw std::runtime_error(std::string("fixture step failed: ") + sqlite3_errmsg(db_) +
                               " in: " + sql);
    }
  }

  void SetMeta(const std::string& key, const std::string& value) {
    Run("INSERT OR REPLACE INTO sim_meta(key, value) VALUES (?1, ?2)", {key, value});
  }

  static Blob LsnBlob(const Lsn& lsn) {
    return Blob{std::string(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize)};
  }

  // A source table with its data table; returns its object_id.
  std::int64_t AddTable(const std::string& schema, const std::string& table,
                        const std::vector<FixtureColumn>& columns) {
    const std::int64_t object_id = next_object_id_++;
    Run("INSERT INTO sim_tables VALUES (?1, ?2, ?3, '2024-01-01 00:00:00.000', ?4)",
        {object_id, schema, table, static_cast<std::int64_t>(columns.size() + 1)});
    std::string ddl;
    std::vector<std::pair<int, std::string>> keys;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const auto& c = columns[i];
      Run("INSERT INTO sim_columns VALUES (?1, ?2, ?3, ?4, 1, 0, ?5)",
          {object_id, static_cast<std::int64_t>(i + 1), c.name, c.type,
           static_cast<std::int64_t>(c.key_ordinal)});
      if (!ddl.empty()) ddl += ", ";
      ddl += sim::QuoteIdent(c.name) + " " + Affinity(c.type);
      if (c.key_ordinal > 0) keys.emplace_back(c.key_ordinal, sim::QuoteIdent(c.name));
    }
    std::sort(keys.begin(), keys.end());
    std::string pk;
    for (const auto& [ordinal, name] : keys) pk += (pk.empty() ? "" : ", ") + name;
    if (!pk.empty()) ddl += ", PRIMARY KEY(" + pk + ")";
    Exec("CREATE TABLE " + sim::QuoteIdent(sim::SourceTableStorageName(schema, table)) + "(" +
         ddl + ")");
    tables_.push_back({object_id, schema, table, columns});
    return object_id;
  }

  // Enables CDC on a table: the instance, its captured columns (all of the table's, in order,
  // unless `captured` names some), its index columns (the primary key) and its change table.
  std::int64_t EnableCdc(const std::string& capture_instance, std::int64_t table_object_id,
                         const Lsn& start_lsn, const std::vector<std::string>& captured = {},
                         const std::string& create_date = "2024-01-01 00:00:00.000") {
    const TableInfo& table = TableById(table_object_id);
    const std::int64_t object_id = next_object_id_++;
    Run("INSERT INTO cdc_change_tables(object_id, capture_instance, source_object_id, "
        "source_schema, source_table, start_lsn, end_lsn, supports_net_changes, index_name, "
        "create_date) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, 0, 'PK', ?7)",
        {object_id, capture_instance, table_object_id, table.schema, table.table,
         LsnBlob(start_lsn), create_date});
    std::string ddl =
        "\"__$start_lsn\" BLOB NOT NULL, \"__$end_lsn\" BLOB, \"__$seqval\" BLOB NOT NULL, "
        "\"__$operation\" INTEGER NOT NULL, \"__$update_mask\" BLOB";
    std::int64_t ordinal = 0;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      const auto& c = table.columns[i];
      if (!captured.empty() && std::find(captured.begin(), captured.end(), c.name) == captured.end()) {
        continue;
      }
      ++ordinal;
      Run("INSERT INTO cdc_captured_columns VALUES (?1, ?2, ?3, ?4, ?5, 0)",
          {object_id, c.name, static_cast<std::int64_t>(i + 1), c.type, ordinal});
      ddl += ", " + sim::QuoteIdent(c.name) + " " + Affinity(c.type);
      if (c.key_ordinal > 0) {
        Run("INSERT INTO cdc_index_columns VALUES (?1, ?2, ?3, ?4)",
            {object_id, c.name, static_cast<std::int64_t>(c.key_ordinal),
             static_cast<std::int64_t>(i + 1)});
      }
    }
    ddl += ", \"__$command_id\" INTEGER NOT NULL";
    const std::string ct = sim::QuoteIdent(sim::ChangeTableStorageName(capture_instance));
    Exec("CREATE TABLE " + ct + "(" + ddl + ")");
    Exec("CREATE INDEX " + sim::QuoteIdent(sim::ChangeTableIndexName(capture_instance)) + " ON " +
         ct + "(\"__$start_lsn\", \"__$command_id\", \"__$seqval\", \"__$operation\")");
    return object_id;
  }

  // An lsn_time_mapping entry; an idle one has a zero tran_id.
  void AddCommit(const Lsn& lsn, const std::string& end_time, bool idle = false) {
    std::string tran_id(10, '\0');
    if (!idle) tran_id[9] = static_cast<char>(1 + (++tran_counter_ % 250));
    Run("INSERT INTO cdc_lsn_time_mapping VALUES (?1, ?2, ?3, ?4)",
        {LsnBlob(lsn), end_time, end_time, Blob{tran_id}});
  }

  // One change row; `values` are the captured columns in ordinal order.
  void AddChange(const std::string& capture_instance, const Lsn& lsn, const Lsn& seqval,
                 int operation, int command_id, const std::vector<Stored>& values) {
    std::string sql = "INSERT INTO " +
                      sim::QuoteIdent(sim::ChangeTableStorageName(capture_instance)) +
                      " VALUES (?1, NULL, ?2, ?3, x'FF'";
    std::vector<Stored> binds = {LsnBlob(lsn), LsnBlob(seqval), static_cast<std::int64_t>(operation)};
    for (const auto& v : values) {
      binds.push_back(v);
      sql += ", ?" + std::to_string(binds.size());
    }
    binds.push_back(static_cast<std::int64_t>(command_id));
    sql += ", ?" + std::to_string(binds.size()) + ")";
    Run(sql, binds);
  }

  // One current row of a source table; `values` in column order.
  void AddRow(const std::string& schema, const std::string& table, const std::vector<Stored>& values) {
    std::string sql = "INSERT INTO " + sim::QuoteIdent(sim::SourceTableStorageName(schema, table)) +
                      " VALUES (";
    for (std::size_t i = 0; i < values.size(); ++i) sql += (i ? ", ?" : "?") + std::to_string(i + 1);
    Run(sql + ")", values);
  }

  static std::string Affinity(const std::string& type) {
    const std::string base = type.substr(0, type.find('('));
    for (const char* t : {"bit", "tinyint", "smallint", "int", "bigint"}) {
      if (base == t) return "INTEGER";
    }
    if (base == "real" || base == "float") return "REAL";
    for (const char* t : {"binary", "varbinary", "image", "timestamp", "rowversion"}) {
      if (base == t) return "BLOB";
    }
    return "TEXT";
  }

 private:
  struct TableInfo {
    std::int64_t object_id;
    std::string schema;
    std::string table;
    std::vector<FixtureColumn> columns;
  };
  const TableInfo& TableById(std::int64_t object_id) const {
    for (const auto& t : tables_) {
      if (t.object_id == object_id) return t;
    }
    throw std::runtime_error("fixture: no table " + std::to_string(object_id));
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::int64_t next_object_id_ = 1000;
  int tran_counter_ = 0;
  std::vector<TableInfo> tables_;
};

}  // namespace mssql_cdc::testing
