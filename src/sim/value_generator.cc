#include "sim/value_generator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/time.h"

namespace mssql_cdc::sim {
namespace {

constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ";
// Non-ASCII characters, one UTF-16 unit each, so Unicode columns see real UTF-8.
const char* const kUnicode[] = {"\xC3\xA9", "\xC3\xBC", "\xC3\x9F", "\xE6\xBC\xA2", "\xE2\x82\xAC"};

std::string RandomText(Random& random, std::int64_t length, bool unicode) {
  std::string out;
  for (std::int64_t i = 0; i < length; ++i) {
    if (unicode && random.Chance(0.1)) {
      out += kUnicode[random.Uniform(0, 4)];
    } else {
      out += kAlphabet[random.Uniform(0, sizeof kAlphabet - 2)];
    }
  }
  return out;
}

std::int64_t TextLength(const SqlType& t, Random& random) {
  using K = SqlTypeKind;
  if (t.max_length < 0 || t.IsOneOf({K::kText, K::kNText, K::kXml, K::kImage})) {
    return random.Uniform(50, 2000);  // LOBs get longer values
  }
  if (t.IsOneOf({K::kChar, K::kNChar, K::kBinary})) return t.max_length;
  return random.Uniform(1, std::min<std::int64_t>(t.max_length, 30));
}

std::string Digits(Random& random, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += static_cast<char>('0' + random.Uniform(0, 9));
  return out;
}

std::string TimeText(std::int64_t seconds, std::int64_t fraction7) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld.%07lld", static_cast<long long>(seconds / 3600),
                static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60),
                static_cast<long long>(fraction7));
  return buf;
}

std::string GuidText(std::uint64_t hi, std::uint64_t lo) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llX-%04llX-%04llX-%04llX-%012llX",
                static_cast<unsigned long long>(hi >> 32),
                static_cast<unsigned long long>((hi >> 16) & 0xFFFF),
                static_cast<unsigned long long>(hi & 0xFFFF),
                static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

}  // namespace

Value RandomValue(const SqlType& t, Random& random) {
  using K = SqlTypeKind;
  const K n = t.kind();
  if (n == K::kBit) return Value(random.Uniform(0, 1));
  if (n == K::kTinyInt) return Value(random.Uniform(0, 255));
  if (n == K::kSmallInt) return Value(random.Uniform(-32768, 32767));
  if (n == K::kInt) return Value(random.Uniform(-1'000'000, 1'000'000));
  if (n == K::kBigInt) return Value(random.Uniform(-1'000'000'000'000, 1'000'000'000'000));
  if (n == K::kReal || n == K::kFloat) return Value(random.Unit() * 2e6 - 1e6);
  if (t.family() == SqlTypeFamily::kDecimal) {
    int int_digits = std::min(t.precision - t.scale, 12);
    if (n == K::kSmallMoney) int_digits = 5;
    std::string text = random.Chance(0.2) ? "-" : "";
    text += int_digits > 0 ? Digits(random, int_digits) : "0";
    if (t.scale > 0) text += "." + Digits(random, t.scale);
    return Value(text);
  }
  const std::int64_t day = DaysFromCivil(2000, 1, 1) + random.Uniform(0, 12000);
  const std::int64_t second = random.Uniform(0, 86399);
  const std::int64_t fraction = random.Uniform(0, 9'999'999);
  if (n == K::kDate) return Value(FormatDate(day));
  if (n == K::kTime) return Value(TimeText(second, fraction));
  if (t.IsOneOf({K::kDateTime, K::kDateTime2, K::kSmallDateTime})) {
    return Value(FormatDate(day) + " " + TimeText(second, fraction));
  }
  if (n == K::kDateTimeOffset) {
    const std::int64_t quarter_hours = random.Uniform(-48, 56);
    char offset[64];
    std::snprintf(offset, sizeof offset, " %c%02lld:%02lld", quarter_hours < 0 ? '-' : '+',
                  static_cast<long long>(std::abs(quarter_hours) / 4),
                  static_cast<long long>(std::abs(quarter_hours) % 4 * 15));
    return Value(FormatDate(day) + " " + TimeText(second, fraction) + offset);
  }
  if (n == K::kChar || n == K::kVarChar || n == K::kText) {
    return Value(RandomText(random, TextLength(t, random), false));
  }
  if (n == K::kNChar || n == K::kNVarChar || n == K::kNText) {
    // nchar pads to its length; leave room so padding never meets a multi-byte character.
    return Value(RandomText(random, TextLength(t, random), n != K::kNChar));
  }
  if (n == K::kXml) {
    return Value("<v>" + RandomText(random, TextLength(t, random), false) + "</v>");
  }
  if (n == K::kUniqueIdentifier) return Value(GuidText(random.Next(), random.Next()));
  if (n == K::kBinary || n == K::kVarBinary || n == K::kImage) {
    std::string bytes;
    const std::int64_t length = TextLength(t, random);
    for (std::int64_t i = 0; i < length; ++i) bytes += static_cast<char>(random.Uniform(0, 255));
    return Value(Bytes{bytes});
  }
  return Value();
}

Value KeyValue(const SqlType& t, std::int64_t k) {
  using K = SqlTypeKind;
  const K n = t.kind();
  if (n == K::kBit) return Value(k % 2);
  if (n == K::kTinyInt) return Value(k % 256);
  if (n == K::kSmallInt) return Value(k % 32768);
  if (n == K::kInt) return Value(static_cast<std::int64_t>(k % 2147483648LL));
  if (n == K::kBigInt) return Value(k);
  if (n == K::kReal || n == K::kFloat) return Value(static_cast<double>(k));
  if (t.family() == SqlTypeFamily::kDecimal) {
    std::string text = std::to_string(k);
    const int room = n == K::kSmallMoney ? 5 : std::min(t.precision - t.scale, 15);
    if (static_cast<int>(text.size()) > room) text = text.substr(text.size() - static_cast<std::size_t>(room));
    return Value(text.empty() ? "0" : text);
  }
  if (n == K::kDate) return Value(FormatDate(DaysFromCivil(2000, 1, 1) + k % 2'900'000));
  if (n == K::kTime) return Value(TimeText(k % 86400, 0));
  if (t.IsOneOf({K::kDateTime, K::kDateTime2, K::kSmallDateTime, K::kDateTimeOffset})) {
    const std::int64_t unit = n == K::kSmallDateTime ? 60 : 1;
    const std::int64_t seconds = k * unit;
    return Value(FormatDate(DaysFromCivil(2000, 1, 1) + seconds / 86400) + " " +
                 TimeText(seconds % 86400, 0));
  }
  if (n == K::kUniqueIdentifier) return Value(GuidText(0, static_cast<std::uint64_t>(k)));
  if (n == K::kBinary || n == K::kVarBinary) {
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[7 - static_cast<std::size_t>(i)] = static_cast<char>((k >> (8 * i)) & 0xFF);
    if (t.max_length > 0 && t.max_length < 8) bytes = bytes.substr(8 - static_cast<std::size_t>(t.max_length));
    return Value(Bytes{bytes});
  }
  // Character types: "k" and the number, cut from the left to fit.
  std::string text = "k" + std::to_string(k);
  if (t.max_length > 0 && static_cast<int>(text.size()) > t.max_length) {
    text = text.substr(text.size() - static_cast<std::size_t>(t.max_length));
  }
  return Value(text);
}

}  // namespace mssql_cdc::sim
