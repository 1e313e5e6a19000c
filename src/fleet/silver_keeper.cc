#include "fleet/silver_keeper.h"

#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/user_text.h"
#include "engine/engine_limits.h"

namespace mssql_cdc {

std::vector<std::string> SilverKeysOf(const SilverConfig& config, const std::string& ci) {
  for (const auto& [name, keys] : config.keys) {
    if (EqualsIgnoringAsciiCase(name, ci)) return keys;
  }
  return {};
}

void CheckSilverKeys(const std::vector<std::string>& keys, const Stream& stream) {
  const auto& ci = stream.capture_instance();
  const auto& given = keys.empty() ? stream.index_columns() : keys;
  if (given.empty()) {
    throw ConfigError("capture instance " + QuoteUserText(ci) +
                      " has no unique index to key its silver table by; give its keys in "
                      "[silver.keys], e.g. " + ci + " = [\"id\"]");
  }
  for (const auto& key : given) {
    bool captured = false;
    for (const auto& column : stream.captured_columns()) captured |= EqualsIgnoringAsciiCase(column.name, key);
    if (!captured) {
      throw ConfigError("silver key " + QuoteUserText(key) + " of capture instance " + QuoteUserText(ci) +
                        " is not one of its captured columns; give captured columns in [silver.keys]");
    }
  }
}

std::function<void(const StreamConfig::BronzeCommitted&)> KeepSilver(ApplyChangesOptions options) {
  return [options = std::move(options)](const StreamConfig::BronzeCommitted& committed) {
    ApplyChangesOptions call = options;
    call.capture_instances = committed.table_instances;
    if (call.keys.empty()) call.keys = committed.index_columns;
    const auto result = ApplyChanges(call);
    if (!result.bronze_found) return;
    const std::string spilled = result.runs_spilled > 0 ? ", " + std::to_string(result.runs_spilled) + " runs (" +
                                                              FormatByteSize(result.spilled_bytes) + ") spilled to disk"
                                                        : std::string();
    spdlog::info("silver {}: {} bronze rows applied, {} keys upserted, {} deleted{}{}, up to LSN {}",
                 call.silver, result.bronze_rows, result.upserted, result.deleted,
                 result.rebuilt ? " (rebuilt from a snapshot)" : "", spilled, result.applied_lsn.value_or("-"));
  };
}

}  // namespace mssql_cdc
