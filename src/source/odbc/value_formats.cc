#include "source/odbc/value_formats.h"

#include <cstdint>

namespace mssql_cdc::odbc {
namespace {

constexpr char kHexDigits[] = "0123456789ABCDEF";

void PutHex(std::uint64_t value, int digits, char* out) {
  for (int i = digits - 1; i >= 0; --i) {
    out[i] = kHexDigits[value & 0xF];
    value >>= 4;
  }
}

void PutDecimal(unsigned value, int digits, char* out) {
  for (int i = digits - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

}  // namespace

void FormatGuid(const SQLGUID& g, char* out) {
  PutHex(g.Data1, 8, out);
  out[8] = '-';
  PutHex(g.Data2, 4, out + 9);
  out[13] = '-';
  PutHex(g.Data3, 4, out + 14);
  out[18] = '-';
  PutHex(g.Data4[0], 2, out + 19);
  PutHex(g.Data4[1], 2, out + 21);
  out[23] = '-';
  for (int i = 0; i < 6; ++i) PutHex(g.Data4[2 + i], 2, out + 24 + 2 * i);
}

void FormatTime(const SsTime2& t, char* out) {
  PutDecimal(t.hour, 2, out);
  out[2] = ':';
  PutDecimal(t.minute, 2, out + 3);
  out[5] = ':';
  PutDecimal(t.second, 2, out + 6);
  out[8] = '.';
  PutDecimal(t.fraction / 100, 7, out + 9);
}

}  // namespace mssql_cdc::odbc
