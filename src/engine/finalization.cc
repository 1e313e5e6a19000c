#include "engine/finalization.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <set>
#include <random>
#include <thread>
#include <vector>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "delta/table_cells.h"
#include "engine/table_schemas.h"

namespace mssql_cdc {
namespace {

constexpr char kTableName[] = "table_name";
constexpr char kFinalizedUntil[] = "finalized_until";
constexpr char kEndLsn[] = "end_lsn";
constexpr char kEndCommitTs[] = "end_commit_ts";
constexpr char kUpdatedAt[] = "updated_at";

// As the reference does, a MERGE that keeps losing is retried for a minute; unlike it, the
// minute starts again while other writers commit, up to ten minutes in all.
constexpr auto kQuietRetryFor = std::chrono::minutes(1);
constexpr auto kRetryAtMostFor = std::chrono::minutes(10);

// The row holding the table's verdict among those stored for one name: the one with the
// latest finalized_until (upserts keep one row per name; this tolerates a stray duplicate).
std::optional<std::int64_t> VerdictRow(const std::shared_ptr<arrow::Table>& rows) {
  std::optional<std::int64_t> best;
  std::optional<std::int64_t> best_until;
  for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
    auto until = delta::TimestampCell(*rows, kFinalizedUntil, i);
    if (!best || (until && (!best_until || *until > *best_until))) {
      best = i;
      best_until = until;
    }
  }
  return best;
}

std::shared_ptr<arrow::Array> OneValue(const std::shared_ptr<arrow::Scalar>& scalar) {
  auto array = arrow::MakeArrayFromScalar(*scalar, 1);
  CheckInternal(array.status(), "building a control row");
  return *array;
}

using ColumnValues = std::vector<std::pair<std::string, std::shared_ptr<arrow::Scalar>>>;

// The control row of `table_name` with `values` set and every other column copied from the
// stored row when there is one (NULL otherwise).
std::shared_ptr<arrow::Table> RowWith(const std::shared_ptr<arrow::Table>& stored,
                                      std::optional<std::int64_t> stored_row,
                                      const std::string& table_name, ColumnValues values) {
  values.emplace_back(kTableName, std::make_shared<arrow::StringScalar>(table_name));
  // Columns of the stored table when a row is kept, else of a fresh control table.
  auto schema = stored_row ? stored->schema() : ControlSchema();
  arrow::ArrayVector columns;
  for (const auto& field : schema->fields()) {
    auto set = std::find_if(values.begin(), values.end(),
                            [&](const auto& entry) { return entry.first == field->name(); });
    if (set != values.end()) {
      auto cast = set->second->CastTo(field->type());
      CheckInternal(cast.status(), "building a control row");
      columns.push_back(OneValue(*cast));
    } else if (stored_row) {
      columns.push_back(OneValue(delta::ScalarCell(*stored, field->name(), *stored_row)));
    } else {
      auto nulls = arrow::MakeArrayOfNull(field->type(), 1);
      CheckInternal(nulls.status(), "building a control row");
      columns.push_back(*nulls);
    }
  }
  return arrow::Table::Make(schema, columns, 1);
}

std::shared_ptr<arrow::Scalar> TimestampValue(std::int64_t micros) {
  return std::make_shared<arrow::TimestampScalar>(micros, arrow::timestamp(arrow::TimeUnit::MICRO));
}

std::shared_ptr<arrow::Scalar> OptionalString(const std::optional<std::string>& text) {
  if (text) return std::make_shared<arrow::StringScalar>(*text);
  return arrow::MakeNullScalar(arrow::utf8());
}

// The control row that moves `table_name`'s verdict: the verdict columns set, every other
// column (silver's applied_lsn, snapshot_lsn, ...) copied from the stored row when there is one.
std::shared_ptr<arrow::Table> AdvancedRow(const std::shared_ptr<arrow::Table>& stored,
                                          std::optional<std::int64_t> stored_row,
                                          const std::string& table_name, UtcMicros candidate,
                                          const Offset& end) {
  return RowWith(stored, stored_row, table_name,
                 {{kFinalizedUntil, TimestampValue(candidate.value)},
                  {kEndLsn, std::make_shared<arrow::StringScalar>(end.lsn.ToString())},
                  {kEndCommitTs, TimestampValue(end.commit_ts->value)},
                  {kUpdatedAt, TimestampValue(NowUtc().value)}});
}

// The rows of `table` at `positions`.
std::shared_ptr<arrow::Table> RowsAt(const std::shared_ptr<arrow::Table>& table,
                                     const std::vector<std::int64_t>& positions) {
  arrow::Int64Builder indices;
  CheckInternal(indices.AppendValues(positions), "selecting control rows");
  std::shared_ptr<arrow::Array> index_array;
  CheckInternal(indices.Finish(&index_array), "selecting control rows");
  delta::EnsureComputeKernels();
  auto taken = arrow::compute::Take(table, index_array);
  CheckInternal(taken.status(), "selecting control rows");
  return taken->table();
}

// Whether two reads of the same names' rows saw the same contents, compared as sets of rows
// on the columns of the first read (a column the upsert would add does not count as a change).
bool SameRowsByName(const std::shared_ptr<arrow::Table>& seen, const std::shared_ptr<arrow::Table>& now) {
  if (seen->num_rows() != now->num_rows()) return false;
  auto keyed = [](const std::shared_ptr<arrow::Table>& rows) {
    std::multiset<std::string> out;
    for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
      std::string row;
      for (const auto& field : rows->schema()->fields()) {
        auto cell = delta::ScalarCell(*rows, field->name(), i);
        row += field->name() + "=" + (cell && cell->is_valid ? cell->ToString() : "NULL") + "\x1f";
      }
      out.insert(std::move(row));
    }
    return out;
  };
  arrow::FieldVector fields;
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  for (const auto& field : seen->schema()->fields()) {
    auto column = now->GetColumnByName(field->name());
    if (!column) return false;
    fields.push_back(field);
    columns.push_back(column);
  }
  return keyed(seen) == keyed(arrow::Table::Make(arrow::schema(fields), columns, now->num_rows()));
}

