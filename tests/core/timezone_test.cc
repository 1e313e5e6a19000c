#include "core/timezone.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <optional>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

LocalMicros Local(const char* text) {
  auto micros = ParseDateTime(text);
  EXPECT_TRUE(micros.has_value()) << text;
  return {micros.value_or(0)};
}

UtcMicros Utc(const char* text) {
  auto micros = ParseDateTime(text);
  EXPECT_TRUE(micros.has_value()) << text;
  return {micros.value_or(0)};
}

std::string Text(UtcMicros utc) { return FormatDateTime(utc.value, 0); }
std::string Text(LocalMicros local) { return FormatDateTime(local.value, 0); }

// Sets an environment variable for the life of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(TimeZone, UtcIsIdentity) {
  for (const SourceClock& clock :
       {SourceClock::Utc(), SourceClock::ForWindowsZone("UTC"), SourceClock::ForWindowsZone("utc"),
        SourceClock::FixedOffset(0)}) {
    EXPECT_EQ(clock.name(), "UTC");
    EXPECT_TRUE(clock.is_utc());
    EXPECT_EQ(Text(clock.ToUtc(Local("2024-11-03 01:30:00"))), "2024-11-03 01:30:00");
    EXPECT_EQ(Text(clock.ToLocal(Utc("2024-03-10 02:30:00"))), "2024-03-10 02:30:00");
    EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-07-01")), 0);
    EXPECT_FALSE(clock.SecondReading(Local("2024-11-03 01:30:00")).has_value());
  }
}

TEST(TimeZone, FixedOffsetNamesAndConverts) {
  const SourceClock clock = SourceClock::FixedOffset(-180);
  EXPECT_EQ(clock.name(), "UTC-03:00");
  EXPECT_FALSE(clock.is_utc());
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-01-01 22:00:00"))), "2024-01-02 01:00:00");
  EXPECT_EQ(Text(clock.ToLocal(Utc("2024-01-02 01:00:00"))), "2024-01-01 22:00:00");
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2030-06-01")), -180);
  EXPECT_EQ(SourceClock::FixedOffset(345).name(), "UTC+05:45");
  EXPECT_EQ(SourceClock::FixedOffset(840).name(), "UTC+14:00");
  EXPECT_EQ(SourceClock::FixedOffset(-840).name(), "UTC-14:00");
  EXPECT_THROW(SourceClock::FixedOffset(841), ConfigError);
  EXPECT_THROW(SourceClock::FixedOffset(-841), ConfigError);
}

TEST(TimeZone, SaoPauloHasNoDaylightTimeSince2019) {
  const SourceClock clock = SourceClock::ForWindowsZone("E. South America Standard Time");
  EXPECT_EQ(clock.name(), "E. South America Standard Time");
  EXPECT_FALSE(clock.is_utc());
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-01-15 12:00:00"))), "2024-01-15 15:00:00");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-11-03 00:30:00"))), "2024-11-03 03:30:00");
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2025-12-25")), -180);
}

TEST(TimeZone, SaoPaulo2018DaylightTimeFromTheTables) {
  const SourceClock clock = SourceClock::ForWindowsZone("E. South America Standard Time");
  // Summer time 2017/18 ended 2018-02-18 00:00 -02 (02:00 UTC); 2018/19 began 2018-11-04
  // 00:00 -03 (03:00 UTC).
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2018-01-15")), -120);
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2018-02-18 01:59:59")), -120);
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2018-02-18 02:00:00")), -180);
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2018-11-04 02:59:59")), -180);
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2018-11-04 03:00:00")), -120);
  EXPECT_EQ(Text(clock.ToLocal(Utc("2018-11-04 03:00:00"))), "2018-11-04 01:00:00");
  // Midnight 2018-11-04 never happened locally: it keeps the -03:00 in force before.
  EXPECT_EQ(Text(clock.ToUtc(Local("2018-11-04 00:30:00"))), "2018-11-04 03:30:00");
  EXPECT_EQ(Text(clock.ToUtc(Local("2018-11-04 01:30:00"))), "2018-11-04 03:30:00");
  // 23:00-24:00 on 2018-02-17 happened twice: the first reading (-02:00) is taken.
  EXPECT_EQ(Text(clock.ToUtc(Local("2018-02-17 23:30:00"))), "2018-02-18 01:30:00");
  ASSERT_TRUE(clock.SecondReading(Local("2018-02-17 23:30:00")).has_value());
  EXPECT_EQ(Text(*clock.SecondReading(Local("2018-02-17 23:30:00"))), "2018-02-18 02:30:00");
}

