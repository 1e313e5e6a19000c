// Which Delta protocol a table needs, and whether this engine may read or write a table.
//
// A table gets the lowest reader/writer versions its features need: (1,2) for a plain table;
// (2,5) for column mapping alone; table features (3,7) as soon as it has a timestamp_ntz
// column or type widening enabled, with each feature named in both lists. Features are never
// dropped once a table has them.
#pragma once

#include <arrow/type_fwd.h>

#include <optional>
#include <string>

#include "delta/actions.h"

namespace mssql_cdc::delta {

// The protocol a table with `schema` and `configuration` needs, given its `current` protocol
// (nullopt for a new table): never lower than `current`, keeping its features. A (1,2) table
// that moves to table features lists the features its old writer version implied.
Protocol RequiredProtocol(const std::optional<Protocol>& current, const arrow::Schema& schema,
                          const StringMap& configuration);

// Throws SourceError naming `table` when reading it needs a protocol version, reader feature
// or column mapping mode this engine does not implement.
void CheckCanRead(const Protocol& protocol, const Metadata& metadata, const std::string& table);
// Throws ConfigError naming `table` when writing it needs a writer version or feature this
// engine does not implement. Features a legacy writer version implies (constraints, change
// data feed, generated columns) are refused only when `metadata` shows the table uses them.
void CheckCanWrite(const Protocol& protocol, const Metadata& metadata, const std::string& table);

// Throws ConfigError naming the property when `properties` holds a delta.* table property
// this engine cannot honour (change data feed, deletion vectors, column mapping mode 'id', ...).
void CheckTableProperties(const StringMap& properties);

}  // namespace mssql_cdc::delta
