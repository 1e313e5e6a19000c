#include "sim_server/tsql/functions.h"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "core/ascii.h"
#include "core/time.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/tsql/catalog_views.h"
#include "sim_server/tsql/sqlite_text.h"

namespace mssql_cdc::sim_server::tsql {
namespace {

// ---- SQLite functions over the session ----

Session& SessionOf(sqlite3_context* context) {
  return *static_cast<Session*>(sqlite3_user_data(context));
}

void ResultLsn(sqlite3_context* context, const std::optional<Lsn>& lsn) {
  if (!lsn) return sqlite3_result_null(context);
  sqlite3_result_blob(context, lsn->data(), static_cast<int>(Lsn::kSize), SQLITE_TRANSIENT);
}

std::optional<Lsn> LsnArgument(sqlite3_value* value) {
  if (sqlite3_value_type(value) != SQLITE_BLOB) return std::nullopt;
  std::string bytes(static_cast<const char*>(sqlite3_value_blob(value)),
                    static_cast<std::size_t>(sqlite3_value_bytes(value)));
  if (bytes.size() > Lsn::kSize) return std::nullopt;
  bytes.resize(Lsn::kSize, '\0');
  return Lsn::FromBytes(bytes.data(), bytes.size());
}

std::string TextArgument(sqlite3_value* value) {
  const auto* text = sqlite3_value_text(value);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text),
                                                       static_cast<std::size_t>(sqlite3_value_bytes(value)));
}

// Exceptions must not cross SQLite's C frames: each function reports them as SQLite errors,
// which the statement then fails with.
template <typename F>
void Guarded(sqlite3_context* context, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}

void MaxLsn(sqlite3_context* context, int, sqlite3_value**) {
  Guarded(context, [&] { ResultLsn(context, SessionOf(context).source().MaxLsn()); });
}

// Zero, not NULL, for an unknown instance and one the login may not read, as SQL Server's.
void MinLsn(sqlite3_context* context, int, sqlite3_value** argv) {
  Guarded(context, [&] {
    Session& session = SessionOf(context);
    Lsn min_lsn;
    if (sqlite3_value_type(argv[0]) != SQLITE_NULL) {
      const auto instance = FindCaptureInstance(session.catalog(), TextArgument(argv[0]));
      if (instance && session.access().CanReadChangeTable(instance->name)) {
        min_lsn = session.source().MinLsn(instance->name);
      }
    }
    ResultLsn(context, min_lsn);
  });
}

void LsnStep(sqlite3_context* context, int, sqlite3_value** argv) {
  Guarded(context, [&] {
    const auto lsn = LsnArgument(argv[0]);
    if (!lsn) return sqlite3_result_null(context);
    ResultLsn(context, sqlite3_value_int(argv[1]) > 0 ? lsn->Increment() : lsn->Decrement());
  });
}