TEST(TimeZone, PacificSpringGapTakesOffsetBeforeTransition) {
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-03-10 01:59:59"))), "2024-03-10 09:59:59");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-03-10 02:00:00"))), "2024-03-10 10:00:00");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-03-10 02:30:00"))), "2024-03-10 10:30:00");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-03-10 03:00:00"))), "2024-03-10 10:00:00");
  EXPECT_EQ(Text(clock.ToLocal(Utc("2024-03-10 09:59:59"))), "2024-03-10 01:59:59");
  EXPECT_EQ(Text(clock.ToLocal(Utc("2024-03-10 10:00:00"))), "2024-03-10 03:00:00");
  EXPECT_FALSE(clock.SecondReading(Local("2024-03-10 02:30:00")).has_value());
}

TEST(TimeZone, PacificFallOverlapTakesEarlierOffset) {
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-11-03 00:59:59"))), "2024-11-03 07:59:59");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-11-03 01:00:00"))), "2024-11-03 08:00:00");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-11-03 01:30:00"))), "2024-11-03 08:30:00");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-11-03 02:00:00"))), "2024-11-03 10:00:00");
  auto second = clock.SecondReading(Local("2024-11-03 01:30:00"));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(Text(*second), "2024-11-03 09:30:00");
  EXPECT_FALSE(clock.SecondReading(Local("2024-11-03 00:59:59")).has_value());
  EXPECT_FALSE(clock.SecondReading(Local("2024-11-03 02:00:00")).has_value());
  EXPECT_EQ(Text(clock.ToLocal(Utc("2024-11-03 08:59:59"))), "2024-11-03 01:59:59");
  EXPECT_EQ(Text(clock.ToLocal(Utc("2024-11-03 09:00:00"))), "2024-11-03 01:00:00");
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-11-03 08:59:59")), -420);
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-11-03 09:00:00")), -480);
}

TEST(TimeZone, CentralEuropeTransitions2024And2025) {
  for (const char* name : {"Central European Standard Time", "W. Europe Standard Time"}) {
    SCOPED_TRACE(name);
    const SourceClock clock = SourceClock::ForWindowsZone(name);
    EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-03-31 00:59:59")), 60);
    EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-03-31 01:00:00")), 120);
    EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-10-27 00:59:59")), 120);
    EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-10-27 01:00:00")), 60);
    EXPECT_EQ(clock.OffsetMinutesAt(Utc("2025-03-30 01:00:00")), 120);
    EXPECT_EQ(clock.OffsetMinutesAt(Utc("2025-10-26 01:00:00")), 60);
    EXPECT_EQ(Text(clock.ToUtc(Local("2025-03-30 02:30:00"))), "2025-03-30 01:30:00");
    EXPECT_EQ(Text(clock.ToUtc(Local("2025-10-26 02:30:00"))), "2025-10-26 00:30:00");
    EXPECT_EQ(Text(*clock.SecondReading(Local("2025-10-26 02:30:00"))), "2025-10-26 01:30:00");
    EXPECT_EQ(Text(clock.ToUtc(Local("2025-07-01 12:00:00"))), "2025-07-01 10:00:00");
  }
}