std::shared_ptr<arrow::Table> RowsNamed(const delta::DeltaTable& table,
                                        const std::string& table_name) {
  return table.Read({{kTableName, "=", table_name}});
}

}  // namespace

ConflictRetry::ConflictRetry(Clock now)
    : now_(std::move(now)),
      quiet_deadline_(now_() + kQuietRetryFor),
      final_deadline_(now_() + kRetryAtMostFor) {}

void ConflictRetry::SawTableVersion(std::int64_t version) {
  if (version_seen_ >= 0 && version > version_seen_) {
    quiet_deadline_ = std::min(final_deadline_, now_() + kQuietRetryFor);
  }
  version_seen_ = std::max(version_seen_, version);
}

bool ConflictRetry::Expired() const { return now_() >= quiet_deadline_; }

std::optional<std::chrono::milliseconds> ConflictRetry::NextDelay() {
  if (Expired()) return std::nullopt;
  thread_local std::mt19937 rng{std::random_device{}()};
  const int cap_ms = std::min(2000, 50 << std::min(attempt_++, 6));
  return std::chrono::milliseconds(std::uniform_int_distribution<int>(cap_ms / 2, cap_ms)(rng));
}

Granularity ParseGranularity(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "minute") return Granularity::kMinute;
  if (lower == "hour") return Granularity::kHour;
  if (lower == "day") return Granularity::kDay;
  throw ConfigError("granularity must be 'minute', 'hour' or 'day'; got '" + std::string(text) +
                    "'");
}

UtcMicros Truncate(UtcMicros time, Granularity granularity) {
  std::int64_t unit = granularity == Granularity::kMinute ? kMicrosPerMinute
                      : granularity == Granularity::kHour ? kMicrosPerHour
                                                          : kMicrosPerDay;
  // Floor, not truncation toward zero, so times before 1970 fall into their own period.
  std::int64_t periods = time.value / unit;
  if (time.value % unit < 0) --periods;
  return UtcMicros{periods * unit};
}

void EnsureControlTable(const std::string& control_uri) {
  if (!delta::DeltaTable::Exists(control_uri)) {
    delta::DeltaTable::Create(control_uri, ControlTableOptions());
    return;
  }
  // A path naming some other table fails here rather than on the first advance.
  CheckExistingTable(control_uri, TableKind::kControl);
}

bool Advance(const std::string& control_uri, const std::string& table_name, const Offset& end,
             Granularity granularity) {
  return AdvanceMany(control_uri, {VerdictMove{table_name, end}}, granularity) > 0;
}

