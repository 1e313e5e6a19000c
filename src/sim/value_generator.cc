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
  if (t.max_length < 0 || t.name == "text" || t.name == "ntext" || t.name == "xml" ||
      t.name == "image") {
    return random.Uniform(50, 2000);  // LOBs get longer values
  }
  if (t.name == "char" || t.name == "nchar" || t.name == "binary") return t.max_length;
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
  const std::string& n = t.name;
  if (n == "bit") return Value(random.Uniform(0, 1));
  if (n == "tinyint") return Value(random.Uniform(0, 255));
  if (n == "smallint") return Value(random.Uniform(-32768, 32767));
  if (n == "int") return Value(random.Uniform(-1'000'000, 1'000'000));
  if (n == "bigint") return Value(random.Uniform(-1'000'000'000'000, 1'000'000'000'000));
  if (n == "real" || n == "float") return Value(random.Unit() * 2e6 - 1e6);
  if (n == "decimal" || n == "numeric" || n == "money" || n == "smallmoney") {
    int int_digits = std::min(t.precision - t.scale, 12);
    if (n == "smallmoney") int_digits = 5;
    std::string text = random.Chance(0.2) ? "-" : "";
    text += int_digits > 0 ? Digits(random, int_digits) : "0";
    if (t.scale > 0) text += "." + Digits(random, t.scale);
    return Value(text);
  }
  const std::int64_t day = DaysFromCivil(2000, 1, 1) + random.Uniform(0, 12000);
  const std::int64_t second = random.Uniform(0, 86399);
  const std::int64_t fraction = random.Uniform(0, 9'999'999);
  if (n == "date") return Value(FormatDate(day));
  if (n == "time") return Value(TimeText(second, fraction));
  if (n == "datetime" || n == "datetime2" || n == "smalldatetime") {
    return Value(FormatDate(day) + " " + TimeText(second, fraction));
  }
  if (n == "datetimeoffset") {
    const std::int64_t quarter_hours = random.Uniform(-48, 56);
    char offset[64];
    std::snprintf(offset, sizeof offset, " %c%02lld:%02lld", quarter_hours < 0 ? '-' : '+',
                  static_cast<long long>(std::abs(quarter_hours) / 4),
                  static_cast<long long>(std::abs(quarter_hours) % 4 * 15));
    return Value(FormatDate(day) + " " + TimeText(second, fraction) + offset);
  }
  if (n == "char" || n == "varchar" || n == "text") {
    return Value(RandomText(random, TextLength(t, random), false));
  }
  if (n == "nchar" || n == "nvarchar" || n == "ntext") {
    // nchar pads to its length; leave room so padding never meets a multi-byte character.
    return Value(RandomText(random, TextLength(t, random), n != "nchar"));
  }
  if (n == "xml") return Value("<v>" + RandomText(random, TextLength(t, random), false) + "</v>");
  if (n == "uniqueidentifier") return Value(GuidText(random.Next(), random.Next()));
  if (n == "binary" || n == "varbinary" || n == "image") {
    std::string bytes;
    const std::int64_t length = TextLength(t, random);
    for (std::int64_t i = 0; i < length; ++i) bytes += static_cast<char>(random.Uniform(0, 255));
    return Value(Bytes{bytes});
  }
  return Value();
}

Value KeyValue(const SqlType& t, std::int64_t k) {
  const std::string& n = t.name;
  if (n == "bit") return Value(k % 2);
  if (n == "tinyint") return Value(k % 256);
  if (n == "smallint") return Value(k % 32768);
  if (n == "int") return Value(static_cast<std::int64_t>(k % 2147483648LL));
  if (n == "bigint") return Value(k);
  if (n == "real" || n == "float") return Value(static_cast<double>(k));
  if (n == "decimal" || n == "numeric" || n == "money" || n == "smallmoney") {
    std::string text = std::to_string(k);
    const int room = n == "smallmoney" ? 5 : std::min(t.precision - t.scale, 15);
    if (static_cast<int>(text.size()) > room) text = text.substr(text.size() - static_cast<std::size_t>(room));
    return Value(text.empty() ? "0" : text);
  }
  if (n == "date") return Value(FormatDate(DaysFromCivil(2000, 1, 1) + k % 2'900'000));
  if (n == "time") return Value(TimeText(k % 86400, 0));
  if (n == "datetime" || n == "datetime2" || n == "smalldatetime" || n == "datetimeoffset") {
    const std::int64_t unit = n == "smalldatetime" ? 60 : 1;
    const std::int64_t seconds = k * unit;
    return Value(FormatDate(DaysFromCivil(2000, 1, 1) + seconds / 86400) + " " +
                 TimeText(seconds % 86400, 0));
  }
  if (n == "uniqueidentifier") return Value(GuidText(0, static_cast<std::uint64_t>(k)));
  if (n == "binary" || n == "varbinary") {
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