TEST(TimeZone, FarFutureUsesTheFooterRule) {
  // The tables end in 2037; 2060 comes from the POSIX TZ footer.
  const SourceClock pacific = SourceClock::ForWindowsZone("Pacific Standard Time");
  EXPECT_EQ(pacific.OffsetMinutesAt(Utc("2060-03-14 09:59:59")), -480);
  EXPECT_EQ(pacific.OffsetMinutesAt(Utc("2060-03-14 10:00:00")), -420);
  EXPECT_EQ(pacific.OffsetMinutesAt(Utc("2060-11-07 08:59:59")), -420);
  EXPECT_EQ(pacific.OffsetMinutesAt(Utc("2060-11-07 09:00:00")), -480);
  EXPECT_EQ(Text(pacific.ToUtc(Local("2060-03-14 02:30:00"))), "2060-03-14 10:30:00");
  EXPECT_EQ(Text(pacific.ToUtc(Local("2060-11-07 01:30:00"))), "2060-11-07 08:30:00");
  EXPECT_EQ(Text(*pacific.SecondReading(Local("2060-11-07 01:30:00"))), "2060-11-07 09:30:00");

  // M3.5.0 / M10.5.0/3: the last Sunday, in a year where October has five.
  const SourceClock berlin = SourceClock::ForWindowsZone("W. Europe Standard Time");
  EXPECT_EQ(berlin.OffsetMinutesAt(Utc("2060-03-28 00:59:59")), 60);
  EXPECT_EQ(berlin.OffsetMinutesAt(Utc("2060-03-28 01:00:00")), 120);
  EXPECT_EQ(berlin.OffsetMinutesAt(Utc("2060-10-31 00:59:59")), 120);
  EXPECT_EQ(berlin.OffsetMinutesAt(Utc("2060-10-31 01:00:00")), 60);

  const SourceClock sydney = SourceClock::ForWindowsZone("AUS Eastern Standard Time");
  EXPECT_EQ(sydney.OffsetMinutesAt(Utc("2060-01-01")), 660);
  EXPECT_EQ(sydney.OffsetMinutesAt(Utc("2060-04-03 16:00:00")), 600);
  EXPECT_EQ(sydney.OffsetMinutesAt(Utc("2060-10-02 16:00:00")), 660);
  EXPECT_EQ(sydney.OffsetMinutesAt(Utc("2060-12-31 23:00:00")), 660);
}

TEST(TimeZone, HalfAndQuarterHourOffsets) {
  const SourceClock india = SourceClock::ForWindowsZone("India Standard Time");
  EXPECT_EQ(india.OffsetMinutesAt(Utc("2024-06-01")), 330);
  EXPECT_EQ(Text(india.ToUtc(Local("2024-06-01 12:00:00"))), "2024-06-01 06:30:00");
  EXPECT_EQ(Text(india.ToLocal(Utc("2024-06-01 06:30:00"))), "2024-06-01 12:00:00");
  const SourceClock nepal = SourceClock::ForWindowsZone("Nepal Standard Time");
  EXPECT_EQ(nepal.OffsetMinutesAt(Utc("2024-06-01")), 345);
  EXPECT_EQ(Text(nepal.ToUtc(Local("2024-06-01 12:00:00"))), "2024-06-01 06:15:00");
  EXPECT_EQ(Text(nepal.ToLocal(Utc("2060-06-01 06:15:00"))), "2060-06-01 12:00:00");
}

TEST(TimeZone, SouthernHemisphereDaylightTime) {
  const SourceClock clock = SourceClock::ForWindowsZone("AUS Eastern Standard Time");
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-01-15")), 660);
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-07-15")), 600);
  // Ends 2024-04-07 03:00 AEDT (16:00 UTC the day before); 02:00-03:00 reads twice.
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-04-06 15:59:59")), 660);
  EXPECT_EQ(clock.OffsetMinutesAt(Utc("2024-04-06 16:00:00")), 600);
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-04-07 02:30:00"))), "2024-04-06 15:30:00");
  EXPECT_EQ(Text(*clock.SecondReading(Local("2024-04-07 02:30:00"))), "2024-04-06 16:30:00");
  // Starts 2024-10-06 02:00 AEST: 02:00-03:00 never happens.
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-10-06 02:30:00"))), "2024-10-05 16:30:00");
  EXPECT_EQ(Text(clock.ToLocal(Utc("2024-10-05 16:00:00"))), "2024-10-06 03:00:00");
}

