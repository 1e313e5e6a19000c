#include "sim/wire_rows.h"

#include "core/errors.h"
#include "sim/storage.h"

namespace mssql_cdc::sim {

std::string WireTableStorageName(std::string_view capture_instance) {
  return ChangeTableStorageName(capture_instance) + "_wire";
}

bool KeepsWireRows(SqliteDb& db) {
  Statement st(db, "SELECT value FROM sim_meta WHERE key = ?");
  st.BindText(1, kMetaWireRows);
  return st.Step() && st.Text(0) == "1";
}

void CreateWireTable(SqliteDb& db, const CaptureInstance& instance, bool clustered) {
  const std::string name = WireTableStorageName(instance.name);
  const std::string order = "\"__$start_lsn\", \"__$command_id\", \"__$seqval\", \"__$operation\"";
  const std::string sql = "CREATE TABLE " + QuoteIdent(name) +
                          "(\"__$start_lsn\" BLOB NOT NULL, \"__$command_id\" INTEGER NOT NULL, "
                          "\"__$seqval\" BLOB NOT NULL, \"__$operation\" INTEGER NOT NULL, "
                          "\"__$values\" BLOB";
  if (clustered) {
    db.Exec(sql + ", PRIMARY KEY(" + order + ")) WITHOUT ROWID");
  } else {
    db.Exec(sql + ")");
    db.Exec("CREATE INDEX " + QuoteIdent(name + "_order") + " ON " + QuoteIdent(name) + "(" +
            order + ")");
  }
}

std::vector<tds::ResultColumn> WireColumns(const CaptureInstance& instance) {
  std::vector<tds::ResultColumn> columns;
  columns.reserve(instance.columns.size());
  for (const auto& column : instance.columns) {
    columns.push_back(tds::ResultColumn{column.name, column.type, true});
  }
  return columns;
}

WireRowEncoder::WireRowEncoder(const CaptureInstance& instance) {
  try {
    writer_.emplace(WireColumns(instance));
  } catch (const UnsupportedTypeError&) {
    // A column type the TDS front end cannot send: every row is served from the change
    // table, where reading it fails as it always did.
  }
}

std::optional<std::string_view> WireRowEncoder::Encode(const std::vector<Value>& values) {
  if (!writer_) return std::nullopt;
  writer_->Clear();
  try {
    for (const Value& value : values) PutValue(value, *writer_);
    writer_->EndRow();
  } catch (const SourceError&) {
    return std::nullopt;
  }
  return writer_->row();
}

void PutValue(const Value& value, tds::ResultSet& out) {
  if (value.is_null()) {
    out.Null();
  } else if (value.is_int()) {
    out.Int(value.as_int());
  } else if (value.is_double()) {
    out.Float(value.as_double());
  } else if (value.is_string()) {
    out.Text(value.as_string());
  } else {
    out.Binary(value.as_bytes().data);
  }
}

}  // namespace mssql_cdc::sim