namespace {

// Positions of each name's rows in the control table's `table_name` column.
std::map<std::string, std::vector<std::int64_t>, std::less<>> PositionsByName(const arrow::Table& stored) {
  std::map<std::string, std::vector<std::int64_t>, std::less<>> positions;
  const auto names = stored.GetColumnByName(kTableName);
  if (!names) return positions;
  std::int64_t offset = 0;
  for (const auto& chunk : names->chunks()) {
    const auto& strings = static_cast<const arrow::StringArray&>(*chunk);
    for (std::int64_t i = 0; i < strings.length(); ++i) {
      if (strings.IsValid(i)) positions[std::string(strings.GetView(i))].push_back(offset + i);
    }
    offset += strings.length();
  }
  return positions;
}

// Whether any move has an end commit time: a move without one moves nothing, so a group of
// only those need not touch the control table at all.
bool MovesAnything(const std::vector<VerdictMove>& moves) {
  return std::any_of(moves.begin(), moves.end(), [](const VerdictMove& m) { return m.end.commit_ts.has_value(); });
}

// AdvanceMany on an open control table, brought up to date before each try.
int AdvanceManyIn(delta::DeltaTable& table, const std::vector<VerdictMove>& moves,
                  Granularity granularity) {
  // The latest end of each name, so that one upsert row stands for each.
  std::map<std::string, Offset> latest;
  for (const auto& move : moves) {
    if (!move.end.commit_ts) continue;
    auto [it, inserted] = latest.emplace(move.table_name, move.end);
    if (!inserted && *move.end.commit_ts > *it->second.commit_ts) it->second = move.end;
  }
  if (latest.empty()) return 0;
  ConflictRetry retry;
  for (;;) {
    try {
      retry.SawTableVersion(table.CatchUp().version);
      const auto stored = table.Read();
      const auto positions = PositionsByName(*stored);
      // Every stored row of the names that move: compared again when the upsert commits.
      std::vector<std::shared_ptr<arrow::Table>> seen_rows;
      std::vector<std::shared_ptr<arrow::Table>> advanced;
      for (const auto& [name, end] : latest) {
        const UtcMicros candidate = Truncate(*end.commit_ts, granularity);
        const auto found = positions.find(name);
        auto rows = RowsAt(stored, found == positions.end() ? std::vector<std::int64_t>{} : found->second);
        auto stored_row = VerdictRow(rows);
        if (stored_row) {
          auto until = delta::TimestampCell(*rows, kFinalizedUntil, *stored_row);
          if (until && *until >= candidate.value) continue;  // never backwards
        }
        seen_rows.push_back(rows);
        advanced.push_back(AdvancedRow(rows, stored_row, name, candidate, end));
      }
      if (advanced.empty()) return 0;
      auto upsert = arrow::ConcatenateTables(advanced, arrow::ConcatenateTablesOptions{true});
      CheckInternal(upsert.status(), "combining control rows");
      auto seen = arrow::ConcatenateTables(seen_rows, arrow::ConcatenateTablesOptions{true});
      CheckInternal(seen.status(), "combining control rows");
      delta::AppendOptions options;
      options.operation = "MERGE";
      // Compare and set: written only if the rows of the names that move are still what was
      // read above. Another writer's verdict (or silver's columns) committed meanwhile makes
      // this read again, so a verdict never moves backwards and silver's columns are never
      // reverted.
      auto result = table.UpsertByKey(
          kTableName, *upsert, options,
          [&](const std::shared_ptr<arrow::Table>& now) { return SameRowsByName(*seen, now); });
      if (result.written) return static_cast<int>(advanced.size());
      if (retry.Expired()) {
        throw ConcurrentModificationError(
            "control table " + table.uri() + ": the rows of the tables whose verdicts move kept "
            "changing under concurrent writers until the retries gave up (after a minute without "
            "another writer's commit, or ten minutes in all); the verdicts were not moved");
      }
    } catch (const ConcurrentModificationError&) {
      retry.SawTableVersion(table.CatchUp().version);
      const auto delay = retry.NextDelay();
      if (!delay) throw;
      std::this_thread::sleep_for(*delay);
    }
  }
}

}  // namespace

int AdvanceMany(const std::string& control_uri, const std::vector<VerdictMove>& moves,
                Granularity granularity) {
  if (!MovesAnything(moves)) {
    return 0;
  }
  EnsureControlTable(control_uri);
  auto table = delta::DeltaTable::Open(control_uri);
  return AdvanceManyIn(table, moves, granularity);
}

VerdictWriter::VerdictWriter(std::string control_uri, Granularity granularity)
    : control_uri_(std::move(control_uri)),
      granularity_(granularity),
      group_([this](std::vector<VerdictMove>& moves) { Write(moves); }) {}

VerdictWriter::~VerdictWriter() = default;

