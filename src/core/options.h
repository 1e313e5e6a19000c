// Options as users give them: `Options` is a set of string-valued options whose names are
// case-insensitive; a set that names one option twice (spelled differently only in case) is
// refused. And the names of the source options this engine knows, and which are secrets.
// Their typed forms: source_options.h (the source options), trigger.h and stream_params.h
// (to_delta's parameters). Every refusal is a ConfigError that names the option, the value
// given and what is accepted.
//
// Secrets: the values of `password` and `connectionString` never appear in an error message,
// a log line or a description produced here; they are shown as "***".
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ascii.h"
#include "core/lsn.h"

namespace mssql_cdc {

// Every source option this engine knows, as users write them. Docs headings use these;
// names are compared in ASCII lower case (IsKnownSourceOption, KnownSourceOptionSpelling).
inline constexpr std::array<std::string_view, 26> kSourceOptionNames = {
    "captureInstance", "connectionString", "user",            "password",
    "accessToken",     "tokenProvider",
    "backend",         "sourceTimeZone",   "connectTimeout",  "lockTimeoutMs",
    "startingLsn",     "maxCommitsPerBatch", "numPartitions", "failOnDataLoss",
    "includeCommandId", "columns",         "arrowBatchSize",  "metricsPath",
    "schemaChangePolicy", "isolationLevel", "snapshotChunks", "snapshotKeys",
    "snapshotLsn",     "fakePath",         "simPath",         "changeReader",
};


bool IsKnownSourceOption(std::string_view name);
// The camelCase spelling of a known option named in any case or with underscores left out
// (e.g. "startinglsn"); nullopt for an unknown name.
std::optional<std::string_view> KnownSourceOptionSpelling(std::string_view name);
// Whether an option's value must never be shown: `password`, `connectionString`, and, since
// a misspelt secret is still a secret, any name that mentions a password, pwd, secret or token.
bool IsSecretOptionName(std::string_view name);
// Whether text can be an access token (the accessToken option, the simulator's token logins):
// printable ASCII without spaces, as an Entra ID token (a JSON Web Token) is, and all that
// Driver 18 can pass, since it widens each byte to UTF-16.
bool IsAccessTokenText(std::string_view text);

// String options with case-insensitive names. Keeps each name as given and the given order.
class Options {
 public:
  using Entry = std::pair<std::string, std::string>;

  Options() = default;
  // Throw ConfigError when two names are equal ignoring case (the message names both
  // spellings, never the values).
  explicit Options(const std::map<std::string, std::string>& options);
  explicit Options(std::vector<Entry> options);
  Options(std::initializer_list<Entry> options);

  std::optional<std::string> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // These options with `overrides` applied: an override replaces the option of the same name
  // ignoring case (taking the override's spelling); new names are added at the end.
  Options MergedWith(const Options& overrides) const;

  // "name=value, ..." with secret values shown as ***.
  std::string Redacted() const;

 private:
  const Entry* Find(std::string_view name) const;
  void Add(std::string name, std::string value);

  std::vector<Entry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;  // lower-case name -> entries_ index
};

}  // namespace mssql_cdc
