// The silver tables of a pipeline (docs/silver.md): in `mssql-cdc run`, each stream with a
// silver table applies bronze's new rows to it on the stream's own thread right after each
// commit of bronze (a batch, a bootstrap, a re-snapshot), so silver trails bronze by one batch
// at most and one silver table is never applied twice at once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/stream.h"
#include "silver/apply_changes.h"

namespace mssql_cdc {

// The pipeline's [silver] section.
struct SilverConfig {
  std::string target;  // template with {ci}
  // Key columns per capture instance (names matched ignoring case); a table not listed is
  // keyed by its capture instance's unique index.
  std::map<std::string, std::vector<std::string>> keys;
};

// The keys of capture instance `ci` in `config`, or empty (the index's).
std::vector<std::string> SilverKeysOf(const SilverConfig& config, const std::string& ci);

// Refuses, before anything is written, keys that are not captured columns of the stream's
// table, or a table with neither keys nor a unique index (ConfigError naming the table).
void CheckSilverKeys(const std::vector<std::string>& keys, const Stream& stream);

// StreamConfig::after_bronze for one stream: ApplyChanges of `options` (bronze, silver,
// control, facts, keys; the capture instances and, when keys are empty, the index columns come
// from the stream), logged.
std::function<void(const StreamConfig::BronzeCommitted&)> KeepSilver(ApplyChangesOptions options);

}  // namespace mssql_cdc
