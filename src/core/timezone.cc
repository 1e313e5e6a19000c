#include "core/timezone.h"
#include "core/user_text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#include "core/ascii.h"
#include "core/closest_names.h"
#include "core/errors.h"

namespace mssql_cdc {

namespace {

struct WindowsZone {
  const char* windows;
  const char* iana;
};

constexpr WindowsZone kWindowsZones[] = {
#include "core/windows_zones.inc"
};

// A change of UTC offset at `at` (seconds since the epoch, UTC); offsets in seconds east.
struct Transition {
  std::int64_t at = 0;
  std::int32_t before = 0;
  std::int32_t after = 0;
};

// One end of a POSIX TZ daylight-saving rule: a day of the year and a local time of that day.
struct PosixDate {
  enum class Kind { kJulianNoLeap, kZeroBased, kMonthWeekDay };
  Kind kind = Kind::kMonthWeekDay;
  int day = 0;  // Jn: 1-365; n: 0-365
  int month = 0, week = 0, weekday = 0;
  std::int32_t time = 2 * 3600;  // seconds after local midnight; may be negative or past 24h
};

// The rule a TZif footer gives for instants after the file's last transition.
struct PosixTz {
  std::int32_t std_offset = 0;  // seconds east of UTC
  bool has_dst = false;
  std::int32_t dst_offset = 0;
  PosixDate start, end;  // start in standard local time, end in daylight local time
};

[[noreturn]] void Corrupt(const std::string& path, const std::string& what) {
  throw ConfigError("time zone file " + path + " is not a valid TZif file (" + what +
                    "): reinstall the tz database (apt-get install --reinstall tzdata)");
}

// Days since the epoch of the day `date` names in `year`.
std::int64_t DayOf(int year, const PosixDate& date) {
  const std::int64_t jan1 = DaysFromCivil(year, 1, 1);
  switch (date.kind) {
    case PosixDate::Kind::kJulianNoLeap:
      // Jn never counts February 29, so from March on a leap year is a day ahead.
      return jan1 + date.day - 1 + (IsLeapYear(year) && date.day >= 60 ? 1 : 0);
    case PosixDate::Kind::kZeroBased:
      return jan1 + date.day;
    case PosixDate::Kind::kMonthWeekDay: {
      const std::int64_t first = DaysFromCivil(year, date.month, 1);
      const int first_weekday = static_cast<int>(((first % 7 + 7) % 7 + 4) % 7);  // 1970-01-01: Thu
      int offset = (date.weekday - first_weekday + 7) % 7 + 7 * (date.week - 1);
      const int days = static_cast<int>(DaysInMonth(year, date.month));
      while (offset >= days) offset -= 7;  // week 5 means the last such weekday
      return first + offset;
    }
  }
  return jan1;
}

// Parses the POSIX TZ strings TZif footers carry (RFC 8536 section 3.3, with the version 3
// extensions: hours up to 167 and signed rule times).
class PosixParser {
 public:
  PosixParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  PosixTz Parse() {
    PosixTz tz;
    Name();
    tz.std_offset = -Offset();  // POSIX offsets count hours west of Greenwich
    if (pos_ == s_.size()) return tz;
    Name();
    tz.has_dst = true;
    tz.dst_offset = tz.std_offset + 3600;
    if (pos_ < s_.size() && s_[pos_] != ',') tz.dst_offset = -Offset();
    if (pos_ == s_.size()) Fail("daylight time without rules");
    Expect(',');
    tz.start = Date();
    Expect(',');
    tz.end = Date();
    if (pos_ != s_.size()) Fail("trailing characters");
    return tz;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    Corrupt(path_, "footer '" + std::string(s_) + "': " + what);
  }

  void Expect(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  bool IsDigit() const { return pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; }

  int Number(int max_digits) {
    if (!IsDigit()) Fail("expected a number");
    int value = 0;
    for (int n = 0; n < max_digits && IsDigit(); ++n) value = value * 10 + (s_[pos_++] - '0');
    return value;
  }

  void Name() {
    const std::size_t begin = pos_;
    if (pos_ < s_.size() && s_[pos_] == '<') {
      const std::size_t close = s_.find('>', pos_);
      if (close == std::string_view::npos || close == pos_ + 1) Fail("bad quoted zone name");
      pos_ = close + 1;
      return;
    }
    while (pos_ < s_.size() && ((s_[pos_] >= 'A' && s_[pos_] <= 'Z') ||
                                (s_[pos_] >= 'a' && s_[pos_] <= 'z'))) {
      ++pos_;
    }
    if (pos_ - begin < 3) Fail("zone name shorter than 3 letters");
  }

  // [+-]hhh[:mm[:ss]] in seconds.
  std::int32_t Offset() {
    int sign = 1;
    if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) {
      sign = s_[pos_] == '-' ? -1 : 1;
      ++pos_;
    }
    const int hours = Number(3);
    int minutes = 0, seconds = 0;
    if (pos_ < s_.size() && s_[pos_] == ':') {
      ++pos_;
      minutes = Number(2);
      if (pos_ < s_.size() && s_[pos_] == ':') {
        ++pos_;
        seconds = Number(2);
      }
    }
    if (hours > 167 || minutes > 59 || seconds > 59) Fail("time out of range");
    return sign * (hours * 3600 + minutes * 60 + seconds);
  }

