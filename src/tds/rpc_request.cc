#include "tds/rpc_request.h"

#include <cctype>
#include <cstdio>
#include <cstring>

#include "tds/requests.h"
#include "tds/text_encoding.h"
#include "tds/tokens.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

constexpr std::uint16_t kProcIdSwitch = 0xFFFF;
constexpr std::uint8_t kBatchFlag = 0xFF;
constexpr std::uint8_t kNoExecFlag = 0xFE;
constexpr std::uint8_t kByRefValue = 0x01;

constexpr std::uint16_t kUnknownLength = 0xFFFF;

struct KnownProc {
  std::uint16_t id;
  const char* name;
};
constexpr KnownProc kKnownProcs[] = {
    {proc::kExecuteSql, "sp_executesql"}, {proc::kPrepare, "sp_prepare"},
    {proc::kExecute, "sp_execute"},       {proc::kPrepExec, "sp_prepexec"},
    {proc::kUnprepare, "sp_unprepare"},
};

// "sp_execute", "sys.sp_execute", "[sys].[sp_execute]", "master..sp_execute": the bare
// lower-case name.
std::string BareProcName(std::string_view name) {
  std::string bare;
  auto dot = name.find_last_of('.');
  if (dot != std::string_view::npos) name = name.substr(dot + 1);
  for (char c : name) {
    if (c == '[' || c == ']') continue;
    bare.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return bare;
}

SqlType Type(std::string name, int max_length = 0, int precision = 0, int scale = 0) {
  SqlType t;
  t.name = std::move(name);
  t.max_length = max_length;
  t.precision = precision;
  t.scale = scale;
  return t;
}

std::int64_t SignedLittleEndian(std::string_view bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes[i])) << (8 * i);
  }
  const int bits = static_cast<int>(bytes.size()) * 8;
  if (bits < 64 && (v >> (bits - 1)) & 1) v |= ~0ULL << bits;  // sign-extend
  return static_cast<std::int64_t>(v);
}

void SetInt(ParamValue* out, std::string_view bytes, bool is_unsigned) {
  out->kind = ParamValue::Kind::kInt;
  out->int_value = is_unsigned ? static_cast<std::uint8_t>(bytes[0]) : SignedLittleEndian(bytes);
}

void SetFloat(ParamValue* out, std::string_view bytes) {
  out->kind = ParamValue::Kind::kFloat;
  if (bytes.size() == 4) {
    float f;
    std::memcpy(&f, bytes.data(), 4);
    out->float_value = f;
  } else {
    double d;
    std::memcpy(&d, bytes.data(), 8);
    out->float_value = d;
  }
}

// A PLP value: 8-byte total length (all ones: NULL), then chunks up to a zero-length one.
bool ReadPlp(WireReader& reader, std::string* out) {
  const std::uint64_t total = reader.U64();
  if (total == kPlpNull) return false;
  out->clear();
  if (total != ~1ULL && total <= reader.remaining()) out->reserve(total);
  while (true) {
    const std::uint32_t chunk = reader.U32();
    if (chunk == 0) break;
    out->append(reader.Bytes(chunk));
  }
  return true;
}

enum class ValueText { kBytes, kCodePage, kUtf16 };

// Reads a USHORTLEN (or PLP when max) value; false for NULL.
bool ReadShortLenValue(WireReader& reader, bool plp, std::string* bytes) {
  if (plp) return ReadPlp(reader, bytes);
  const std::uint16_t length = reader.U16();
  if (length == kUnknownLength) return false;
  *bytes = std::string(reader.Bytes(length));
  return true;
}

void SetTextOrBinary(ParamValue* out, std::string bytes, ValueText form) {
  switch (form) {
    case ValueText::kBytes:
      out->kind = ParamValue::Kind::kBinary;
      out->text = std::move(bytes);
      break;
    case ValueText::kCodePage:
      out->kind = ParamValue::Kind::kText;
      out->text = Cp1252ToUtf8(bytes);
      break;
    case ValueText::kUtf16:
      out->kind = ParamValue::Kind::kText;
      out->text = Utf16ToUtf8(bytes);
      break;
  }
}

}  // namespace

