// Change rows kept a second time in the form the TDS front end sends them (decision 0010).
//
// A file made with CreateOptions::wire_rows (the default; sim_meta 'wire_rows' = '1') has,
// next to each change table, a table "cdc.<capture_instance>_CT_wire" with one row per change
// row: its key (__$start_lsn, __$command_id, __$seqval, __$operation), in the layout of its
// change table (clustered on that key, or a rowid table with an index on it), and __$values, the captured columns in ordinal order encoded as
// tds/encoded_values.h (NULL when a value has no wire form; the row is then served from the
// change table). Serving a change read is then a copy of bytes, as it is for SQL Server,
// whose stored rows are close to what it sends; without it the simulator's own cost, not the
// client's, would set the speed of every read through `sim serve`.
//
// The transaction that writes a change row writes its wire row; cleanup and disabling a
// capture instance remove both. Files made before, or with wire_rows off, have no wire tables.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/schema.h"
#include "sim/sqlite.h"
#include "sim/value.h"
#include "tds/encoded_values.h"

namespace mssql_cdc::sim {

// "cdc.<capture_instance>_CT_wire".
std::string WireTableStorageName(std::string_view capture_instance);

// Whether the file keeps wire tables.
bool KeepsWireRows(SqliteDb& db);

// Creates the wire table of `instance`, `clustered` on the order change reads ask for (rows
// up to about 1,000 bytes) or a rowid table with an index on it; inside the caller's write
// transaction.
void CreateWireTable(SqliteDb& db, const CaptureInstance& instance, bool clustered);

// The result columns the values of `instance` are encoded for: the captured columns in
// ordinal order, nullable, as the change reads of the TDS front end declare them.
std::vector<tds::ResultColumn> WireColumns(const CaptureInstance& instance);

// Encodes the captured values of change rows of one capture instance.
class WireRowEncoder {
 public:
  explicit WireRowEncoder(const CaptureInstance& instance);

  // The encoded values, valid until the next call; nullopt when one of them, or the type of
  // a column, has no wire form (the TDS front end reports it when the row is read, as it
  // would without wire rows).
  std::optional<std::string_view> Encode(const std::vector<Value>& values);

 private:
  std::optional<tds::EncodedValuesWriter> writer_;
};

// Hands one stored value to a ResultSet in the call of its storage class (sim/storage.h).
void PutValue(const Value& value, tds::ResultSet& out);

}  // namespace mssql_cdc::sim
