// What every kind of commit DeltaTable makes shares (table.cc, table_append.cc,
// table_rewrite.cc): the commitInfo action, the schema and protocol change a write implies,
// the judgement of a commit that won the race for a version, and the clean-up of data files
// no commit names. Internal to delta/.
#pragma once

#include <arrow/type_fwd.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/table_options.h"
#include "delta/table_state.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

// How many lost races a commit survives before it gives up.
constexpr int kMaxCommitAttempts = 1000;

// The index of column `name` in `schema`, matched ignoring case; InternalError when missing.
int FieldIndexIgnoringCase(const arrow::Schema& schema, const std::string& name);
// Whether table property `key` is "true" (any case).
bool PropertyIsTrue(const StringMap& configuration, const std::string& key);

// The path of a data file: add actions name it by a relative URI; the file lives at the
// decoded path under `root`.
std::string DataFilePath(const std::string& root, const std::string& uri_path);
// Best effort: files no commit names are invisible to readers; removing them saves space.
void DeleteUncommitted(storage::FileSystem& fs, const std::string& root,
                       const std::vector<AddFile>& adds);

// What a write changes besides data: the merged schema, and the metaData and protocol actions
// to commit when they differ from the snapshot's.
struct TableChange {
  std::shared_ptr<arrow::Schema> schema;
  std::optional<Metadata> metadata;
  std::optional<Protocol> protocol;
};
// `incoming` null: the snapshot's schema, nothing to change.
TableChange PlanTableChange(const TableState& snapshot, const arrow::Schema* incoming,
                            bool merge_schema, const std::string& table);

// What a commit that lost the race learns from one winning commit.
enum class RaceOutcome {
  kRetry,       // nothing in the way: commit again at the next version
  kTxnHeld,     // the winner committed our (app_id, version) or later: ours is redundant
  kRecompute,   // the winner changed files a read-modify-write commit read
  kConflict,    // the winner changed the schema or protocol: fail
};
RaceOutcome JudgeWinner(const std::vector<Action>& winner, const std::vector<Txn>& ours,
                        bool blind_append);

// The append's txn, as the list JudgeWinner takes.
std::vector<Txn> TxnsOf(const AppendOptions& options);
// ConfigError when userMetadata is not JSON or the txn has no app id.
void CheckUserMetadata(const AppendOptions& options);

CommitInfo MakeCommitInfo(const std::string& operation, nlohmann::json parameters,
                          std::int64_t read_version, bool blind_append,
                          const std::vector<AddFile>& adds, std::int64_t rows,
                          const AppendOptions& options);

// The table version holding `txn`: the oldest commit of the newest run of commits whose txn
// for the app id is at or past txn.version. Commits no longer on disk end the search.
std::int64_t VersionHoldingTxn(storage::FileSystem& fs, const std::string& root,
                               std::int64_t newest, const Txn& txn);

}  // namespace mssql_cdc::delta