TEST(TimeZone, LocalRoundTripsOutsideGaps) {
  struct Case {
    const char* zone;
    std::vector<const char*> gap_starts;  // local times of each one-hour gap in 2024
  };
  const std::vector<Case> cases = {
      {"Pacific Standard Time", {"2024-03-10 02:00:00"}},
      {"W. Europe Standard Time", {"2024-03-31 02:00:00"}},
      {"AUS Eastern Standard Time", {"2024-10-06 02:00:00"}},
      {"E. South America Standard Time", {}},
      {"India Standard Time", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.zone);
    const SourceClock clock = SourceClock::ForWindowsZone(c.zone);
    std::vector<std::string> misses;
    const std::int64_t step = 15 * kMicrosPerMinute + 7 * kMicrosPerSecond;
    const std::int64_t begin = Local("2024-01-01").value;
    const std::int64_t end = Local("2025-01-01").value;
    for (std::int64_t t = begin; t < end; t += step) {
      const LocalMicros local{t};
      if (clock.ToLocal(clock.ToUtc(local)) != local) misses.push_back(Text(local));
    }
    std::vector<std::string> expected;
    for (const char* gap : c.gap_starts) {
      const std::int64_t g = Local(gap).value;
      for (std::int64_t t = begin + (g - begin + step - 1) / step * step; t < g + kMicrosPerHour;
           t += step) {
        expected.push_back(Text(LocalMicros{t}));
      }
    }
    EXPECT_EQ(misses, expected);
  }
}

struct ZonePair {
  const char* windows;
  const char* iana;
};

constexpr ZonePair kZonePairs[] = {
#include "core/windows_zones.inc"
};

// glibc reads the same tz database with its own code: every zone's offsets must agree with it,
// from 1900 to 2100, both sides of the end of the tables.
TEST(TimeZone, OffsetsAgreeWithTheCLibraryForEveryZone) {
  for (const ZonePair& zone : kZonePairs) {
    SCOPED_TRACE(zone.windows);
    const SourceClock clock = SourceClock::ForWindowsZone(zone.windows);
    ScopedEnv tz("TZ", std::string(":") + zone.iana);
    tzset();
    int mismatches = 0;
    const std::int64_t step = 6 * 86400 + 5 * 3600 + 17;
    for (std::int64_t s = -2208988800; s < 4102444800 && mismatches < 3; s += step) {
      const std::time_t t = static_cast<std::time_t>(s);
      std::tm tm{};
      ASSERT_NE(localtime_r(&t, &tm), nullptr);
      const std::int64_t ours =
          (clock.ToLocal(UtcMicros{s * kMicrosPerSecond}).value - s * kMicrosPerSecond) /
          kMicrosPerSecond;
      if (ours != tm.tm_gmtoff) {
        ++mismatches;
        ADD_FAILURE() << zone.iana << " at " << FormatDateTime(s * kMicrosPerSecond, 0)
                      << " UTC: ours " << ours << " s, libc " << tm.tm_gmtoff << " s";
      }
    }
  }
  tzset();
}

// For every zone: a local time reads forward by a gap or not at all, and a time that reads
// twice converts to its first reading, with the second an exact reading too.
TEST(TimeZone, GapsMoveForwardAndOverlapsReadTwiceInEveryZone) {
  for (const ZonePair& zone : kZonePairs) {
    SCOPED_TRACE(zone.windows);
    const SourceClock clock = SourceClock::ForWindowsZone(zone.windows);
    int failures = 0;
    const std::int64_t step = kMicrosPerDay + 7 * kMicrosPerHour + 13 * kMicrosPerMinute;
    for (std::int64_t t = Local("1970-01-01").value; t < Local("2070-01-01").value && failures < 3;
         t += step) {
      const LocalMicros local{t};
      const UtcMicros utc = clock.ToUtc(local);
      const LocalMicros back = clock.ToLocal(utc);
      const auto second = clock.SecondReading(local);
      // Gaps are usually an hour; Kiritimati (1994) and Samoa (2011) skipped a whole day.
      bool ok = back >= local && back.value - local.value <= 24 * kMicrosPerHour;
      if (second) ok = ok && back == local && *second > utc && clock.ToLocal(*second) == local;
      if (!ok) {
        ++failures;
        ADD_FAILURE() << zone.iana << " local " << Text(local) << " -> " << Text(utc) << " -> "
                      << Text(back);
      }
    }
  }
}