  PosixDate Date() {
    PosixDate date;
    if (pos_ < s_.size() && s_[pos_] == 'J') {
      ++pos_;
      date.kind = PosixDate::Kind::kJulianNoLeap;
      date.day = Number(3);
      if (date.day < 1 || date.day > 365) Fail("Jn day out of range");
    } else if (pos_ < s_.size() && s_[pos_] == 'M') {
      ++pos_;
      date.kind = PosixDate::Kind::kMonthWeekDay;
      date.month = Number(2);
      Expect('.');
      date.week = Number(1);
      Expect('.');
      date.weekday = Number(1);
      if (date.month < 1 || date.month > 12 || date.week < 1 || date.week > 5 ||
          date.weekday > 6) {
        Fail("Mm.w.d out of range");
      }
    } else {
      date.kind = PosixDate::Kind::kZeroBased;
      date.day = Number(3);
      if (date.day > 365) Fail("day out of range");
    }
    if (pos_ < s_.size() && s_[pos_] == '/') {
      ++pos_;
      date.time = Offset();
    }
    return date;
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

// Big-endian reads over a TZif file's bytes.
class ByteReader {
 public:
  ByteReader(const std::string& data, const std::string& path) : data_(data), path_(path) {}

  std::size_t pos() const { return pos_; }
  void Skip(std::uint64_t n) {
    Need(n);
    pos_ += static_cast<std::size_t>(n);
  }
  std::uint8_t U8() {
    Need(1);
    return static_cast<std::uint8_t>(data_[pos_++]);
  }
  std::uint32_t U32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | U8();
    return v;
  }
  std::int64_t I64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | U8();
    return static_cast<std::int64_t>(v);
  }
  std::string_view Bytes(std::size_t n) {
    Need(n);
    std::string_view out(data_.data() + pos_, n);
    pos_ += n;
    return out;
  }
  bool AtEnd() const { return pos_ >= data_.size(); }
  std::size_t Remaining() const { return data_.size() - pos_; }

 private:
  void Need(std::uint64_t n) {
    if (n > data_.size() - pos_) Corrupt(path_, "truncated");
  }
  const std::string& data_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

struct TzifCounts {
  char version = 0;
  std::uint32_t isutcnt = 0, isstdcnt = 0, leapcnt = 0, timecnt = 0, typecnt = 0, charcnt = 0;
};

TzifCounts ReadHeader(ByteReader& in, const std::string& path) {
  if (in.Bytes(4) != "TZif") Corrupt(path, "no TZif magic");
  TzifCounts c;
  c.version = static_cast<char>(in.U8());
  in.Skip(15);
  c.isutcnt = in.U32();
  c.isstdcnt = in.U32();
  c.leapcnt = in.U32();
  c.timecnt = in.U32();
  c.typecnt = in.U32();
  c.charcnt = in.U32();
  if (c.typecnt == 0 || c.charcnt == 0) Corrupt(path, "no local time types");
  if ((c.isutcnt != 0 && c.isutcnt != c.typecnt) || (c.isstdcnt != 0 && c.isstdcnt != c.typecnt)) {
    Corrupt(path, "indicator counts do not match the type count");
  }
  return c;
}

// Returns nullopt when the file cannot be read.
std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream buffer;
  buffer << file.rdbuf();
  if (file.bad()) return std::nullopt;
  return buffer.str();
}

}  // namespace

// The UTC offsets of one IANA zone over time: the transitions of its TZif file, then the
// POSIX rule of its footer. Queries take seconds; all offsets are seconds east of UTC.
class ZoneRules {
 public:
  static std::shared_ptr<const ZoneRules> Parse(const std::string& data, const std::string& path);

