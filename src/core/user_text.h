// User-given text shown inside a message, so that a message is always one readable line.
//
// QuoteUserText quotes the text and escapes what a terminal or a log would misread: control
// characters and NUL as \n, \t, \0 or \xNN, bytes that are not UTF-8 as \xNN, the quote and
// the backslash as \' and \\. Text longer than `max_chars` is cut there and its length given,
// so a megabyte value cannot flood a log line. Never pass it a secret: it shows what it gets.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mssql_cdc {

inline constexpr std::size_t kUserTextShown = 80;
// Paths and URIs are shown whole: the part that tells one from another is often the end.
inline constexpr std::size_t kPathShown = 4096;

// 'text' escaped; "'<first max_chars characters>...' (N bytes)" when longer.
std::string QuoteUserText(std::string_view text, std::size_t max_chars = kUserTextShown);

}  // namespace mssql_cdc
