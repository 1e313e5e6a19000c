#include "source/sim/sim_snapshot_reader.h"

#include <sqlite3.h>

#include <limits>

#include "core/errors.h"
#include "sim/sqlite.h"
#include "sim/storage.h"
#include "sim/value.h"
#include "sim/value_codec.h"
#include "core/arrow_status.h"
#include "source/key_bounds.h"
#include "source/output_batch_builder.h"
#include "source/output_schema.h"
#include "source/sim/sqlite_column_decoders.h"

namespace mssql_cdc {
namespace {

// A bound's part in the key column's stored form: text as SQL Server's CAST reads it,
// numbers as a literal of the column's type.
void BindKeyPart(sim::Statement& statement, int index, const nlohmann::json& part,
                 const SimKeyColumn& key, const char* which) {
  const std::string column = "key column '" + key.name + "'";
  try {
    if (part.is_string()) {
      statement.Bind(index, sim::EncodeCastText(key.type, part.get_ref<const std::string&>(), column));
    } else {
      statement.Bind(index, sim::EncodeValue(key.type, sim::Value::FromJson(part), column));
    }
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("snapshot bound ") + which + " for key column '" + key.name +
                      "' (" + key.type.ToString() + "): " + part.dump() + ": " + e.what());
  }
}

// "(k1, k2)" or "k1".
std::string KeyTuple(const std::vector<SimKeyColumn>& key) {
  std::string out;
  for (const auto& column : key) {
    if (!out.empty()) out += ", ";
    out += sim::QuoteIdent(column.name);
  }
  return key.size() == 1 ? out : "(" + out + ")";
}

std::string Placeholders(std::size_t count, int first) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (!out.empty()) out += ", ";
    out += "?" + std::to_string(first + static_cast<int>(i));
  }
  return count == 1 ? out : "(" + out + ")";
}

// " ORDER BY k1, k2", " ORDER BY k1 DESC, k2 DESC", or "" for a keyless table.
std::string OrderBy(const std::vector<SimKeyColumn>& key, bool descending = false) {
  std::string out;
  for (const auto& column : key) {
    out += (out.empty() ? " ORDER BY " : ", ") + sim::QuoteIdent(column.name);
    if (descending) out += " DESC";
  }
  return out;
}

// The key of the current row of `row`'s columns [0, key size) as a bound: a scalar for one
// column, a list for several.
nlohmann::json KeyOfRow(const sim::Statement& row, std::size_t key_size) {
  if (key_size == 1) return row.Get(0).ToJson();
  nlohmann::json key = nlohmann::json::array();
  for (std::size_t i = 0; i < key_size; ++i) key.push_back(row.Get(static_cast<int>(i)).ToJson());
  return key;
}

// The key of a ranged read or a seek: present, and of types that can bound a range (the
// odbc backend's statements refuse the same).
void RequireRangeKey(const std::string& table, const std::vector<SimKeyColumn>& key) {
  if (key.empty()) {
    throw ConfigError("table " + table + " has no key: it is read whole, in one range");
  }
  for (const auto& column : key) {
    if (!CanBoundRange(column.type)) {
      throw ConfigError("key column '" + column.name + "' is " + column.type.ToString() +
                        ", which cannot bound a range: read the table whole, or give "
                        "snapshotKeys of other types");
    }
  }
}

std::vector<std::unique_ptr<ColumnDecoder>> DecodersFor(const SimSnapshotQuery& query) {
  std::vector<std::unique_ptr<ColumnDecoder>> decoders;
  for (const auto& column : query.columns) {
    decoders.push_back(MakeColumnDecoder(column.type, column.name,
                                         "column '" + column.name + "' of " + query.table));
  }
  return decoders;
}