  std::int32_t OffsetAtUtc(std::int64_t utc) const {
    const Window w = Around(utc);
    std::int32_t offset = w.base;
    for (int i = 0; i < w.size; ++i) {
      if (w.items[i].at <= utc) offset = w.items[i].after;
    }
    return offset;
  }

  // A transition takes effect for local times from the later of its two local readings on, so
  // gap and overlap times keep the offset in force before it.
  std::int32_t OffsetForLocal(std::int64_t local) const {
    const Window w = Around(local);
    std::int32_t offset = w.base;
    for (int i = 0; i < w.size; ++i) {
      const Transition& t = w.items[i];
      if (t.at + std::max(t.before, t.after) <= local) offset = t.after;
    }
    return offset;
  }

  std::optional<std::int32_t> OverlapOffsetAfter(std::int64_t local) const {
    const Window w = Around(local);
    for (int i = 0; i < w.size; ++i) {
      const Transition& t = w.items[i];
      if (t.before > t.after && t.at + t.after <= local && local < t.at + t.before) return t.after;
    }
    return std::nullopt;
  }

 private:
  // The transitions near one instant, enough to answer for it read as UTC or as local time.
  struct Window {
    std::array<Transition, 14> items{};
    int size = 0;
    std::int32_t base = 0;  // offset before items[0]
    void Add(const Transition& t) { items[size++] = t; }
  };

  Window Around(std::int64_t pivot) const;

  std::vector<Transition> table_;
  std::int32_t initial_ = 0;  // time type 0: in force before the first transition
  std::optional<PosixTz> footer_;
};

std::shared_ptr<const ZoneRules> ZoneRules::Parse(const std::string& data,
                                                  const std::string& path) {
  ByteReader in(data, path);
  TzifCounts c = ReadHeader(in, path);
  int time_size = 4;
  if (c.version != 0) {
    // Version 2+ repeats the data with 64-bit times after the version 1 block; read those.
    in.Skip(std::uint64_t{c.timecnt} * 5 + std::uint64_t{c.typecnt} * 6 + c.charcnt +
            std::uint64_t{c.leapcnt} * 8 + c.isstdcnt + c.isutcnt);
    c = ReadHeader(in, path);
    time_size = 8;
  }
  // Check the counts against the file before sizing anything by them.
  if (std::uint64_t{c.timecnt} * (time_size + 1) + std::uint64_t{c.typecnt} * 6 > in.Remaining()) {
    Corrupt(path, "truncated");
  }
  std::vector<std::int64_t> times(c.timecnt);
  for (auto& t : times) {
    t = time_size == 8 ? in.I64() : static_cast<std::int32_t>(in.U32());
  }
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (times[i] <= times[i - 1]) Corrupt(path, "transition times not ascending");
  }
  std::vector<std::uint8_t> indices(c.timecnt);
  for (auto& index : indices) {
    index = in.U8();
    if (index >= c.typecnt) Corrupt(path, "transition names a missing time type");
  }
  std::vector<std::int32_t> utoffs(c.typecnt);
  for (auto& utoff : utoffs) {
    utoff = static_cast<std::int32_t>(in.U32());
    // RFC 8536 bounds offsets to under 25 and 26 hours; the window logic relies on it.
    if (utoff < -89999 || utoff > 93599) Corrupt(path, "UTC offset out of range");
    in.Skip(2);  // is_dst, abbreviation index
  }
  // Leap-second records only appear in the "right/" zones, which are never loaded here.
  in.Skip(c.charcnt + std::uint64_t{c.leapcnt} * (time_size + 4) + c.isstdcnt + c.isutcnt);

  auto rules = std::make_shared<ZoneRules>();
  rules->initial_ = utoffs[0];
  std::int32_t previous = utoffs[0];
  rules->table_.reserve(times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    const std::int32_t after = utoffs[indices[i]];
    rules->table_.push_back({times[i], previous, after});
    previous = after;
  }
  if (c.version != 0 && !in.AtEnd()) {
    if (in.U8() != '\n') Corrupt(path, "footer does not start with a newline");
    std::string_view rest(data.data() + in.pos(), data.size() - in.pos());
    const std::size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) Corrupt(path, "footer does not end with a newline");
    if (newline > 0) rules->footer_ = PosixParser(rest.substr(0, newline), path).Parse();
  }
  return rules;
}

