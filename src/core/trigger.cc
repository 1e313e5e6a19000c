#include "core/trigger.h"

#include <spdlog/fmt/fmt.h>

#include <charconv>
#include <cmath>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/option_words.h"
#include "core/user_text.h"

namespace mssql_cdc {

// ---------------------------------------------------------------------------------------------
// Trigger

namespace {

constexpr std::string_view kIntervalExamples =
    "e.g. '1 minute', '10 seconds', '500 milliseconds', '500 ms', '2 hours', '1 day', "
    "'1 hour 30 minutes'";

std::optional<double> UnitMillis(std::string_view unit) {
  struct UnitSize {
    std::string_view name;
    double millis;
  };
  static constexpr UnitSize kUnits[] = {
      {"ms", 1},
      {"millisecond", 1},
      {"second", 1000},
      {"minute", 60'000},
      {"hour", 3'600'000},
      {"day", 86'400'000},
      {"week", 7 * 86'400'000.0},
  };
  for (const auto& u : kUnits) {
    if (unit == u.name) return u.millis;
    if (u.name != "ms" && unit.size() == u.name.size() + 1 && unit.starts_with(u.name) &&
        unit.back() == 's') {
      return u.millis;
    }
  }
  return std::nullopt;
}

ConfigError BadInterval(std::string_view text, std::string_view why) {
  return ConfigError(fmt::format("trigger processingTime {} {}: give a number and a unit "
                                 "(millisecond, second, minute, hour, day, week, or ms), {}",
                                 QuoteUserText(text), why, kIntervalExamples));
}

}  // namespace

Trigger Trigger::ProcessingTime(std::chrono::milliseconds interval) {
  if (interval.count() < 0) {
    throw ConfigError(fmt::format("trigger processingTime must not be negative, got {} ms",
                                  interval.count()));
  }
  return Trigger(Kind::kProcessingTime, interval);
}

Trigger Trigger::ParseProcessingTime(std::string_view interval) {
  std::string text = AsciiLower(TrimAsciiSpace(interval));
  std::string_view rest = text;
  if (rest.starts_with("interval") &&
      (rest.size() == 8 || rest[8] == ' ' || rest[8] == '\t')) {
    rest = TrimAsciiSpace(rest.substr(8));
  }
  if (rest.empty()) throw BadInterval(interval, "is empty");
  double total = 0;
  while (!rest.empty()) {
    std::size_t digits = 0;
    while (digits < rest.size() &&
           ((rest[digits] >= '0' && rest[digits] <= '9') || rest[digits] == '.')) {
      ++digits;
    }
    std::string_view number_text = rest.substr(0, digits);
    double number = 0;
    auto [end, error] =
        std::from_chars(number_text.data(), number_text.data() + number_text.size(), number);
    if (digits == 0 || error != std::errc() || end != number_text.data() + number_text.size()) {
      throw BadInterval(interval, "does not start each part with a non-negative number");
    }
    rest = TrimAsciiSpace(rest.substr(digits));
    std::size_t letters = 0;
    while (letters < rest.size() && rest[letters] >= 'a' && rest[letters] <= 'z') ++letters;
    std::string_view unit = rest.substr(0, letters);
    if (unit.starts_with("month") || unit.starts_with("year")) {
      throw BadInterval(interval, "uses months or years, which have no fixed length");
    }
    auto millis = UnitMillis(unit);
    if (!millis) {
      throw BadInterval(interval, unit.empty() ? std::string("has a number without a unit")
                                               : fmt::format("has unknown unit '{}'", unit));
    }
    total += number * *millis;
    rest = TrimAsciiSpace(rest.substr(letters));
  }
  // About 285 years in milliseconds: beyond it the count would not round-trip through double.
  constexpr double kMaxMillis = 9e12;
  if (total > kMaxMillis) throw BadInterval(interval, "is too long");
  return Trigger(Kind::kProcessingTime, std::chrono::milliseconds(std::llround(total)));
}

Trigger Trigger::FromKeywords(const Options& keywords) {
  if (keywords.empty()) return Default();
  if (keywords.size() > 1) {
    throw ConfigError(fmt::format(
        "trigger has {} keywords ({}): give exactly one, availableNow or processingTime",
        keywords.size(), keywords.Redacted()));
  }
  const auto& [name, value] = keywords.entries().front();
  std::string lower = AsciiLower(name);
  if (lower == "availablenow") {
    if (ParseBoolWord(value) == true) return AvailableNow();
    throw ConfigError(fmt::format(
        "trigger availableNow must be true, got {}: to run without it, give no trigger",
        QuoteUserText(value)));
  }
  if (lower == "processingtime") return ParseProcessingTime(value);
  if (lower == "once") {
    throw ConfigError(
        "trigger once is not supported: use availableNow, which also reads everything "
        "available and stops, in bounded batches");
  }
  if (lower == "continuous") {
    throw ConfigError(
        "trigger continuous is not supported by this source: use processingTime, e.g. "
        "processingTime='10 seconds'");
  }
  throw ConfigError(fmt::format(
      "unknown trigger {}: give availableNow=True or processingTime='<interval>'", QuoteUserText(name)));
}

Trigger Trigger::Parse(std::string_view text) {
  std::string lower = AsciiLower(TrimAsciiSpace(text));
  if (lower == "availablenow") return AvailableNow();
  if (lower == "default" || lower == "none") return Default();
  std::string_view rest = TrimAsciiSpace(text);
  constexpr std::string_view kPrefix = "processingtime";
  if (lower.starts_with(kPrefix)) {
    rest = TrimAsciiSpace(rest.substr(kPrefix.size()));
    if (!rest.empty() && (rest.front() == '=' || rest.front() == ':')) rest.remove_prefix(1);
    return ParseProcessingTime(rest);
  }
  if (!lower.empty() && ((lower[0] >= '0' && lower[0] <= '9') || lower.starts_with("interval"))) {
    return ParseProcessingTime(rest);
  }
  throw ConfigError(fmt::format(
      "trigger {} is not valid: give availableNow, default, or processingTime=<interval> ({})",
      QuoteUserText(text), kIntervalExamples));
}

std::string Trigger::ToString() const {
  switch (kind_) {
    case Kind::kDefault: return "default";
    case Kind::kAvailableNow: return "availableNow";
    case Kind::kProcessingTime: return fmt::format("processingTime={}ms", interval_.count());
  }
  return "default";
}

}  // namespace mssql_cdc