class SimSnapshotReader final : public arrow::RecordBatchReader {
 public:
  explicit SimSnapshotReader(const SimSnapshotQuery& query)
      : batch_(OutputSchema(query.columns, /*include_command_id=*/true), query.capture_instance,
               DecodersFor(query), /*include_command_id=*/true, query.batch_rows,
               query.batch_bytes),
        snapshot_lsn_(query.snapshot_lsn),
        commit_ts_(query.snapshot_commit_ts.value) {
    if (!query.lo.is_null() || !query.hi.is_null()) RequireRangeKey(query.table, query.key);
    const std::vector<nlohmann::json> lo =
        query.lo.is_null() ? std::vector<nlohmann::json>{} : KeyBoundParts(query.lo, query.key.size(), "lo");
    const std::vector<nlohmann::json> hi =
        query.hi.is_null() ? std::vector<nlohmann::json>{} : KeyBoundParts(query.hi, query.key.size(), "hi");

    std::string sql = "SELECT ";
    for (std::size_t i = 0; i < query.table_columns.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += query.table_columns[i] ? sim::QuoteIdent(*query.table_columns[i]) : "NULL";
    }
    if (query.table_columns.empty()) sql += "NULL";  // no captured column asked for
    sql += " FROM " + sim::QuoteIdent(query.table);
    const std::string tuple = KeyTuple(query.key);
    std::string where;
    if (!lo.empty()) where += tuple + " >= " + Placeholders(lo.size(), 1);
    if (!hi.empty()) {
      if (!where.empty()) where += " AND ";
      where += tuple + " < " + Placeholders(hi.size(), static_cast<int>(lo.size()) + 1);
    }
    if (!where.empty()) sql += " WHERE " + where;
    sql += OrderBy(query.key);

    rows_ = std::make_unique<sim::Statement>(sim::SqliteDb::OpenReadOnly(query.path), sql);
    for (std::size_t i = 0; i < lo.size(); ++i) {
      BindKeyPart(*rows_, static_cast<int>(i) + 1, lo[i], query.key[i], "lo");
    }
    for (std::size_t i = 0; i < hi.size(); ++i) {
      BindKeyPart(*rows_, static_cast<int>(lo.size() + i) + 1, hi[i], query.key[i], "hi");
    }
  }

  std::shared_ptr<arrow::Schema> schema() const override { return batch_.schema(); }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    return ReadNextOrStatus(batch, [this] { return Next(); }, [this] { rows_.reset(); });
  }

 private:
  std::shared_ptr<arrow::RecordBatch> Next() {
    if (rows_ == nullptr) return nullptr;
    batch_.Start();
    while (!batch_.full()) {
      if (!rows_->Step()) {
        rows_.reset();  // ends the read snapshot
        break;
      }
      batch_.AppendMetadata(snapshot_lsn_.data(), /*seqval=*/nullptr, /*operation=*/0,
                            /*command_id=*/std::nullopt, commit_ts_);
      for (std::size_t i = 0; i < batch_.column_count(); ++i) {
        batch_.column(i).Append(sqlite3_column_value(rows_->raw(), static_cast<int>(i)));
      }
    }
    if (batch_.rows() == 0) return nullptr;
    return batch_.Finish();
  }

  OutputBatchBuilder batch_;
  Lsn snapshot_lsn_;
  std::int64_t commit_ts_;
  std::unique_ptr<sim::Statement> rows_;  // owns the connection
};

}  // namespace

std::unique_ptr<arrow::RecordBatchReader> MakeSimSnapshotReader(const SimSnapshotQuery& query) {
  return std::make_unique<SimSnapshotReader>(query);
}

std::optional<nlohmann::json> SimKeyAt(sim::SqliteDb& db, const SimKeyTable& table,
                                       const nlohmann::json& from, std::int64_t offset) {
  RequireRangeKey(table.table, table.key);
  if (offset < 0) throw ConfigError("a key seek's offset must be >= 0, got " + std::to_string(offset));
  std::string columns;
  for (const auto& column : table.key) {
    columns += (columns.empty() ? "" : ", ") + sim::QuoteIdent(column.name);
  }
  const std::vector<nlohmann::json> parts =
      from.is_null() ? std::vector<nlohmann::json>{} : KeyBoundParts(from, table.key.size(), "from");
  std::string sql = "SELECT " + columns + " FROM " + sim::QuoteIdent(table.table);
  if (!parts.empty()) sql += " WHERE " + KeyTuple(table.key) + " >= " + Placeholders(parts.size(), 1);
  sql += OrderBy(table.key) + " LIMIT 1 OFFSET ?" + std::to_string(parts.size() + 1);
  sim::Statement seek(db, sql);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    BindKeyPart(seek, static_cast<int>(i) + 1, parts[i], table.key[i], "from");
  }
  seek.BindInt(static_cast<int>(parts.size()) + 1, offset);
  if (!seek.Step()) return std::nullopt;
  return KeyOfRow(seek, table.key.size());
}