// The tran_end_time of the last lsn_time_mapping entry at or before the LSN.
void LsnTime(sqlite3_context* context, int, sqlite3_value** argv) {
  Guarded(context, [&] {
    const auto lsn = LsnArgument(argv[0]);
    const auto local = lsn ? SessionOf(context).source().CommitTimeAtOrBefore(*lsn) : std::nullopt;
    if (!local) return sqlite3_result_null(context);
    const std::string text = FormatDateTime(local->value, 3);
    sqlite3_result_text(context, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  });
}

void ObjectId(sqlite3_context* context, int, sqlite3_value** argv) {
  Guarded(context, [&] {
    Session& session = SessionOf(context);
    const auto name = ParseObjectName(TextArgument(argv[0]));
    if (!name) return sqlite3_result_null(context);
    if (EqualsIgnoringCase(name->schema, "cdc")) {
      if (const auto instance = FindChangeTable(session.catalog(), name->name)) {
        return sqlite3_result_int64(context, instance->object_id);
      }
    }
    if (const auto table = FindSourceTable(session.catalog(), name->schema, name->name)) {
      return sqlite3_result_int64(context, table->object_id);
    }
    sqlite3_result_null(context);
  });
}

// A binary value without its trailing zeros: two values compare as SQL Server compares
// binaries of different lengths (the shorter padded with zeros) once both are cut so.
void BinaryKey(sqlite3_context* context, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(context);
  const auto* bytes = static_cast<const unsigned char*>(sqlite3_value_blob(argv[0]));
  int size = sqlite3_value_bytes(argv[0]);
  while (size > 0 && bytes[size - 1] == 0) --size;
  sqlite3_result_blob(context, size == 0 ? "" : static_cast<const void*>(bytes), size, SQLITE_TRANSIENT);
}

// CONVERT(binary, text, 1 | 2): hex digits, with 0x for style 1.
void Unhex(sqlite3_context* context, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(context);
  std::string text = TextArgument(argv[0]);
  if (sqlite3_value_int(argv[1]) == 1) {
    if (text.size() < 2 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
      return sqlite3_result_error(context, "Error converting data type varchar to varbinary.", -1);
    }
    text = text.substr(2);
  }
  if (text.size() % 2 != 0) text.insert(text.begin(), '0');
  std::string bytes;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int high = HexDigitValue(text[i]);
    const int low = HexDigitValue(text[i + 1]);
    if (high < 0 || low < 0) return sqlite3_result_error(context, "Error converting data type varchar to varbinary.", -1);
    bytes += static_cast<char>(high * 16 + low);
  }
  sqlite3_result_blob(context, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
}

// SQL_Latin1_General_CP1_CI_AS for ASCII: case ignored, trailing spaces ignored.
int Compare(void*, int left_size, const void* left, int right_size, const void* right) {
  const auto* a = static_cast<const unsigned char*>(left);
  const auto* b = static_cast<const unsigned char*>(right);
  while (left_size > 0 && a[left_size - 1] == ' ') --left_size;
  while (right_size > 0 && b[right_size - 1] == ' ') --right_size;
  const int common = std::min(left_size, right_size);
  for (int i = 0; i < common; ++i) {
    int x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x += 'a' - 'A';
    if (y >= 'A' && y <= 'Z') y += 'a' - 'A';
    if (x != y) return x < y ? -1 : 1;
  }
  return left_size == right_size ? 0 : left_size < right_size ? -1 : 1;
}

// ---- translations ----

Typed Call(std::string sql, const SqlType& type, bool nullable = true) {
  return {std::move(sql), type, "", nullable};
}

void Arity(const Expr& call, std::size_t low, std::size_t high) {
  if (call.args.size() < low || call.args.size() > high) {
    throw SqlError(tds::ServerError{174, 1, 15,
                                    "The " + call.names.back() + " function requires " +
                                        std::to_string(low) + " argument(s)."});
  }
}

std::string Args(FunctionContext& context, const Expr& call, std::vector<Typed>* typed = nullptr) {
  std::string sql;
  for (const Expr& arg : call.args) {
    Typed t = context.translate(arg);
    sql += (sql.empty() ? "" : ", ") + t.sql;
    if (typed != nullptr) typed->push_back(std::move(t));
  }
  return sql;
}

std::string Over(FunctionContext& context, const Expr& call) {
  if (!call.over) return "";
  std::string sql = " OVER (";
  if (!call.partition_by.empty()) {
    sql += "PARTITION BY ";
    for (std::size_t i = 0; i < call.partition_by.size(); ++i) {
      sql += (i == 0 ? "" : ", ") + context.translate(call.partition_by[i]).sql;
    }
  }
  if (!call.order_by.empty()) {
    sql += call.partition_by.empty() ? "ORDER BY " : " ORDER BY ";
    for (std::size_t i = 0; i < call.order_by.size(); ++i) {
      const Typed t = context.translate(call.order_by[i].expr);
      sql += (i == 0 ? "" : ", ") + t.sql + (IsCharacter(t.type) ? std::string(" COLLATE ") + kCollation : "") +
             (call.order_by[i].descending ? " DESC" : "");
    }
  }
  return sql + ")";
}

std::string DatabaseNames(Session& session, const std::string& id_sql) {
  return "CASE " + id_sql + " WHEN 1 THEN 'master' WHEN 2 THEN 'tempdb' WHEN 3 THEN 'model' WHEN 4 THEN 'msdb' "
         "WHEN " + std::to_string(kDatabaseId) + " THEN " + SqlString(session.database_name()) + " END";
}

std::string DatabaseIds(Session& session, const std::string& name_sql) {
  return "CASE lower(" + name_sql + ") WHEN 'master' THEN 1 WHEN 'tempdb' THEN 2 WHEN 'model' THEN 3 "
         "WHEN 'msdb' THEN 4 WHEN " + SqlString(AsciiLower(session.database_name())) + " THEN " +
         std::to_string(kDatabaseId) + " END";
}

// OBJECT_NAME(id[, database_id]) and OBJECT_SCHEMA_NAME: tables and change tables of this
// database; NULL for another database.
Typed ObjectNamePart(FunctionContext& context, const Expr& call, bool schema) {
  Arity(call, 1, 2);
  const std::string id = context.translate(call.args[0]).sql;
  std::string sql = schema ? "(SELECT schema_name FROM sim_tables WHERE object_id = " + id +
                                 " UNION ALL SELECT 'cdc' FROM cdc_change_tables WHERE object_id = " + id + ")"
                           : "(SELECT table_name FROM sim_tables WHERE object_id = " + id +
                                 " UNION ALL SELECT capture_instance || '_CT' FROM cdc_change_tables WHERE "
                                 "object_id = " + id + ")";
  if (call.args.size() == 2) {
    sql = "CASE WHEN " + context.translate(call.args[1]).sql + " = " + std::to_string(kDatabaseId) + " THEN " +
          sql + " END";
  }
  return Call(sql, types::Sysname());
}

Typed Aggregate(FunctionContext& context, const Expr& call, const std::string& name) {
  const std::string distinct = call.distinct ? "DISTINCT " : "";
  if (name == "count" || name == "count_big") {
    const std::string arg = call.star ? "*" : distinct + Args(context, call);
    return Call("count(" + arg + ")" + Over(context, call), name == "count" ? types::Int() : types::Bigint(), false);
  }
  Arity(call, 1, 1);
  std::vector<Typed> args;
  const std::string arg = Args(context, call, &args);
  const SqlType& type = args[0].type;
  if (name == "min" || name == "max") {
    const std::string collated = IsCharacter(type) ? arg + " COLLATE " + kCollation : arg;
    return Call(name + "(" + distinct + collated + ")" + Over(context, call), type);
  }
  SqlType result = type;
  if (type.family() == SqlTypeFamily::kInteger) result = type.name == "bigint" ? types::Bigint() : types::Int();
  if (type.family() == SqlTypeFamily::kDecimal) result = SqlType::Parse("decimal(38," + std::to_string(type.scale) + ")");
  if (type.family() == SqlTypeFamily::kFloatingPoint) result = SqlType::Parse("float");
  const std::string sqlite = name == "sum" ? "sum" : "avg";
  std::string sql = sqlite + "(" + distinct + arg + ")" + Over(context, call);
  if (name == "avg" && type.family() == SqlTypeFamily::kInteger) sql = "CAST(" + sql + " AS INTEGER)";
  return Call(sql, result);
}

}  // namespace

