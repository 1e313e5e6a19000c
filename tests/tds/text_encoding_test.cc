#include "tds/text_encoding.h"

#include <gtest/gtest.h>

#include "tds/wire_buffer.h"
#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

using testing::Hex;

std::string ToUtf16(std::string_view utf8) {
  std::string out(2 * utf8.size(), '\0');
  std::ptrdiff_t n = Utf8ToUtf16(utf8, reinterpret_cast<std::uint8_t*>(out.data()));
  if (n < 0) return "INVALID";
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string ToCp1252(std::string_view utf8) {
  std::string out(utf8.size(), '\0');
  std::ptrdiff_t n = Utf8ToCp1252(utf8, reinterpret_cast<std::uint8_t*>(out.data()));
  if (n < 0) return "INVALID";
  out.resize(static_cast<std::size_t>(n));
  return out;
}

TEST(TextEncoding, Utf16RoundTripIncludingSurrogatePairs) {
  // "aé€😀": 1-, 2-, 3- and 4-byte UTF-8; the last is a surrogate pair in UTF-16.
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  EXPECT_BYTES("61 00 E9 00 AC 20 3D D8 00 DE", ToUtf16(text));
  EXPECT_EQ(text, Utf16ToUtf8(ToUtf16(text)));
  EXPECT_EQ(5u, Utf16Length(text));
}

TEST(TextEncoding, InvalidUtf8IsReported) {
  EXPECT_EQ("INVALID", ToUtf16("a\xC3"));          // truncated sequence
  EXPECT_EQ("INVALID", ToUtf16("\xC0\x80"));       // overlong NUL
  EXPECT_EQ("INVALID", ToUtf16("\xED\xA0\x80"));   // an encoded surrogate
  EXPECT_EQ("INVALID", ToCp1252("\xFF"));
}

TEST(TextEncoding, UnpairedSurrogateBecomesReplacementCharacter) {
  EXPECT_EQ("x\xEF\xBF\xBDy", Utf16ToUtf8(Hex("78 00 3D D8 79 00")));
}

TEST(TextEncoding, Cp1252MapsLatin1AndTheEuroAndReplacesTheRest) {
  EXPECT_BYTES("41 E9 80 8A 3F 3F 3F", ToCp1252("A\xC3\xA9\xE2\x82\xAC\xC5\xA0\xE4\xB8\xAD"
                                               "\xF0\x9F\x98\x80"));
  EXPECT_EQ("A\xC3\xA9\xE2\x82\xAC\xC5\xA0", Cp1252ToUtf8(Hex("41 E9 80 8A")));
}

TEST(TextEncoding, PutUtf16ReplacesInvalidBytes) {
  WireBuffer buffer;
  buffer.PutUtf16("a\xFF");
  EXPECT_BYTES("61 00 FD FF", buffer.view());
}

}  // namespace
}  // namespace mssql_cdc::tds