std::optional<nlohmann::json> SimLastKey(sim::SqliteDb& db, const SimKeyTable& table) {
  RequireRangeKey(table.table, table.key);
  std::string columns;
  for (const auto& column : table.key) {
    columns += (columns.empty() ? "" : ", ") + sim::QuoteIdent(column.name);
  }
  sim::Statement last(db, "SELECT " + columns + " FROM " + sim::QuoteIdent(table.table) +
                              OrderBy(table.key, /*descending=*/true) + " LIMIT 1");
  if (!last.Step()) return std::nullopt;
  return KeyOfRow(last, table.key.size());
}

std::int64_t SimRowCount(sim::SqliteDb& db, const std::string& table) {
  sim::Statement count(db, "SELECT COUNT(*) FROM " + sim::QuoteIdent(table));
  return count.Step() ? count.Int(0) : 0;
}

// A date key's slices by day number: dates are stored as 'YYYY-MM-DD' text, which orders as
// the dates do, so the keys still come in order.
std::vector<SliceCount> SimCountDateSlices(sim::SqliteDb& db, const SimKeyTable& table, std::int64_t start,
                                           std::int64_t width, std::int64_t end) {
  const std::string key = sim::QuoteIdent(table.key[0].name);
  sim::Statement keys(db, "SELECT " + key + " FROM " + sim::QuoteIdent(table.table) + " WHERE " + key +
                              " IS NOT NULL ORDER BY " + key);
  std::vector<SliceCount> out;
  while (keys.Step()) {
    const auto day = ParseStoredDate(keys.Text(0));
    if (!day) throw SourceError("table " + table.table + ": a stored date does not read: " + keys.Text(0));
    if (*day < start || *day >= end) continue;
    const auto slice = (*day - start) / width;
    if (out.empty() || out.back().slice != slice) out.push_back(SliceCount{slice, 0, 0});
    ++out.back().rows;
    out.back().key_sum += *day;
  }
  return out;
}

std::vector<SliceCount> SimCountKeySlices(sim::SqliteDb& db, const SimKeyTable& table,
                                          std::int64_t start, std::int64_t width,
                                          std::int64_t slices) {
  RequireRangeKey(table.table, table.key);
  if (table.key.size() != 1 || !IsSliceableKeyType(table.key[0].type)) {
    throw ConfigError("table " + table.table + ": a grid of key slices needs a key of one "
                      "integer or date column");
  }
  const std::int64_t end = SliceGridEnd(start, width, slices);
  const std::string key = sim::QuoteIdent(table.key[0].name);
  if (table.key[0].type.kind() == SqlTypeKind::kDate) {
    return SimCountDateSlices(db, table, start, width, end);
  }
  // The keys in order through the key's index, counted as they come (a stream aggregate, as
  // SQL Server's plan over an index in key order is): SQLite would group by a temporary b-tree.
  sim::Statement keys(db, "SELECT " + key + " FROM " + sim::QuoteIdent(table.table) + " WHERE " +
                              key + " >= ?1 AND " + key + " < ?2 ORDER BY " + key);
  keys.BindInt(1, start);
  keys.BindInt(2, end);
  std::vector<SliceCount> out;
  while (keys.Step()) {
    // key >= start, so key - start is not negative and integer division floors it.
    const std::uint64_t offset =
        static_cast<std::uint64_t>(keys.Int(0)) - static_cast<std::uint64_t>(start);
    const auto slice = static_cast<std::int64_t>(offset / static_cast<std::uint64_t>(width));
    if (out.empty() || out.back().slice != slice) out.push_back(SliceCount{slice, 0, 0});
    ++out.back().rows;
    out.back().key_sum += keys.Int(0);
  }
  return out;
}

}  // namespace mssql_cdc