TEST(TimeZone, ZonesLoadFromManyThreadsAlike) {
  const std::vector<std::string> names = SourceClock::KnownWindowsZones();
  const UtcMicros instant = Utc("2031-08-15 12:34:56");
  std::vector<std::vector<int>> offsets(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    threads.emplace_back([&, i] {
      for (const std::string& name : names) {
        offsets[i].push_back(SourceClock::ForWindowsZone(name).OffsetMinutesAt(instant));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t i = 1; i < offsets.size(); ++i) EXPECT_EQ(offsets[i], offsets[0]);
  EXPECT_EQ(offsets[0].size(), names.size());
}

TEST(TimeZone, EveryKnownZoneLoads) {
  const std::vector<std::string> names = SourceClock::KnownWindowsZones();
  EXPECT_GT(names.size(), 100u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_TRUE(std::adjacent_find(names.begin(), names.end()) == names.end());
  EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "UTC"));
  EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "Pacific Standard Time"));
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const SourceClock clock = SourceClock::ForWindowsZone(name);
    EXPECT_EQ(clock.name(), name);
    const int offset = clock.OffsetMinutesAt(Utc("2024-06-01"));
    EXPECT_GE(offset, -720);
    EXPECT_LE(offset, 840);
  }
}

TEST(TimeZone, NamesMatchIgnoringCase) {
  const SourceClock clock = SourceClock::ForWindowsZone("pacific STANDARD time");
  EXPECT_EQ(clock.name(), "Pacific Standard Time");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-07-01 12:00:00"))), "2024-07-01 19:00:00");
  EXPECT_EQ(SourceClock::ForWindowsZone("e. south america standard time").name(),
            "E. South America Standard Time");
}

TEST(TimeZone, UnknownNameIsRejectedWithHelp) {
  try {
    SourceClock::ForWindowsZone("Pacific Standard Tme");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown Windows time zone 'Pacific Standard Tme' for sourceTimeZone"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("did you mean 'Pacific Standard Time'"), std::string::npos) << message;
    EXPECT_NE(message.find("CURRENT_TIMEZONE_ID()"), std::string::npos) << message;
    EXPECT_LT(message.size(), 400u) << message;
  }
  try {
    SourceClock::ForWindowsZone("America/Sao_Paulo");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'E. South America Standard Time'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(SourceClock::ForWindowsZone(""), ConfigError);
  EXPECT_THROW(SourceClock::ForWindowsZone("Mars Standard Time"), ConfigError);
  EXPECT_THROW(SourceClock::ForWindowsZone("UTC "), ConfigError);
}

using testing::TempDir;

TEST(TimeZone, MissingTzDataSaysWhatToInstall) {
  TempDir dir;
  ScopedEnv tzdir("TZDIR", dir.path());
  try {
    SourceClock::ForWindowsZone("Pacific Standard Time");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("America/Los_Angeles"), std::string::npos) << message;
    EXPECT_NE(message.find("apt-get install tzdata"), std::string::npos) << message;
  }
  // UTC needs no tz database.
  EXPECT_TRUE(SourceClock::ForWindowsZone("UTC").is_utc());
}

void PutU32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

// A version 2 TZif file with no transitions, one type (`std_seconds` east, "STD") and `footer`.
std::string FooterOnlyTzif(std::int32_t std_seconds, const std::string& footer) {
  std::string block;
  for (int version = 0; version < 2; ++version) {
    block += "TZif2";
    block.append(15, '\0');
    for (std::uint32_t count : {0u, 0u, 0u, 0u, 1u, 4u}) PutU32(block, count);
    PutU32(block, static_cast<std::uint32_t>(std_seconds));
    block.push_back('\0');  // is_dst
    block.push_back('\0');  // abbreviation index
    block.append("STD", 4);
  }
  return block + "\n" + footer + "\n";
}

