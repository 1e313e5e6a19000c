// Encoders of the reply tokens other than result sets (MS-TDS 2.2.7): DONE and its procedure
// variants, ENVCHANGE, INFO and ERROR, LOGINACK, RETURNSTATUS and RETURNVALUE.
//
// Each appends one complete token to a WireBuffer with the TDS 7.2+ widths (8-byte DONE row
// counts, 4-byte line numbers); length fields are computed from what was written, so they
// are exact, which FreeTDS relies on for LOGINACK.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {

// SQL_Latin1_General_CP1_CI_AS: LCID 0x0409, flags 0xD0 (ignore case, kana, width), sort
// id 52. Sent at login and with every char column and parameter.
// The total length that stands for a NULL (max) value sent as PLP chunks.
inline constexpr std::uint64_t kPlpNull = ~0ULL;

inline constexpr std::string_view kServerCollation{"\x09\x04\xD0\x00\x34", 5};

struct DoneToken {
  std::uint8_t type = 0xFD;  // DONE, DONEPROC (0xFE) or DONEINPROC (0xFF)
  std::uint16_t status = 0;
  std::uint16_t current_command = 0;
  std::uint64_t row_count = 0;
};
void WriteDone(WireBuffer& out, const DoneToken& done);

enum class EnvChange : std::uint8_t {
  kDatabase = 1,
  kLanguage = 2,
  kPacketSize = 4,
  kCollation = 7,
  kBeginTransaction = 8,
  kCommitTransaction = 9,
  kRollbackTransaction = 10,
};
// Types whose values are B_VARCHAR text (database, language, packet size).
void WriteEnvChangeText(WireBuffer& out, EnvChange type, std::string_view new_value,
                        std::string_view old_value);
// Types whose values are B_VARBYTE (collation, transaction descriptors); empty is 0x00.
void WriteEnvChangeBytes(WireBuffer& out, EnvChange type, std::string_view new_value,
                         std::string_view old_value);

struct MessageToken {
  std::int32_t number = 0;
  std::uint8_t state = 1;
  std::uint8_t severity = 0;  // "class": 0-10 informational, 11+ errors
  std::string text;
  std::string server_name;
  std::string procedure_name;
  std::int32_t line = 0;
};
void WriteInfo(WireBuffer& out, const MessageToken& message);
void WriteError(WireBuffer& out, const MessageToken& message);

// LOGINACK for the SQL interface; `version` is the server's major.minor.build.
void WriteLoginAck(WireBuffer& out, std::uint32_t tds_version, std::string_view program_name,
                   std::uint8_t major, std::uint8_t minor, std::uint16_t build);

// FEATUREEXTACK (TDS 7.4) acknowledging one feature of the LOGIN7 FeatureExt, without data.
void WriteFeatureExtAck(WireBuffer& out, std::uint8_t feature_id);

void WriteReturnStatus(WireBuffer& out, std::int32_t status);
// RETURNVALUE of an int OUTPUT parameter (the handle of sp_prepexec and sp_prepare).
void WriteReturnValueInt(WireBuffer& out, std::uint16_t ordinal, std::string_view name,
                         std::int32_t value);

}  // namespace mssql_cdc::tds
