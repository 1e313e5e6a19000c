// How often a stream runs a micro-batch: to_delta's trigger, in its keyword form and as one
// string for pipeline files and the command line.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/options.h"

namespace mssql_cdc {

class Trigger {
 public:
  enum class Kind {
    kDefault,         // back to back, polling an idle source
    kAvailableNow,    // read up to the max LSN seen at start, then stop
    kProcessingTime,  // one batch per interval until stopped
  };

  Trigger() = default;
  static Trigger Default() { return Trigger(); }
  static Trigger AvailableNow() { return Trigger(Kind::kAvailableNow, {}); }
  // Throws ConfigError when `interval` is negative.
  static Trigger ProcessingTime(std::chrono::milliseconds interval);

  // A Spark interval string: one or more "<number> <unit>" parts, units millisecond, second,
  // minute, hour, day, week (singular or plural, any case) or ms, optionally after the word
  // "interval": "1 minute", "10 seconds", "500 ms", "1 hour 30 minutes". Fractions are
  // allowed and rounded to a millisecond.
  static Trigger ParseProcessingTime(std::string_view interval);

  // The keyword form of DataStreamWriter.trigger: {"availableNow": "true"} or
  // {"processingTime": "1 minute"}; no keywords gives Default. Names match ignoring case.
  static Trigger FromKeywords(const Options& keywords);

  // One string, for the command line and config files: "availableNow", "default", or a
  // processing-time interval, bare or after "processingTime=" ("processingTime=1 minute").
  static Trigger Parse(std::string_view text);

  Kind kind() const { return kind_; }
  std::chrono::milliseconds interval() const { return interval_; }  // kProcessingTime only
  std::string ToString() const;  // "default", "availableNow", "processingTime=60000ms"
  friend bool operator==(const Trigger&, const Trigger&) = default;

 private:
  Trigger(Kind kind, std::chrono::milliseconds interval) : kind_(kind), interval_(interval) {}

  Kind kind_ = Kind::kDefault;
  std::chrono::milliseconds interval_{0};
};

}  // namespace mssql_cdc