// Puts a hand-made zone file where "Pacific Standard Time" is looked up.
SourceClock ClockFromFile(const TempDir& dir, const std::string& contents) {
  std::filesystem::create_directories(dir.File("America"));
  std::ofstream(dir.File("America/Los_Angeles"), std::ios::binary) << contents;
  ScopedEnv tzdir("TZDIR", dir.path());
  return SourceClock::ForWindowsZone("Pacific Standard Time");
}

TEST(TimeZone, FooterJulianDayForms) {
  // Jn skips February 29: J60 is March 1 every year. Zero-based n counts it: 59 is
  // February 29 in a leap year.
  TempDir julian_dir;
  const SourceClock julian = ClockFromFile(julian_dir, FooterOnlyTzif(3600, "STD-1DST,J60,J300"));
  EXPECT_EQ(julian.OffsetMinutesAt(Utc("2024-02-29 12:00:00")), 60);
  EXPECT_EQ(julian.OffsetMinutesAt(Utc("2024-03-01 00:59:59")), 60);
  EXPECT_EQ(julian.OffsetMinutesAt(Utc("2024-03-01 01:00:00")), 120);  // 02:00 local
  EXPECT_EQ(julian.OffsetMinutesAt(Utc("2024-10-26 23:59:59")), 120);  // J300 = October 27
  EXPECT_EQ(julian.OffsetMinutesAt(Utc("2024-10-27 00:00:00")), 60);

  TempDir zero_dir;
  const SourceClock zero = ClockFromFile(zero_dir, FooterOnlyTzif(3600, "STD-1DST-3,59/0,299/-1"));
  EXPECT_EQ(zero.OffsetMinutesAt(Utc("2024-02-28 22:59:59")), 60);
  EXPECT_EQ(zero.OffsetMinutesAt(Utc("2024-02-28 23:00:00")), 180);  // Feb 29 00:00 local
  EXPECT_EQ(zero.OffsetMinutesAt(Utc("2023-02-28 22:59:59")), 60);   // 59 is March 1 in 2023
  EXPECT_EQ(zero.OffsetMinutesAt(Utc("2023-02-28 23:00:00")), 180);
  // 299 is October 26 in 2024; /-1 is 23:00 local the day before, 20:00 UTC.
  EXPECT_EQ(zero.OffsetMinutesAt(Utc("2024-10-25 19:59:59")), 180);
  EXPECT_EQ(zero.OffsetMinutesAt(Utc("2024-10-25 20:00:00")), 60);
  EXPECT_EQ(Text(zero.ToUtc(Local("2024-10-25 22:30:00"))), "2024-10-25 19:30:00");
  EXPECT_EQ(Text(*zero.SecondReading(Local("2024-10-25 22:30:00"))), "2024-10-25 21:30:00");
}

TEST(TimeZone, FooterWithoutDaylightTimeAndBadFiles) {
  TempDir fixed_dir;
  const SourceClock fixed = ClockFromFile(fixed_dir, FooterOnlyTzif(0, "<-0330>3:30"));
  EXPECT_EQ(fixed.OffsetMinutesAt(Utc("2024-06-01")), -210);
  EXPECT_EQ(Text(fixed.ToUtc(Local("2024-06-01 12:00:00"))), "2024-06-01 15:30:00");

  TempDir truncated_dir;
  EXPECT_THROW(ClockFromFile(truncated_dir, FooterOnlyTzif(0, "UTC0").substr(0, 30)),
               ConfigError);
  TempDir bad_footer_dir;
  EXPECT_THROW(ClockFromFile(bad_footer_dir, FooterOnlyTzif(0, "STD-1DST")), ConfigError);
  TempDir bad_magic_dir;
  EXPECT_THROW(ClockFromFile(bad_magic_dir, "not a zone file"), ConfigError);
}

