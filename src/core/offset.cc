#include "core/offset.h"

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/user_text.h"

namespace mssql_cdc {

std::string Offset::ToJson() const {
  // Built by hand to keep the key order of the contract (lsn first).
  return "{\"lsn\": \"" + lsn.ToString() + "\", \"commit_ts\": \"" +
         (commit_ts ? FormatIsoMillis(commit_ts->value) : std::string()) + "\"}";
}

Offset Offset::FromJson(std::string_view json) {
  auto fail = [&](const std::string& why) -> ConfigError {
    return ConfigError("not an offset: " + why + " in " + QuoteUserText(json, 120) +
                       "; an offset is {\"lsn\": \"0x<20 hex>\", \"commit_ts\": "
                       "\"YYYY-MM-DDTHH:MM:SS.mmm\"}");
  };
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) throw fail("not a JSON object");
  auto lsn_it = doc.find("lsn");
  if (lsn_it == doc.end() || !lsn_it->is_string()) throw fail("no \"lsn\" string");
  auto lsn = Lsn::TryParse(lsn_it->get<std::string>());
  if (!lsn) throw fail("malformed \"lsn\"");
  Offset offset{*lsn, std::nullopt};
  auto ts_it = doc.find("commit_ts");
  if (ts_it != doc.end() && !ts_it->is_null()) {
    if (!ts_it->is_string()) throw fail("\"commit_ts\" is not a string");
    const std::string text = ts_it->get<std::string>();
    if (!text.empty()) {
      auto micros = ParseDateTime(text);
      if (!micros) throw fail("malformed \"commit_ts\"");
      offset.commit_ts = UtcMicros{*micros};
    }
  }
  return offset;
}

}  // namespace mssql_cdc
