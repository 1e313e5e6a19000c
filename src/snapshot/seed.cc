#include "snapshot/seed.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/errors.h"
#include "source/output_schema.h"
#include "source/source_clock.h"

namespace mssql_cdc {
namespace {

constexpr std::int64_t kSecond = 1'000'000;

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

Offset ResolveSeedPoint(Source& source, const SourceClock& clock,
                        const CaptureInstanceInfo& instance, const SeedAsOf& as_of,
                        UtcMicros now) {
  const std::optional<Lsn> max_lsn = source.MaxLsn();
  Lsn lsn;
  if (as_of.lsn) {
    lsn = *as_of.lsn;
    if (!max_lsn || lsn > *max_lsn) {
      throw ConfigError("seed as_of LSN " + lsn.ToString() + " is above the max LSN " +
                        (max_lsn ? max_lsn->ToString() : std::string("(none yet)")) +
                        ": give an LSN recorded before the copy was read");
    }
  } else if (as_of.time) {
    if (as_of.time->value > now.value) {
      throw ConfigError("seed as_of " + FormatIsoMillis(as_of.time->value) +
                        " UTC is in the future (now " + FormatIsoMillis(now.value) +
                        " UTC): give the UTC time the copy started being read");
    }
    LocalMicros local = LocalSeekTime(clock, *as_of.time);
    local.value -= ((local.value % kSecond) + kSecond) % kSecond;  // to the second
    const auto found = source.LastCommitAtOrBefore(local);
    if (!found) {
      throw DataLossError("seed as_of " + FormatIsoMillis(as_of.time->value) +
                          " UTC is older than every commit cdc.lsn_time_mapping holds: CDC no "
                          "longer has the changes made after it; take the copy again, or "
                          "snapshot the table (chunked for a big one)");
    }
    lsn = *found;
  } else {
    throw ConfigError("seed needs as_of: a UTC time, or an LSN recorded before the copy was read");
  }
  const Lsn min_lsn = source.MinLsn(instance.name);
  if (min_lsn > lsn.Increment()) {
    throw DataLossError("seed at LSN " + lsn.ToString() + ": capture instance '" + instance.name +
                        "' holds changes only from LSN " + min_lsn.ToString() +
                        " on (cleanup removed the older ones, or the instance began later), so "
                        "the changes made after the copy was read are gone; take the copy "
                        "again, or snapshot the table (chunked for a big one)");
  }
  Offset offset{lsn, std::nullopt};
  if (auto local = source.CommitTimeAtOrBefore(lsn)) offset.commit_ts = clock.ToUtc(*local);
  return offset;
}

SeedAction DecideSeed(const std::optional<FoundSnapshot>& found, const Lsn& seed, bool reseed) {
  if (!found) return SeedAction::kWrite;
  const std::string held = found->offset.lsn.ToString();
  if (found->chunked) {
    throw ConfigError("the target holds a chunked snapshot of the table at LSN " + held +
                      "; a seed cannot replace it: finish it with backfill, or seed a new target");
  }
  if (found->offset.lsn == seed) return SeedAction::kExisting;
  if (!reseed) {
    throw ConfigError("the target already holds a snapshot of the table at LSN " + held +
                      "; pass reseed=True (--reseed) with a newer as_of to replace it");
  }
  if (seed < found->offset.lsn) {
    throw ConfigError("reseed at LSN " + seed.ToString() + " is older than the snapshot the "
                      "target holds at LSN " + held + ": give a newer as_of");
  }
  return SeedAction::kWrite;
}

SeedColumns MatchSeedColumns(const std::vector<CapturedColumn>& captured,
                             const std::vector<std::string>& key_columns,
                             const std::vector<std::string>& copy_columns,
                             bool allow_missing_columns) {
  for (std::size_t i = 0; i < copy_columns.size(); ++i) {
    for (std::size_t j = i + 1; j < copy_columns.size(); ++j) {
      if (EqualsIgnoringAsciiCase(copy_columns[i], copy_columns[j])) {
        throw ConfigError("the seed's copy has columns '" + copy_columns[i] + "' and '" +
                          copy_columns[j] + "', which differ only in case: keep one");
      }
    }
  }
  SeedColumns columns;
  std::vector<std::string> missing, missing_keys;
  for (const auto& column : captured) {
    std::optional<std::string> found;
    for (const auto& name : copy_columns) {
      if (EqualsIgnoringAsciiCase(name, column.name)) found = name;
    }
    if (!found) {
      bool is_key = false;
      for (const auto& key : key_columns) is_key = is_key || EqualsIgnoringAsciiCase(key, column.name);
      (is_key ? missing_keys : missing).push_back(column.name);
    }
    columns.from.push_back(found);
  }
  if (!missing_keys.empty()) {
    throw ConfigError("the seed's copy lacks key column(s) " + Join(missing_keys) +
                      ": a copy must hold the table's key; its columns are " + Join(copy_columns));
  }
  if (!missing.empty() && !allow_missing_columns) {
    throw ConfigError("the seed's copy lacks captured column(s) " + Join(missing) +
                      "; add them to the copy, or pass allow_missing_columns=True "
                      "(--allow-missing-columns) to read them as NULL");
  }
  return columns;
}

std::map<std::string, SeedValue> SeedMetadata(const std::string& capture_instance, const Offset& offset) {
  std::map<std::string, SeedValue> values{
      {std::string(kCaptureInstanceColumn), capture_instance},
      {std::string(kStartLsnColumn), offset.lsn.ToString()},
      {std::string(kSnapshotColumn), offset.lsn.ToString()},
      {std::string(kOperationColumn), std::int32_t{0}},
  };
  if (offset.commit_ts) values.emplace(std::string(kCommitTsColumn), *offset.commit_ts);
  return values;
}

std::string SeedCommitMetadata(const std::string& capture_instance, const Offset& offset) {
  return nlohmann::json{{"seed", capture_instance},
                        {"lsn", offset.lsn.ToString()},
                        {"commit_ts", offset.commit_ts ? FormatIsoMillis(offset.commit_ts->value) : ""}}
      .dump();
}

}  // namespace mssql_cdc
