#include "engine/engine_limits.h"

#include <arrow/type.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>

#include "core/errors.h"
#include "core/sql_type.h"
#include "core/user_text.h"

namespace mssql_cdc {
namespace {

constexpr std::int64_t kMiB = 1LL << 20;
// The piece long values are read in (the odbc backend's SQLGetData buffer).
constexpr std::int64_t kLongValuePiece = kMiB;
// The metadata columns of a row (capture instance, two LSNs as text, operation, command id,
// commit time, batch id, snapshot, chunk), generously.
constexpr std::int64_t kMetadataRowBytes = 160;

constexpr std::string_view kKeys[] = {"memory_budget", "connections", "workers", "max_streams", "spill_directory"};

// A spill directory is local and must exist, writable, before a run starts: a rebuild that
// finds out only when it spills has already read bronze.
std::string CheckedSpillDirectory(const std::string& value) {
  std::error_code error;
  if (value.empty() || !std::filesystem::is_directory(value, error)) {
    throw ConfigError(fmt::format("[engine] spill_directory = {} is not a directory; give an existing local "
                                  "directory (silver rebuilds write runs that do not fit memory_budget there)",
                                  QuoteUserText(value, kPathShown)));
  }
  if (::access(value.c_str(), W_OK | X_OK) != 0) {
    throw ConfigError(fmt::format("[engine] spill_directory = {} is not writable by this process; give a "
                                  "directory it can write", QuoteUserText(value, kPathShown)));
  }
  return value;
}

std::string KeyOf(std::string_view name) {
  std::string key;
  for (char c : AsciiLower(name)) {
    if (c != '_') key += c;
  }
  return key;
}

int PositiveCount(const std::string& value, std::string_view key) {
  int parsed = 0;
  const auto* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
  if (ec != std::errc() || ptr != end || parsed < 1) {
    throw ConfigError(fmt::format("[engine] {} = {} must be a whole number of at least 1", key,
                                  QuoteUserText(value)));
  }
  return parsed;
}

}  // namespace

std::int64_t ParseByteSize(std::string_view text, std::string_view what) {
  const auto fail = [&](std::string_view why) -> ConfigError {
    return ConfigError(fmt::format(
        "{} = {} {}: give a whole number and a unit, e.g. \"512 MiB\" or \"2 GiB\" (KiB, MiB, "
        "GiB count in 1024s; KB, MB, GB in 1000s)",
        what, QuoteUserText(text), why));
  };
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  std::int64_t number = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), number);
  if (ec == std::errc::result_out_of_range) throw fail("is too large");
  if (ec != std::errc() || number < 0) throw fail("does not start with a whole number");
  std::string_view unit = text.substr(static_cast<std::size_t>(ptr - text.data()));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  while (!unit.empty() && unit.back() == ' ') unit.remove_suffix(1);
  static constexpr std::pair<std::string_view, std::int64_t> kUnits[] = {
      {"B", 1},           {"KB", 1000},        {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20},  {"GiB", 1LL << 30}};
  if (unit.empty()) throw fail("has no unit");
  for (const auto& [name, factor] : kUnits) {
    if (unit != name) continue;
    if (number > std::numeric_limits<std::int64_t>::max() / factor) throw fail("is too large");
    return number * factor;
  }
  throw fail(fmt::format("has the unit {}, which is not one of B, KB, MB, GB, KiB, MiB, GiB "
                         "(spelt so, with that case)",
                         QuoteUserText(unit)));
}

std::string FormatByteSize(std::int64_t bytes) {
  const auto in = [&](std::int64_t unit, const char* name) {
    if (bytes % unit == 0) return fmt::format("{} {}", bytes / unit, name);
    return fmt::format("{:.1f} {}", static_cast<double>(bytes) / static_cast<double>(unit), name);
  };
  if (bytes >= (1LL << 30)) return in(1LL << 30, "GiB");
  if (bytes >= kMiB) return in(kMiB, "MiB");
  if (bytes >= 1024) return in(1024, "KiB");
  return fmt::format("{} B", bytes);
}

