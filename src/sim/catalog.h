// Reads and writes the catalog tables of sim/storage.h through an open connection: settings
// in sim_meta, source tables and their columns, capture instances and their columns. It
// holds no state of its own; callers run it inside their own SQLite transactions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lsn.h"
#include "core/time.h"
#include "sim/lsn_sequence.h"
#include "sim/schema.h"
#include "sim/sqlite.h"

namespace mssql_cdc::sim {

// A login of the TDS front end (sim_logins), without its password.
struct LoginInfo {
  std::string name;  // as stored
  bool is_db_owner = false;
};

class Catalog {
 public:
  explicit Catalog(SqliteDb& db) : db_(db) {}

  std::optional<std::string> GetMeta(std::string_view key);
  // Throws SourceError when the key is missing (a damaged file).
  std::string RequireMeta(std::string_view key);
  void SetMeta(std::string_view key, std::string_view value);
  std::int64_t NextObjectId();
  // The LSN sequence as last stored, and storing where it got to (sim_meta last_lsn).
  LsnSequence LoadLsnSequence();
  void StoreLsnSequence(const LsnSequence& sequence);
  // A new transaction id: 10 bytes, never zero.
  std::string AllocateTranId();

  // Throws NotFoundError listing the tables there are.
  TableInfo LoadTable(const TableName& name);
  std::optional<TableInfo> FindTable(const TableName& name);
  std::vector<TableName> ListTables();

  // Capture instances of one source table, oldest first.
  std::vector<CaptureInstance> InstancesOf(std::int64_t source_object_id);
  // Throws NotFoundError listing the instances there are.
  CaptureInstance LoadInstance(std::string_view capture_instance);
  std::optional<CaptureInstance> FindInstance(std::string_view capture_instance);
  std::vector<CaptureInstance> ListInstances();

  // Records that the enable of `object_id` (a capture instance) committed at `start_lsn` and
  // waits for the capture process: its start_lsn reads zero until ProcessPendingEnables.
  void AddPendingEnable(std::int64_t object_id, const Lsn& start_lsn);
  // The capture process reaching the enables it has not processed: each waiting instance's
  // start_lsn becomes its enable's LSN. Runs inside the caller's write transaction, before the
  // capture process writes anything after them.
  void ProcessPendingEnables();

  // Appends a cdc_lsn_time_mapping row.
  void AddLsnTimeEntry(const Lsn& lsn, std::string_view begin_time, std::string_view end_time,
                       const std::string& tran_id);

  // Logins and grants (sim_logins, sim_grants); names compare ignoring case.
  std::optional<LoginInfo> FindLogin(std::string_view name);
  // The login named `name` when `password` is its password; nullopt otherwise, without saying
  // which of the two was wrong. A token login (empty password) never matches.
  std::optional<LoginInfo> Authenticate(std::string_view name, std::string_view password);
  // The login an access token's SHA-256 digest belongs to (sim_login_tokens).
  std::optional<LoginInfo> AuthenticateToken(std::string_view token_sha256);
  void InsertLogin(std::string_view name, std::string_view password, bool is_db_owner);
  // Creates sim_login_tokens first when the file lacks it.
  void InsertLoginToken(std::string_view login, std::string_view token_sha256);
  // Creates sim_grants first when the file lacks it; a repeated grant changes nothing.
  void InsertGrant(std::string_view login, std::string_view object_name);
  // False when the file has no sim_grants table.
  bool HasGrant(std::string_view login, std::string_view object_name);

 private:
  std::vector<CaptureInstance> LoadInstances(std::string_view where, const std::string& arg);
  SqliteDb& db_;
};

// A local time as SQL Server's datetime records it: rounded to 1/300 s, printed
// "YYYY-MM-DD HH:MM:SS.fff" (milliseconds end in 0, 3 or 7).
std::string FormatServerDatetime(LocalMicros local);
// The inverse, for cleanup's time arithmetic. Throws SourceError on a malformed value.
LocalMicros ParseServerDatetime(std::string_view text);

}  // namespace mssql_cdc::sim