void ReadParameterValue(WireReader& reader, ParamValue* out) {
  out->kind = ParamValue::Kind::kNull;
  out->int_value = 0;
  out->float_value = 0;
  out->text.clear();
  const std::uint8_t type = reader.U8();

  // Fixed-length types: no length anywhere, never NULL.
  auto fixed = [&](const char* name, std::size_t size, ParamValue::Kind kind) {
    out->type = Type(name);
    std::string_view bytes = reader.Bytes(size);
    if (kind == ParamValue::Kind::kInt) {
      SetInt(out, bytes, size == 1 && std::strcmp(name, "tinyint") == 0);
      if (std::strcmp(name, "bit") == 0) out->int_value = out->int_value != 0;
    } else if (kind == ParamValue::Kind::kFloat) {
      SetFloat(out, bytes);
    } else {
      out->kind = ParamValue::Kind::kOther;
      out->text = std::string(bytes);
    }
  };
  // A BYTELEN value: a 1-byte length, then the bytes; false for NULL (length 0).
  auto byte_len_value = [&](std::string_view* bytes) {
    const std::uint8_t length = reader.U8();
    *bytes = reader.Bytes(length);
    return length != 0;
  };

  switch (type) {
    case 0x30: return fixed("tinyint", 1, ParamValue::Kind::kInt);
    case 0x32: return fixed("bit", 1, ParamValue::Kind::kInt);
    case 0x34: return fixed("smallint", 2, ParamValue::Kind::kInt);
    case 0x38: return fixed("int", 4, ParamValue::Kind::kInt);
    case 0x7F: return fixed("bigint", 8, ParamValue::Kind::kInt);
    case 0x3B: return fixed("real", 4, ParamValue::Kind::kFloat);
    case 0x3E:
      fixed("float", 8, ParamValue::Kind::kFloat);
      out->type.max_length = 53;
      return;
    case 0x3A: return fixed("smalldatetime", 4, ParamValue::Kind::kOther);
    case 0x3D:
      fixed("datetime", 8, ParamValue::Kind::kOther);
      out->type.scale = 3;
      return;
    case 0x3C:
      fixed("money", 8, ParamValue::Kind::kOther);
      out->type.precision = 19, out->type.scale = 4;
      return;
    case 0x7A:
      fixed("smallmoney", 4, ParamValue::Kind::kOther);
      out->type.precision = 10, out->type.scale = 4;
      return;

    case 0x26: {  // INTN
      const std::uint8_t width = reader.U8();
      if (width != 1 && width != 2 && width != 4 && width != 8) {
        reader.Fail("INTN parameter of width " + std::to_string(width));
      }
      out->type = Type(width == 1 ? "tinyint" : width == 2 ? "smallint" : width == 4 ? "int"
                                                                                    : "bigint");
      std::string_view bytes;
      if (byte_len_value(&bytes)) SetInt(out, bytes, width == 1);
      return;
    }
    case 0x68: {  // BITN
      reader.U8();
      out->type = Type("bit");
      std::string_view bytes;
      if (byte_len_value(&bytes)) {
        out->kind = ParamValue::Kind::kInt;
        out->int_value = bytes[0] != 0;
      }
      return;
    }
    case 0x6D: {  // FLTN
      const std::uint8_t width = reader.U8();
      out->type = width == 4 ? Type("real") : Type("float", 53);
      std::string_view bytes;
      if (byte_len_value(&bytes)) {
        if (bytes.size() != 4 && bytes.size() != 8) reader.Fail("FLTN value length");
        SetFloat(out, bytes);
      }
      return;
    }
    case 0x6E:    // MONEYN
    case 0x6F:    // DATETIMN
    case 0x24: {  // GUID
      const std::uint8_t width = reader.U8();
      if (type == 0x6E) {
        out->type = width == 4 ? Type("smallmoney", 0, 10, 4) : Type("money", 0, 19, 4);
      } else if (type == 0x6F) {
        out->type = width == 4 ? Type("smalldatetime") : Type("datetime", 0, 0, 3);
      } else {
        out->type = Type("uniqueidentifier");
      }
      std::string_view bytes;
      if (byte_len_value(&bytes)) {
        out->kind = ParamValue::Kind::kOther;
        out->text = std::string(bytes);
      }
      return;
    }
    case 0x37:    // DECIMAL (legacy)
    case 0x3F:    // NUMERIC (legacy)
    case 0x6A:    // DECIMALN
    case 0x6C: {  // NUMERICN
      reader.U8();  // max length
      const int precision = reader.U8();
      const int scale = reader.U8();
      out->type = Type(type == 0x6A || type == 0x37 ? "decimal" : "numeric", 0, precision, scale);
      std::string_view bytes;
      if (byte_len_value(&bytes)) {
        out->kind = ParamValue::Kind::kOther;
        out->text = std::string(bytes);
      }
      return;
    }
    case 0x28:    // DATE
    case 0x29:    // TIME
    case 0x2A:    // DATETIME2
    case 0x2B: {  // DATETIMEOFFSET
      int scale = 0;
      if (type != 0x28) scale = reader.U8();
      if (scale > 7) reader.Fail("fractional-second scale " + std::to_string(scale));
      out->type = Type(type == 0x28   ? "date"
                       : type == 0x29 ? "time"
                       : type == 0x2A ? "datetime2"
                                      : "datetimeoffset",
                       0, 0, scale);
      std::string_view bytes;
      if (byte_len_value(&bytes)) {
        out->kind = ParamValue::Kind::kOther;
        out->text = std::string(bytes);
      }
      return;
    }

    case 0xA5:    // BIGVARBINARY
    case 0xAD:    // BIGBINARY
    case 0xA7:    // BIGVARCHAR
    case 0xAF:    // BIGCHAR
    case 0xE7:    // NVARCHAR
    case 0xEF: {  // NCHAR
      const std::uint16_t max_length = reader.U16();
      const bool is_char = type == 0xA7 || type == 0xAF;
      const bool is_nchar = type == 0xE7 || type == 0xEF;
      if (is_char || is_nchar) reader.Skip(5);  // collation
      const bool plp = max_length == kUnknownLength;
      const char* name = type == 0xA5   ? "varbinary"
                         : type == 0xAD ? "binary"
                         : type == 0xA7 ? "varchar"
                         : type == 0xAF ? "char"
                         : type == 0xE7 ? "nvarchar"
                                        : "nchar";
      int declared = plp ? -1 : (is_nchar ? max_length / 2 : max_length);
      out->type = Type(name, declared);
      std::string bytes;
      if (ReadShortLenValue(reader, plp, &bytes)) {
        SetTextOrBinary(out, std::move(bytes), is_nchar  ? ValueText::kUtf16
                                               : is_char ? ValueText::kCodePage
                                                         : ValueText::kBytes);
      }
      return;
    }
    case 0x22:    // IMAGE
    case 0x23:    // TEXT
    case 0x63: {  // NTEXT
      reader.U32();  // max length
      if (type != 0x22) reader.Skip(5);  // collation
      out->type = Type(type == 0x22 ? "image" : type == 0x23 ? "text" : "ntext");
      const std::uint32_t length = reader.U32();
      if (length == 0xFFFFFFFFu) return;
      SetTextOrBinary(out, std::string(reader.Bytes(length)),
                      type == 0x63   ? ValueText::kUtf16
                      : type == 0x23 ? ValueText::kCodePage
                                     : ValueText::kBytes);
      return;
    }
    case 0xF1: {  // XML: an optional schema collection, then a PLP UTF-16 value
      if (reader.U8() != 0) {
        reader.BVarChar();   // database
        reader.BVarChar();   // owning schema
        reader.UsVarChar();  // schema collection
      }
      out->type = Type("xml");
      std::string bytes;
      if (ReadPlp(reader, &bytes)) SetTextOrBinary(out, std::move(bytes), ValueText::kUtf16);
      return;
    }
    default: {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", type);
      reader.Fail(std::string("parameter of TDS type ") + hex +
                  ", which this server does not read (sql_variant, UDT, table-valued?)");
    }
  }
}

