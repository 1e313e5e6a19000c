#include "sim/catalog.h"

#include <algorithm>

#include "core/errors.h"
#include "sim/storage.h"

namespace mssql_cdc::sim {

std::optional<std::string> Catalog::GetMeta(std::string_view key) {
  Statement st(db_, "SELECT value FROM sim_meta WHERE key = ?");
  st.BindText(1, key);
  if (!st.Step()) return std::nullopt;
  return st.Text(0);
}

std::string Catalog::RequireMeta(std::string_view key) {
  auto value = GetMeta(key);
  if (!value) {
    throw SourceError("simulated database " + db_.path() + " is damaged: sim_meta has no '" +
                      std::string(key) + "'");
  }
  return *value;
}

void Catalog::SetMeta(std::string_view key, std::string_view value) {
  Statement st(db_, "INSERT INTO sim_meta(key, value) VALUES(?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  st.BindText(1, key).BindText(2, value).Run();
}

void Catalog::AddPendingEnable(std::int64_t object_id, const Lsn& start_lsn) {
  SetMeta(std::string(kMetaPendingEnablePrefix) + std::to_string(object_id), start_lsn.ToString());
}

void Catalog::ProcessPendingEnables() {
  Statement pending(db_, "SELECT key, value FROM sim_meta WHERE key >= ?1 AND key < ?2");
  const std::string prefix(kMetaPendingEnablePrefix);
  pending.BindText(1, prefix).BindText(2, prefix.substr(0, prefix.size() - 1) + ";");
  std::vector<std::pair<std::string, Lsn>> found;
  while (pending.Step()) found.emplace_back(pending.Text(0), Lsn::Parse(pending.Text(1)));
  for (const auto& [key, lsn] : found) {
    Statement start(db_, "UPDATE cdc_change_tables SET start_lsn = ? WHERE object_id = ?");
    start.BindBlob(1, lsn.data(), Lsn::kSize)
        .BindInt(2, std::stoll(key.substr(prefix.size())))
        .Run();
    Statement done(db_, "DELETE FROM sim_meta WHERE key = ?");
    done.BindText(1, key).Run();
  }
}

std::int64_t Catalog::NextObjectId() {
  const std::int64_t id = std::stoll(RequireMeta(kMetaNextObjectId));
  SetMeta(kMetaNextObjectId, std::to_string(id + 1));
  return id;
}

LsnSequence Catalog::LoadLsnSequence() {
  return LsnSequence(Lsn::Parse(RequireMeta(kMetaLastLsn)));
}

void Catalog::StoreLsnSequence(const LsnSequence& sequence) {
  SetMeta(kMetaLastLsn, sequence.last().ToString());
}

std::string Catalog::AllocateTranId() {
  const std::uint64_t id = std::stoull(RequireMeta(kMetaLastTranId)) + 1;
  SetMeta(kMetaLastTranId, std::to_string(id));
  std::string bytes(Lsn::kSize, '\0');
  for (int i = 0; i < 8; ++i) {
    bytes[Lsn::kSize - 1 - static_cast<std::size_t>(i)] = static_cast<char>((id >> (8 * i)) & 0xFF);
  }
  return bytes;
}

std::optional<TableInfo> Catalog::FindTable(const TableName& name) {
  Statement st(db_, "SELECT object_id, schema_name, table_name FROM sim_tables "
                    "WHERE schema_name = ? COLLATE NOCASE AND table_name = ? COLLATE NOCASE");
  st.BindText(1, name.schema).BindText(2, name.name);
  if (!st.Step()) return std::nullopt;
  TableInfo t;
  t.object_id = st.Int(0);
  t.name = TableName{st.Text(1), st.Text(2)};
  Statement cols(db_, "SELECT column_id, name, type, is_nullable, key_ordinal FROM sim_columns "
                      "WHERE object_id = ? ORDER BY column_id");
  cols.BindInt(1, t.object_id);
  std::vector<std::pair<int, std::string>> key;
  while (cols.Step()) {
    ColumnInfo c;
    c.column_id = static_cast<int>(cols.Int(0));
    c.name = cols.Text(1);
    c.type = SqlType::Parse(cols.Text(2));
    c.nullable = cols.Int(3) != 0;
    c.key_ordinal = static_cast<int>(cols.Int(4));
    if (c.key_ordinal > 0) key.emplace_back(c.key_ordinal, c.name);
    t.columns.push_back(std::move(c));
  }
  std::sort(key.begin(), key.end());
  for (auto& [ordinal, column] : key) t.key.push_back(column);
  return t;
}

TableInfo Catalog::LoadTable(const TableName& name) {
  if (auto t = FindTable(name)) return *t;
  std::string known;
  for (const auto& n : ListTables()) known += (known.empty() ? "" : ", ") + n.ToString();
  throw NotFoundError("table " + name.ToString() + " does not exist in " + db_.path() +
                      " (tables: " + (known.empty() ? "none" : known) +
                      "); create it with `mssql-cdc sim create-table`");
}

std::vector<TableName> Catalog::ListTables() {
  Statement st(db_, "SELECT schema_name, table_name FROM sim_tables ORDER BY object_id");
  std::vector<TableName> out;
  while (st.Step()) out.push_back(TableName{st.Text(0), st.Text(1)});
  return out;
}

std::vector<CaptureInstance> Catalog::LoadInstances(std::string_view where,
                                                    const std::string& arg) {
  Statement st(db_, "SELECT object_id, capture_instance, source_object_id, source_schema, "
                    "source_table, start_lsn, create_date FROM cdc_change_tables " +
                        std::string(where) + " ORDER BY object_id");
  if (!arg.empty()) st.BindText(1, arg);
  std::vector<CaptureInstance> out;
  while (st.Step()) {
    CaptureInstance ci;
    ci.object_id = st.Int(0);
    ci.name = st.Text(1);
    ci.source_object_id = st.Int(2);
    ci.table = TableName{st.Text(3), st.Text(4)};
    const std::string lsn = st.Blob(5);
    ci.start_lsn = Lsn::FromBytes(lsn.data(), lsn.size());
    ci.create_date = st.Text(6);
    out.push_back(std::move(ci));
  }
  for (auto& ci : out) {
    Statement cols(db_, "SELECT column_name, column_id, column_type, column_ordinal "
                        "FROM cdc_captured_columns WHERE object_id = ? ORDER BY column_ordinal");
    cols.BindInt(1, ci.object_id);
    while (cols.Step()) {
      ci.columns.push_back(CapturedColumnInfo{cols.Text(0), static_cast<int>(cols.Int(1)),
                                              SqlType::Parse(cols.Text(2)),
                                              static_cast<int>(cols.Int(3))});
    }
    Statement idx(db_, "SELECT column_name FROM cdc_index_columns WHERE object_id = ? "
                       "ORDER BY index_ordinal");
    idx.BindInt(1, ci.object_id);
    while (idx.Step()) ci.index_columns.push_back(idx.Text(0));
  }
  return out;
}

std::vector<CaptureInstance> Catalog::InstancesOf(std::int64_t source_object_id) {
  return LoadInstances("WHERE source_object_id = ?1", std::to_string(source_object_id));
}

std::optional<CaptureInstance> Catalog::FindInstance(std::string_view capture_instance) {
  auto found = LoadInstances("WHERE capture_instance = ?1 COLLATE NOCASE",
                             std::string(capture_instance));
  if (found.empty()) return std::nullopt;
  return found.front();
}

CaptureInstance Catalog::LoadInstance(std::string_view capture_instance) {
  if (auto ci = FindInstance(capture_instance)) return *ci;
  std::string known;
  for (const auto& ci : ListInstances()) known += (known.empty() ? "" : ", ") + ci.name;
  throw NotFoundError("capture instance " + std::string(capture_instance) +
                      " does not exist in " + db_.path() +
                      " (capture instances: " + (known.empty() ? "none" : known) + ")");
}

std::vector<CaptureInstance> Catalog::ListInstances() { return LoadInstances("", ""); }

void Catalog::AddLsnTimeEntry(const Lsn& lsn, std::string_view begin_time,
                              std::string_view end_time, const std::string& tran_id) {
  Statement st(db_, "INSERT INTO cdc_lsn_time_mapping(start_lsn, tran_begin_time, "
                    "tran_end_time, tran_id) VALUES(?, ?, ?, ?)");
  st.BindBlob(1, lsn.data(), Lsn::kSize)
      .BindText(2, begin_time)
      .BindText(3, end_time)
      .BindBlob(4, tran_id.data(), tran_id.size())
      .Run();
}

std::optional<LoginInfo> Catalog::FindLogin(std::string_view name) {
  Statement st(db_, "SELECT login_name, is_db_owner FROM sim_logins WHERE login_name = ?");
  st.BindText(1, name);
  if (!st.Step()) return std::nullopt;
  return LoginInfo{st.Text(0), st.Int(1) != 0};
}

std::optional<LoginInfo> Catalog::Authenticate(std::string_view name, std::string_view password) {
  Statement st(db_, "SELECT login_name, is_db_owner, password FROM sim_logins "
                    "WHERE login_name = ?");
  st.BindText(1, name);
  if (!st.Step()) return std::nullopt;
  // Every byte is compared, so the time taken does not tell how much of a guess was right.
  const std::string_view stored = st.TextView(2);
  if (stored.empty()) return std::nullopt;
  unsigned char difference = stored.size() == password.size() ? 0 : 1;
  for (std::size_t i = 0; i < password.size(); ++i) {
    const char expected = i < stored.size() ? stored[i] : '\0';
    difference |= static_cast<unsigned char>(expected ^ password[i]);
  }
  if (difference != 0) return std::nullopt;
  return LoginInfo{st.Text(0), st.Int(1) != 0};
}

void Catalog::InsertLogin(std::string_view name, std::string_view password, bool is_db_owner) {
  Statement st(db_, "INSERT INTO sim_logins(login_name, password, is_db_owner) VALUES(?, ?, ?)");
  st.BindText(1, name).BindText(2, password).BindInt(3, is_db_owner ? 1 : 0).Run();
}

std::optional<LoginInfo> Catalog::AuthenticateToken(std::string_view token_sha256) {
  Statement exists(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                        "name = 'sim_login_tokens'");
  if (!exists.Step()) return std::nullopt;
  Statement st(db_, "SELECT l.login_name, l.is_db_owner FROM sim_login_tokens t "
                    "JOIN sim_logins l ON l.login_name = t.login_name WHERE t.token_sha256 = ?");
  st.BindText(1, token_sha256);
  if (!st.Step()) return std::nullopt;
  return LoginInfo{st.Text(0), st.Int(1) != 0};
}

void Catalog::InsertLoginToken(std::string_view login, std::string_view token_sha256) {
  db_.Exec(kLoginTokensSchema);
  Statement st(db_, "INSERT INTO sim_login_tokens(token_sha256, login_name) VALUES(?, ?)");
  st.BindText(1, token_sha256).BindText(2, login).Run();
}

void Catalog::InsertGrant(std::string_view login, std::string_view object_name) {
  db_.Exec(kGrantsSchema);
  Statement st(db_, "INSERT OR IGNORE INTO sim_grants(login_name, object_name) VALUES(?, ?)");
  st.BindText(1, login).BindText(2, object_name).Run();
}

bool Catalog::HasGrant(std::string_view login, std::string_view object_name) {
  Statement exists(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sim_grants'");
  if (!exists.Step()) return false;
  Statement st(db_, "SELECT 1 FROM sim_grants WHERE login_name = ? AND object_name = ?");
  st.BindText(1, login).BindText(2, object_name);
  return st.Step();
}

std::string FormatServerDatetime(LocalMicros local) {
  // datetime counts 1/300 s; round to it, then print the milliseconds SQL Server shows.
  const std::int64_t second = local.value >= 0 ? local.value / kMicrosPerSecond * kMicrosPerSecond
                                               : (local.value - kMicrosPerSecond + 1) /
                                                     kMicrosPerSecond * kMicrosPerSecond;
  const std::int64_t fraction = local.value - second;
  const std::int64_t ticks = (fraction * 300 + kMicrosPerSecond / 2) / kMicrosPerSecond;
  const std::int64_t ms = (ticks * 10 + 1) / 3;
  return FormatDateTime(second + ms * 1000, 3);
}

LocalMicros ParseServerDatetime(std::string_view text) {
  auto micros = ParseDateTime(text);
  if (!micros) {
    throw SourceError("malformed datetime '" + std::string(text) + "' in a simulated database");
  }
  return LocalMicros{*micros};
}

}  // namespace mssql_cdc::sim