// The control table is checked and opened by the first write, then kept and caught up, so
// that a write costs the commits made since the last one, not a replay of the whole log.
void VerdictWriter::Write(const std::vector<VerdictMove>& moves) {
  if (!table_) {
    if (!MovesAnything(moves)) {
      return;
    }
    EnsureControlTable(control_uri_);
    table_ = std::make_unique<delta::DeltaTable>(delta::DeltaTable::Open(control_uri_));
  }
  AdvanceManyIn(*table_, moves, granularity_);
}

void VerdictWriter::Advance(const std::string& table_name, const Offset& end) {
  group_.Submit(VerdictMove{table_name, end});
}

namespace {

}  // namespace

std::optional<Verdict> VerdictAmong(const std::shared_ptr<arrow::Table>& rows,
                                    const std::string& table_name) {
  auto row = VerdictRow(rows);
  if (!row) return std::nullopt;
  auto until = delta::TimestampCell(*rows, kFinalizedUntil, *row);
  if (!until) return std::nullopt;  // a row silver made before any verdict
  Verdict verdict;
  verdict.table_name = table_name;
  verdict.finalized_until = UtcMicros{*until};
  verdict.end_lsn = delta::TextCell(*rows, kEndLsn, *row).value_or("");
  verdict.end_commit_ts = UtcMicros{delta::TimestampCell(*rows, kEndCommitTs, *row).value_or(0)};
  verdict.updated_at = UtcMicros{delta::TimestampCell(*rows, kUpdatedAt, *row).value_or(0)};
  return verdict;
}

std::optional<Verdict> ReadVerdict(const std::string& control_uri, const std::string& table_name) {
  if (!delta::DeltaTable::Exists(control_uri)) return std::nullopt;
  return VerdictAmong(RowsNamed(delta::DeltaTable::Open(control_uri), table_name), table_name);
}

std::map<std::string, Verdict> ReadVerdicts(const std::string& control_uri) {
  std::map<std::string, Verdict> verdicts;
  if (!delta::DeltaTable::Exists(control_uri)) return verdicts;
  const auto stored = delta::DeltaTable::Open(control_uri).Read();
  for (const auto& [name, positions] : PositionsByName(*stored)) {
    if (auto verdict = VerdictAmong(RowsAt(stored, positions), name)) verdicts.emplace(name, std::move(*verdict));
  }
  return verdicts;
}

bool IsFinal(const std::string& control_uri, const std::string& table_name,
             UtcMicros period_end) {
  auto verdict = ReadVerdict(control_uri, table_name);
  return VerdictCovers(verdict ? std::optional(verdict->finalized_until) : std::nullopt,
                       period_end);
}

bool VerdictCovers(const std::optional<UtcMicros>& finalized_until, UtcMicros period_end) {
  return finalized_until && period_end <= *finalized_until;
}

namespace {

constexpr char kAppliedLsn[] = "applied_lsn";
constexpr char kSnapshotLsn[] = "snapshot_lsn";
constexpr char kOpenSnapshotLsn[] = "open_snapshot_lsn";
constexpr char kSnapshotWave[] = "snapshot_wave";

}  // namespace

std::optional<SilverPosition> SilverPositionAmong(const std::shared_ptr<arrow::Table>& rows) {
  if (rows->num_rows() == 0) return std::nullopt;
  // One row per name; a stray duplicate yields to the row with the newest applied_lsn.
  std::int64_t row = 0;
  for (std::int64_t i = 1; i < rows->num_rows(); ++i) {
    if (delta::TextCell(*rows, kAppliedLsn, i).value_or("") > delta::TextCell(*rows, kAppliedLsn, row).value_or("")) row = i;
  }
  SilverPosition position;
  position.applied_lsn = delta::TextCell(*rows, kAppliedLsn, row);
  position.snapshot_lsn = delta::TextCell(*rows, kSnapshotLsn, row);
  position.open_snapshot_lsn = delta::TextCell(*rows, kOpenSnapshotLsn, row);
  if (auto wave = delta::IntCell(*rows, kSnapshotWave, row)) {
    position.snapshot_wave = static_cast<std::int32_t>(*wave);
  }
  if (!position.applied_lsn && !position.snapshot_lsn && !position.open_snapshot_lsn) return std::nullopt;
  return position;
}

std::optional<SilverPosition> ReadSilverPosition(const std::string& control_uri,
                                                 const std::string& table_name) {
  if (!delta::DeltaTable::Exists(control_uri)) return std::nullopt;
  return SilverPositionAmong(RowsNamed(delta::DeltaTable::Open(control_uri), table_name));
}