std::vector<RpcCall> ParseRpcRequest(std::string_view payload) {
  WireReader reader(SkipAllHeaders(payload, "RPC"), "RPC");
  std::vector<RpcCall> calls;
  while (!reader.AtEnd()) {
    RpcCall call;
    const std::uint16_t name_length = reader.U16();
    if (name_length == kProcIdSwitch) {
      call.proc_id = reader.U16();
      for (const KnownProc& known : kKnownProcs) {
        if (known.id == call.proc_id) call.proc_name = known.name;
      }
      if (call.proc_name.empty()) call.proc_name = "proc id " + std::to_string(call.proc_id);
    } else {
      call.proc_name = Utf16ToUtf8(reader.Bytes(2 * std::size_t{name_length}));
      const std::string bare = BareProcName(call.proc_name);
      for (const KnownProc& known : kKnownProcs) {
        if (bare == known.name) call.proc_id = known.id;
      }
    }
    reader.U16();  // option flags: recompile, no metadata; neither changes the answer
    while (!reader.AtEnd() && reader.PeekU8() != kBatchFlag && reader.PeekU8() != kNoExecFlag) {
      RpcParameter param;
      param.value.name = reader.BVarChar();
      param.output = (reader.U8() & kByRefValue) != 0;
      ReadParameterValue(reader, &param.value);
      call.params.push_back(std::move(param));
    }
    if (!reader.AtEnd()) call.no_exec = reader.U8() == kNoExecFlag;
    calls.push_back(std::move(call));
  }
  if (calls.empty()) reader.Fail("no procedure call");
  return calls;
}

}  // namespace mssql_cdc::tds