Typed TranslateFunction(FunctionContext& context, const Expr& call) {
  const Name& names = call.names;
  const std::string name = AsciiLower(names.back());
  const bool sys = names.size() == 1 || (names.size() == 2 && EqualsIgnoringCase(names[0], "sys"));
  Session& session = context.session;

  if (sys && name == "fn_cdc_get_max_lsn") {
    Arity(call, 0, 0);
    return Call("tsql_max_lsn()", types::Binary10());
  }
  if (sys && name == "fn_cdc_get_min_lsn") {
    Arity(call, 1, 1);
    return Call("tsql_min_lsn(" + Args(context, call) + ")", types::Binary10());
  }
  if (sys && (name == "fn_cdc_increment_lsn" || name == "fn_cdc_decrement_lsn")) {
    Arity(call, 1, 1);
    return Call("tsql_lsn_step(" + Args(context, call) + (name == "fn_cdc_increment_lsn" ? ", 1)" : ", -1)"),
                types::Binary10());
  }
  if (sys && name == "fn_cdc_map_lsn_to_time") {
    Arity(call, 1, 1);
    return Call("tsql_lsn_time(" + Args(context, call) + ")", types::Datetime());
  }
  if (names.size() == 1) {
    if (name == "object_id") {
      Arity(call, 1, 2);
      return Call("tsql_object_id(" + context.translate(call.args[0]).sql + ")", types::Int());
    }
    if (name == "object_name") return ObjectNamePart(context, call, false);
    if (name == "object_schema_name") return ObjectNamePart(context, call, true);
    if (name == "db_id") {
      Arity(call, 0, 1);
      return Call(call.args.empty() ? std::to_string(kDatabaseId) : DatabaseIds(session, Args(context, call)),
                  types::Int());
    }
    if (name == "db_name") {
      Arity(call, 0, 1);
      return Call(call.args.empty() ? SqlString(session.database_name()) : DatabaseNames(session, Args(context, call)),
                  types::Nvarchar(128));
    }
    if (name == "schema_id") {
      Arity(call, 0, 1);
      return Call(call.args.empty() ? "1" : SchemaIdSql(session, Args(context, call)), types::Int());
    }
    if (name == "count" || name == "count_big" || name == "min" || name == "max" || name == "sum" ||
        name == "avg") {
      return Aggregate(context, call, name);
    }
    if (name == "row_number" || name == "rank" || name == "dense_rank") {
      Arity(call, 0, 0);
      if (!call.over) {
        throw SqlError(tds::ServerError{10753, 1, 15,
                                        "The function '" + names.back() + "' must have an OVER clause."});
      }
      return Call(name + "()" + Over(context, call), types::Bigint(), false);
    }
    if (name == "isnull") {
      Arity(call, 2, 2);
      std::vector<Typed> args;
      const std::string sql = "ifnull(" + Args(context, call, &args) + ")";
      return Call(sql, args[0].type, args[1].nullable);
    }
    if (name == "coalesce") {
      std::vector<Typed> args;
      const std::string sql = "coalesce(" + Args(context, call, &args) + ")";
      if (args.size() < 2) Arity(call, 2, 1000);
      return Call(sql, args[0].type);
    }
    if (name == "nullif") {
      Arity(call, 2, 2);
      std::vector<Typed> args;
      const std::string sql = "nullif(" + Args(context, call, &args) + ")";
      return Call(sql, args[0].type);
    }
    if (name == "upper" || name == "lower" || name == "ltrim" || name == "rtrim") {
      Arity(call, 1, 1);
      std::vector<Typed> args;
      const std::string sql = name + "(" + Args(context, call, &args) + ")";
      return Call(sql, args[0].type);
    }
    if (name == "len") {
      Arity(call, 1, 1);
      return Call("length(rtrim(" + Args(context, call) + "))", types::Int());
    }
    if (name == "quotename") {
      Arity(call, 1, 1);
      const std::string arg = Args(context, call);
      return Call("('[' || replace(" + arg + ", ']', ']]') || ']')", types::Nvarchar(258));
    }
    if (name == "user_name" || name == "suser_name" || name == "suser_sname") {
      return Call(SqlString(session.login().name), types::Sysname());
    }
  }
  throw SqlError(tds::ServerError{195, 10, 15, "'" + names.back() + "' is not a recognized built-in function name."});
}

