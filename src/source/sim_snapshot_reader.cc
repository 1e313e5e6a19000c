#include "source/sim_snapshot_reader.h"

#include <sqlite3.h>

#include <limits>

#include "core/errors.h"
#include "sim/sqlite.h"
#include "sim/storage.h"
#include "source/error_status.h"
#include "source/output_batch_builder.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

bool IsBinaryType(const SqlType& type) {
  return type.name == "binary" || type.name == "varbinary" || type.name == "image" ||
         type.name == "timestamp" || type.name == "rowversion";
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The parts of one bound, one per key column. A one-column key takes a scalar; a composite
// key a list of as many scalars.
std::vector<nlohmann::json> BoundParts(const nlohmann::json& bound, std::size_t key_size,
                                       const char* which) {
  if (key_size == 1) {
    if (bound.is_array()) {
      // A one-element list is what a caller holding keys as lists would give.
      if (bound.size() == 1) return {bound[0]};
      throw ConfigError(std::string("snapshot bound ") + which + " " + bound.dump() +
                        " is a list, but the key has one column: give a scalar");
    }
    return {bound};
  }
  if (!bound.is_array() || bound.size() != key_size) {
    throw ConfigError(std::string("snapshot bound ") + which + " " + bound.dump() +
                      " does not fit a key of " + std::to_string(key_size) +
                      " columns: give a list of " + std::to_string(key_size) + " values");
  }
  return std::vector<nlohmann::json>(bound.begin(), bound.end());
}

void BindKeyPart(sim::Statement& statement, int index, const nlohmann::json& part,
                 const SimKeyColumn& key, const char* which) {
  auto bad = [&](const std::string& why) {
    throw ConfigError(std::string("snapshot bound ") + which + " for key column '" + key.name +
                      "' (" + key.type.ToString() + "): " + part.dump() + " " + why);
  };
  if (IsBinaryType(key.type)) {
    if (!part.is_string()) bad("is not a \"0x...\" hex string");
    const std::string& text = part.get_ref<const std::string&>();
    if (text.size() < 2 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') ||
        text.size() % 2 != 0) {
      bad("is not a \"0x...\" hex string");
    }
    std::string bytes;
    for (std::size_t i = 2; i < text.size(); i += 2) {
      const int high = HexDigit(text[i]);
      const int low = HexDigit(text[i + 1]);
      if (high < 0 || low < 0) bad("is not a \"0x...\" hex string");
      bytes.push_back(static_cast<char>(high * 16 + low));
    }
    statement.BindBlob(index, bytes.data(), bytes.size());
    return;
  }
  switch (part.type()) {
    case nlohmann::json::value_t::boolean:
      statement.BindInt(index, part.get<bool>() ? 1 : 0);
      break;
    case nlohmann::json::value_t::number_integer:
      statement.BindInt(index, part.get<std::int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      if (part.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        bad("is out of range");
      }
      statement.BindInt(index, part.get<std::int64_t>());
      break;
    case nlohmann::json::value_t::number_float:
      statement.BindDouble(index, part.get<double>());
      break;
    case nlohmann::json::value_t::string:
      statement.BindText(index, part.get_ref<const std::string&>());
      break;
    default:
      bad("is not a scalar value (null parts are not allowed; use null for the whole bound)");
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
    if (query.key.empty()) {
      throw InternalError("snapshot of " + query.table + " without key columns");
    }
    const std::vector<nlohmann::json> lo =
        query.lo.is_null() ? std::vector<nlohmann::json>{} : BoundParts(query.lo, query.key.size(), "lo");
    const std::vector<nlohmann::json> hi =
        query.hi.is_null() ? std::vector<nlohmann::json>{} : BoundParts(query.hi, query.key.size(), "hi");

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
    sql += " ORDER BY ";
    for (std::size_t i = 0; i < query.key.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += sim::QuoteIdent(query.key[i].name);
    }

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

}  // namespace mssql_cdc