ZoneRules::Window ZoneRules::Around(std::int64_t pivot) const {
  Window w;
  w.base = initial_;
  const auto first_after = std::upper_bound(
      table_.begin(), table_.end(), pivot,
      [](std::int64_t value, const Transition& t) { return value < t.at; });
  const std::ptrdiff_t index = first_after - table_.begin();
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(table_.size());
  // A local reading and its UTC instant are at most 26 hours apart, so three transitions
  // either side cover both readings even where transitions crowd together.
  const std::ptrdiff_t lo = std::max<std::ptrdiff_t>(0, index - 3);
  const std::ptrdiff_t hi = std::min<std::ptrdiff_t>(n, index + 3);
  if (lo > 0) w.base = table_[lo].before;
  for (std::ptrdiff_t i = lo; i < hi; ++i) w.Add(table_[i]);

  if (!footer_) return w;
  if (n == 0) w.base = footer_->std_offset;
  if (!footer_->has_dst || hi != n) return w;
  // Past the table the footer rule applies: its transitions of the neighbouring years.
  const std::int64_t last = n == 0 ? std::numeric_limits<std::int64_t>::min() : table_.back().at;
  int year;
  unsigned month, day;
  CivilFromDays(FloorDiv(pivot, 86400), &year, &month, &day);
  std::array<Transition, 6> rule{};
  int count = 0;
  for (int y = year - 1; y <= year + 1; ++y) {
    const PosixTz& tz = *footer_;
    rule[count++] = {DayOf(y, tz.start) * 86400 + tz.start.time - tz.std_offset, tz.std_offset,
                     tz.dst_offset};
    rule[count++] = {DayOf(y, tz.end) * 86400 + tz.end.time - tz.dst_offset, tz.dst_offset,
                     tz.std_offset};
  }
  // Stable, so a year's end and the next year's start at the same instant (all-year daylight
  // time) stay in calendar order and daylight time wins.
  std::stable_sort(rule.begin(), rule.end(),
                   [](const Transition& a, const Transition& b) { return a.at < b.at; });
  bool first = true;
  for (const Transition& t : rule) {
    if (t.at <= last) continue;
    if (first && n == 0) w.base = t.before;
    first = false;
    w.Add(t);
  }
  return w;
}