EngineLimits EngineLimits::Parse(const Options& options) {
  EngineLimits limits;
  for (const auto& [name, value] : options.entries()) {
    const std::string key = KeyOf(name);
    if (key == "memorybudget") {
      limits.memory_budget = ParseByteSize(value, "[engine] memory_budget");
    } else if (key == "connections") {
      limits.connections = PositiveCount(value, "connections");
    } else if (key == "workers") {
      limits.workers = PositiveCount(value, "workers");
    } else if (key == "maxstreams") {
      limits.max_streams = PositiveCount(value, "max_streams");
    } else if (key == "spilldirectory") {
      limits.spill_directory = CheckedSpillDirectory(value);
    } else {
      std::string known;
      for (auto k : kKeys) known += (known.empty() ? "" : ", ") + std::string(k);
      throw ConfigError(fmt::format("unknown [engine] key {}: the keys are {}",
                                    QuoteUserText(name), known));
    }
  }
  limits.Validate();
  return limits;
}

void EngineLimits::Validate() const {
  if (memory_budget < kMiB) {
    throw ConfigError(fmt::format("[engine] memory_budget = {} is below the least it can be, 1 MiB",
                                  FormatByteSize(memory_budget)));
  }
  if (connections < 1 || workers < 1 || max_streams < 1) {
    throw ConfigError("[engine] connections, workers and max_streams must each be at least 1");
  }
}

RangeMemory RangeMemoryFor(const EngineLimits& limits, int concurrent_ranges) {
  RangeMemory memory;
  memory.share = limits.memory_budget / std::max(1, concurrent_ranges);
  memory.arrow_batch_bytes = std::max<std::int64_t>(1, memory.share / 8);
  memory.row_group_bytes = std::max<std::int64_t>(1, memory.share / 2);
  return memory;
}

std::int64_t DeclaredRowBytes(const std::vector<CapturedColumn>& columns) {
  std::int64_t bytes = kMetadataRowBytes;
  for (const auto& column : columns) {
    const SqlType& type = column.type;
    if (type.IsMax()) {
      bytes += kLongValuePiece;
      continue;
    }
    const auto arrow_type = ArrowTypeFor(type, column.name);
    if (const auto* fixed = dynamic_cast<const arrow::FixedWidthType*>(arrow_type.get())) {
      bytes += std::max(1, fixed->bit_width() / 8);
    } else if (arrow_type->id() == arrow::Type::BINARY || arrow_type->id() == arrow::Type::LARGE_BINARY) {
      bytes += std::max(0, type.max_length) + 4;  // the bytes and their offset
    } else {
      bytes += 3LL * std::max(0, type.max_length) + 4;
    }
  }
  return bytes;
}

void CheckRowFitsBudget(const std::vector<CapturedColumn>& columns,
                        const std::string& capture_instance, const EngineLimits& limits,
                        int concurrent_ranges) {
  const std::int64_t row = DeclaredRowBytes(columns);
  const RangeMemory memory = RangeMemoryFor(limits, concurrent_ranges);
  if (row <= memory.arrow_batch_bytes) return;
  const std::int64_t needed = row * 8 * std::max(1, concurrent_ranges);
  throw ConfigError(fmt::format(
      "[engine] memory_budget = {} is too small for one row of capture instance {}: a row "
      "takes up to {} at its declared column widths (each (max) column counted at 1 MiB), and "
      "the budget gives each of the {} ranges that may be read at once {}, of which a record "
      "batch gets an eighth; give memory_budget at least {}, or read fewer ranges at once "
      "(numPartitions, [engine] connections)",
      FormatByteSize(limits.memory_budget), QuoteUserText(capture_instance), FormatByteSize(row),
      concurrent_ranges, FormatByteSize(memory.share), FormatByteSize(needed)));
}

}  // namespace mssql_cdc