// Commits every 10 minutes of real time across the 2024 Pacific fall-back, as local readings.
std::vector<LocalMicros> PacificFallBackCommits(std::vector<UtcMicros>* truth) {
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");
  std::vector<LocalMicros> locals;
  for (UtcMicros u = Utc("2024-11-03 07:30:00"); u <= Utc("2024-11-03 11:00:00");
       u.value += 10 * kMicrosPerMinute) {
    truth->push_back(u);
    locals.push_back(clock.ToLocal(u));
  }
  return locals;
}

TEST(CommitTime, FallBackSecondPassKeepsUtcInCommitOrder) {
  std::vector<UtcMicros> truth;
  const std::vector<LocalMicros> locals = PacificFallBackCommits(&truth);
  ASSERT_EQ(Text(locals.front()), "2024-11-03 00:30:00");
  ASSERT_EQ(Text(locals.back()), "2024-11-03 03:00:00");
  CommitTimeConverter converter(SourceClock::ForWindowsZone("Pacific Standard Time"));
  std::vector<UtcMicros> got;
  for (LocalMicros local : locals) got.push_back(converter.Next(local));
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(Text(got[i]), Text(truth[i])) << "commit " << i << " local " << Text(locals[i]);
    if (i > 0) {
      EXPECT_LT(got[i - 1], got[i]) << "commit " << i;
    }
  }
  // The plain conversion would have put the repeated hour an hour early.
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");
  EXPECT_EQ(Text(clock.ToUtc(Local("2024-11-03 01:10:00"))), "2024-11-03 08:10:00");
}

TEST(CommitTime, SameLocalTimeAndSmallStepsBackDoNotStartSecondPass) {
  CommitTimeConverter converter(SourceClock::ForWindowsZone("Pacific Standard Time"));
  EXPECT_EQ(Text(converter.Next(Local("2024-11-03 01:10:00"))), "2024-11-03 08:10:00");
  EXPECT_EQ(Text(converter.Next(Local("2024-11-03 01:10:00"))), "2024-11-03 08:10:00");
  // Back by under a minute (clock adjustment): still the first reading.
  EXPECT_EQ(Text(converter.Next(Local("2024-11-03 01:09:30"))), "2024-11-03 08:09:30");
  EXPECT_EQ(Text(converter.Next(Local("2024-11-03 01:50:00"))), "2024-11-03 08:50:00");
  // Back by 40 minutes inside the overlap: the clock went back.
  EXPECT_EQ(Text(converter.Next(Local("2024-11-03 01:10:00"))), "2024-11-03 09:10:00");
  EXPECT_EQ(Text(converter.Next(Local("2024-11-03 01:59:00"))), "2024-11-03 09:59:00");
  // Leaving the overlap ends the second pass; the next fall-back starts afresh.
  EXPECT_EQ(Text(converter.Next(Local("2024-11-03 02:00:00"))), "2024-11-03 10:00:00");
  EXPECT_EQ(Text(converter.Next(Local("2025-11-02 01:30:00"))), "2025-11-02 08:30:00");
}

TEST(CommitTime, WithoutARepeatItIsThePlainConversion) {
  for (const char* zone : {"Pacific Standard Time", "UTC", "E. South America Standard Time"}) {
    SCOPED_TRACE(zone);
    const SourceClock clock = SourceClock::ForWindowsZone(zone);
    CommitTimeConverter converter(clock);
    // Through the 2024 spring gap and a summer day, commits every 7 minutes of local time.
    for (std::int64_t t = Local("2024-03-09 22:00:00").value; t < Local("2024-03-10 06:00:00").value;
         t += 7 * kMicrosPerMinute) {
      EXPECT_EQ(converter.Next(LocalMicros{t}), clock.ToUtc(LocalMicros{t}));
    }
    for (std::int64_t t = Local("2024-07-01").value; t < Local("2024-07-02").value;
         t += 13 * kMicrosPerMinute) {
      EXPECT_EQ(converter.Next(LocalMicros{t}), clock.ToUtc(LocalMicros{t}));
    }
  }
}

}  // namespace
}  // namespace mssql_cdc