void WriteSilverPosition(const std::string& control_uri, const std::string& table_name,
                         const std::optional<SilverPosition>& expected, const SilverPosition& position,
                         const std::optional<Verdict>& verdict) {
  EnsureControlTable(control_uri);
  auto table = delta::DeltaTable::Open(control_uri);
  ColumnValues values = {
      {kAppliedLsn, OptionalString(position.applied_lsn)},
      {kSnapshotLsn, OptionalString(position.snapshot_lsn)},
      {kOpenSnapshotLsn, OptionalString(position.open_snapshot_lsn)},
      {kSnapshotWave, position.snapshot_wave
                          ? std::static_pointer_cast<arrow::Scalar>(
                                std::make_shared<arrow::Int32Scalar>(*position.snapshot_wave))
                          : arrow::MakeNullScalar(arrow::int32())}};
  bool moved_by_another = false;
  delta::AppendOptions options;
  options.operation = "MERGE";
  // The row is built from what the commit's snapshot stores, so a concurrent verdict of another
  // name is kept, and the position must still be the one this apply started from.
  table.RewriteFiles(
      ControlSchema(),
      [&](const delta::TableState& snapshot, const std::shared_ptr<arrow::Schema>& schema) {
        delta::DeltaTable::Rewrite rewrite;
        rewrite.predicate = "table_name = " + table_name;
        std::vector<delta::AddFile> files;
        for (const auto& [path, add] : snapshot.files) files.push_back(add);
        const auto stored = table.ReadFiles(files, schema);
        const auto positions = PositionsByName(*stored);
        const auto found = positions.find(table_name);
        const auto rows = RowsAt(stored, found == positions.end() ? std::vector<std::int64_t>{} : found->second);
        const auto now = SilverPositionAmong(rows);
        const bool same = now.has_value() == expected.has_value() &&
                          (!now || (now->applied_lsn == expected->applied_lsn &&
                                    now->snapshot_lsn == expected->snapshot_lsn &&
                                    now->open_snapshot_lsn == expected->open_snapshot_lsn &&
                                    now->snapshot_wave == expected->snapshot_wave));
        if (!same) {
          moved_by_another = true;
          rewrite.commit = false;
          return rewrite;
        }
        ColumnValues set = values;
        const auto stored_row = VerdictRow(rows);
        const auto stored_until = stored_row ? delta::TimestampCell(*rows, kFinalizedUntil, *stored_row) : std::nullopt;
        if (verdict && (!stored_until || *stored_until < verdict->finalized_until.value)) {
          set.emplace_back(kFinalizedUntil, TimestampValue(verdict->finalized_until.value));
          set.emplace_back(kEndLsn, std::make_shared<arrow::StringScalar>(verdict->end_lsn));
          set.emplace_back(kEndCommitTs, TimestampValue(verdict->end_commit_ts.value));
          set.emplace_back(kUpdatedAt, TimestampValue(NowUtc().value));
        }
        auto updated = RowWith(rows, stored_row, table_name, std::move(set));
        auto aligned = delta::AlignBatchToSchema(**updated->CombineChunksToBatch(), schema, control_uri);
        // Every other name's rows stay as they are.
        arrow::BooleanBuilder keep;
        CheckInternal(keep.Reserve(stored->num_rows()), "keeping control rows");
        const auto names = stored->GetColumnByName(kTableName);
        std::int64_t i = 0;
        for (const auto& chunk : names->chunks()) {
          const auto& strings = static_cast<const arrow::StringArray&>(*chunk);
          for (std::int64_t j = 0; j < strings.length(); ++j, ++i) {
            keep.UnsafeAppend(!(strings.IsValid(j) && strings.GetView(j) == table_name));
          }
        }
        std::shared_ptr<arrow::Array> mask;
        CheckInternal(keep.Finish(&mask), "keeping control rows");
        delta::EnsureComputeKernels();
        auto kept = arrow::compute::Filter(stored, mask);
        CheckInternal(kept.status(), "keeping control rows");
        auto kept_batch = kept->table()->CombineChunksToBatch();
        CheckInternal(kept_batch.status(), "keeping control rows");
        rewrite.remove = files;
        if ((*kept_batch)->num_rows() > 0) rewrite.rows.push_back(*kept_batch);
        rewrite.rows.push_back(aligned);
        return rewrite;
      },
      options);
  if (moved_by_another) ThrowSilverPositionMoved(control_uri, table_name);
}

void ThrowSilverPositionMoved(const std::string& control, const std::string& silver_name) {
  throw ConcurrentModificationError(
      "control table " + control + ": the position of silver table " + silver_name +
      " moved while this apply_changes ran: another apply_changes is keeping the same silver "
      "table; run one at a time per silver table");
}

}  // namespace mssql_cdc