void RegisterQueryFunctions(Session& session) {
  if (session.query_functions_registered()) return;
  sqlite3* db = session.db().handle();
  void* data = &session;
  struct Entry {
    const char* name;
    int arity;
    void (*function)(sqlite3_context*, int, sqlite3_value**);
    bool deterministic;
  };
  static constexpr Entry kFunctions[] = {
      {"tsql_max_lsn", 0, MaxLsn, false},     {"tsql_min_lsn", 1, MinLsn, false},
      {"tsql_lsn_step", 2, LsnStep, true},    {"tsql_lsn_time", 1, LsnTime, false},
      {"tsql_object_id", 1, ObjectId, false}, {"tsql_binary_key", 1, BinaryKey, true},
      {"tsql_unhex", 2, Unhex, true},
  };
  for (const Entry& entry : kFunctions) {
    const int flags = SQLITE_UTF8 | (entry.deterministic ? SQLITE_DETERMINISTIC : 0);
    if (sqlite3_create_function_v2(db, entry.name, entry.arity, flags, data, entry.function, nullptr, nullptr,
                                   nullptr) != SQLITE_OK) {
      session.db().Fail("registering the query functions");
    }
  }
  if (sqlite3_create_collation_v2(db, kCollation, SQLITE_UTF8, nullptr, Compare, nullptr) != SQLITE_OK) {
    session.db().Fail("registering the tsql collation");
  }
  session.set_query_functions_registered();
}

}  // namespace mssql_cdc::sim_server::tsql