namespace {

std::string ZoneDirectory() {
  const char* dir = std::getenv("TZDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo";
}

std::shared_ptr<const ZoneRules> LoadZone(const std::string& iana, std::string_view windows_name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ZoneRules>> cache;
  const std::string path = ZoneDirectory() + "/" + iana;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ConfigError("time zone '" + std::string(windows_name) + "' needs the tz database zone " +
                      iana + ", but " + path +
                      " does not exist: install the tz database (apt-get install tzdata) or "
                      "set TZDIR to its directory");
  }
  const std::optional<std::string> data = ReadFile(path);
  if (!data) {
    throw ConfigError("cannot read time zone file " + path +
                      ": check its permissions or reinstall tzdata");
  }
  auto rules = ZoneRules::Parse(*data, path);
  cache.emplace(path, rules);
  return rules;
}

std::string UnknownZoneMessage(std::string_view name) {
  const std::string wanted = AsciiLower(name);
  std::vector<std::pair<std::size_t, std::string>> close;
  for (const WindowsZone& zone : kWindowsZones) {
    const std::string candidate = AsciiLower(zone.windows);
    std::size_t distance = EditDistance(wanted, candidate);
    // An IANA name ("America/Sao_Paulo") or a fragment ("Pacific") points at its zones too.
    if (EqualsIgnoringAsciiCase(name, zone.iana)) {
      distance = 0;
    } else if (wanted.size() >= 4 && candidate.find(wanted) != std::string::npos) {
      distance = std::min<std::size_t>(distance, 1);
    }
    if (distance <= std::max<std::size_t>(2, wanted.size() / 4)) {
      close.emplace_back(distance, zone.windows);
    }
  }
  std::stable_sort(close.begin(), close.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string message =
      "unknown Windows time zone " + QuoteUserText(name) + " for sourceTimeZone: ";
  if (!close.empty()) {
    message += "did you mean ";
    for (std::size_t i = 0; i < close.size() && i < 3; ++i) {
      if (i > 0) message += " or ";
      message += "'" + close[i].second + "'";
    }
    message += "? ";
  }
  message +=
      "Use a name CURRENT_TIMEZONE_ID() returns, e.g. 'E. South America Standard Time' or "
      "'UTC' (SELECT name FROM sys.time_zone_info lists them)";
  return message;
}

std::string OffsetName(int minutes_east) {
  if (minutes_east == 0) return "UTC";
  const int magnitude = std::abs(minutes_east);
  char buf[16];
  std::snprintf(buf, sizeof buf, "UTC%c%02d:%02d", minutes_east < 0 ? '-' : '+', magnitude / 60,
                magnitude % 60);
  return buf;
}

}  // namespace

SourceClock::SourceClock(std::string name, std::shared_ptr<const ZoneRules> rules,
                         int fixed_minutes)
    : name_(std::move(name)), rules_(std::move(rules)), fixed_minutes_(fixed_minutes) {}

SourceClock SourceClock::Utc() { return SourceClock("UTC", nullptr, 0); }

SourceClock SourceClock::FixedOffset(int minutes_east) {
  if (minutes_east < -840 || minutes_east > 840) {
    throw ConfigError("UTC offset of " + std::to_string(minutes_east) +
                      " minutes is out of range: use -840 to 840 minutes east of UTC "
                      "(UTC-14:00 to UTC+14:00)");
  }
  return SourceClock(OffsetName(minutes_east), nullptr, minutes_east);
}

SourceClock SourceClock::ForWindowsZone(std::string_view windows_name) {
  // UTC needs no tz database, and is accepted even if a CLDR release stopped listing it.
  if (EqualsIgnoringAsciiCase(windows_name, "UTC")) return Utc();
  for (const WindowsZone& zone : kWindowsZones) {
    if (EqualsIgnoringAsciiCase(windows_name, zone.windows)) {
      return SourceClock(zone.windows, LoadZone(zone.iana, zone.windows), 0);
    }
  }
  throw ConfigError(UnknownZoneMessage(windows_name));
}

bool SourceClock::is_utc() const { return rules_ == nullptr && fixed_minutes_ == 0; }

UtcMicros SourceClock::ToUtc(LocalMicros local) const {
  if (!rules_) return {local.value - fixed_minutes_ * kMicrosPerMinute};
  const std::int32_t offset = rules_->OffsetForLocal(FloorDiv(local.value, kMicrosPerSecond));
  return {local.value - offset * kMicrosPerSecond};
}

LocalMicros SourceClock::ToLocal(UtcMicros utc) const {
  if (!rules_) return {utc.value + fixed_minutes_ * kMicrosPerMinute};
  const std::int32_t offset = rules_->OffsetAtUtc(FloorDiv(utc.value, kMicrosPerSecond));
  return {utc.value + offset * kMicrosPerSecond};
}

int SourceClock::OffsetMinutesAt(UtcMicros utc) const {
  if (!rules_) return fixed_minutes_;
  const std::int32_t seconds = rules_->OffsetAtUtc(FloorDiv(utc.value, kMicrosPerSecond));
  return static_cast<int>(FloorDiv(seconds + 30, 60));
}

std::optional<UtcMicros> SourceClock::SecondReading(LocalMicros local) const {
  if (!rules_) return std::nullopt;
  const auto offset = rules_->OverlapOffsetAfter(FloorDiv(local.value, kMicrosPerSecond));
  if (!offset) return std::nullopt;
  return UtcMicros{local.value - *offset * kMicrosPerSecond};
}

std::vector<std::string> SourceClock::KnownWindowsZones() {
  std::vector<std::string> names;
  for (const WindowsZone& zone : kWindowsZones) names.emplace_back(zone.windows);
  if (std::find(names.begin(), names.end(), "UTC") == names.end()) names.emplace_back("UTC");
  std::sort(names.begin(), names.end());
  return names;
}

CommitTimeConverter::CommitTimeConverter(SourceClock clock) : clock_(std::move(clock)) {}

UtcMicros CommitTimeConverter::Next(LocalMicros local) {
  const std::optional<UtcMicros> second = clock_.SecondReading(local);
  if (!second) {
    second_pass_ = false;
  } else if (!second_pass_ && has_previous_ &&
             local.value < previous_local_.value - kMicrosPerMinute) {
    // The clock read back more than a minute inside the repeated hour: it went back.
    second_pass_ = true;
  }
  const UtcMicros utc = second && second_pass_ ? *second : clock_.ToUtc(local);
  has_previous_ = true;
  previous_local_ = local;
  previous_utc_ = utc;
  return utc;
}

UtcMicros CommitInstant(const SourceClock& clock, LocalMicros local,
                        const std::function<std::vector<LocalMicros>(LocalMicros from)>& window) {
  UtcMicros utc = clock.ToUtc(local);
  if (!clock.SecondReading(local)) return utc;
  CommitTimeConverter converter(clock);
  for (const LocalMicros time : window(LocalMicros{local.value - kRepeatedHourLookBack})) utc = converter.Next(time);
  return utc;
}

}  // namespace mssql_cdc
