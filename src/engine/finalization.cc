#include "engine/finalization.h"

#include <arrow/api.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "delta/table.h"
#include "engine/table_schemas.h"

namespace mssql_cdc {
namespace {

constexpr char kTableName[] = "table_name";
constexpr char kFinalizedUntil[] = "finalized_until";
constexpr char kEndLsn[] = "end_lsn";
constexpr char kEndCommitTs[] = "end_commit_ts";
constexpr char kUpdatedAt[] = "updated_at";

// As the reference does: a MERGE that keeps losing to concurrent commits is retried for up to
// a minute before the error reaches the caller.
constexpr auto kRetryFor = std::chrono::minutes(1);

void Check(const arrow::Status& status, const std::string& what) {
  if (!status.ok()) throw InternalError(what + ": " + status.ToString());
}

std::shared_ptr<arrow::Scalar> CellAt(const std::shared_ptr<arrow::Table>& table,
                                      const std::string& column, std::int64_t row) {
  auto chunked = table->GetColumnByName(column);
  if (!chunked) return nullptr;
  auto scalar = chunked->GetScalar(row);
  Check(scalar.status(), "reading control column " + column);
  return *scalar;
}

std::optional<std::int64_t> MicrosAt(const std::shared_ptr<arrow::Table>& table,
                                     const std::string& column, std::int64_t row) {
  auto cell = CellAt(table, column, row);
  if (!cell || !cell->is_valid) return std::nullopt;
  return static_cast<const arrow::TimestampScalar&>(*cell).value;
}

std::optional<std::string> StringAt(const std::shared_ptr<arrow::Table>& table,
                                    const std::string& column, std::int64_t row) {
  auto cell = CellAt(table, column, row);
  if (!cell || !cell->is_valid) return std::nullopt;
  return static_cast<const arrow::StringScalar&>(*cell).value->ToString();
}

// The row holding the table's verdict among those stored for one name: the one with the
// latest finalized_until (upserts keep one row per name; this tolerates a stray duplicate).
std::optional<std::int64_t> VerdictRow(const std::shared_ptr<arrow::Table>& rows) {
  std::optional<std::int64_t> best;
  std::optional<std::int64_t> best_until;
  for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
    auto until = MicrosAt(rows, kFinalizedUntil, i);
    if (!best || (until && (!best_until || *until > *best_until))) {
      best = i;
      best_until = until;
    }
  }
  return best;
}

// Whether two reads of one name's rows saw the same contents, column by column (by name, so a
// column the upsert would add does not count as a change).
bool SameRows(const std::shared_ptr<arrow::Table>& seen, const std::shared_ptr<arrow::Table>& now) {
  if (seen->num_rows() != now->num_rows()) return false;
  for (const auto& field : seen->schema()->fields()) {
    auto now_column = now->GetColumnByName(field->name());
    if (!now_column) return false;
    auto seen_column = seen->GetColumnByName(field->name());
    for (std::int64_t i = 0; i < seen->num_rows(); ++i) {
      auto a = seen_column->GetScalar(i);
      auto b = now_column->GetScalar(i);
      Check(a.status(), "comparing control rows");
      Check(b.status(), "comparing control rows");
      if (!(*a)->Equals(**b)) return false;
    }
  }
  return true;
}

std::shared_ptr<arrow::Array> OneValue(const std::shared_ptr<arrow::Scalar>& scalar) {
  auto array = arrow::MakeArrayFromScalar(*scalar, 1);
  Check(array.status(), "building a control row");
  return *array;
}

// The control row that moves `table_name`'s verdict: the verdict columns set, every other
// column (silver's applied_lsn, snapshot_lsn, ...) copied from the stored row when there is one.
std::shared_ptr<arrow::Table> AdvancedRow(const std::shared_ptr<arrow::Table>& stored,
                                          std::optional<std::int64_t> stored_row,
                                          const std::string& table_name, UtcMicros candidate,
                                          const Offset& end) {
  const auto ts_type = arrow::timestamp(arrow::TimeUnit::MICRO);
  auto timestamp = [&](std::int64_t micros) {
    return std::make_shared<arrow::TimestampScalar>(micros, ts_type);
  };
  const std::vector<std::pair<std::string, std::shared_ptr<arrow::Scalar>>> verdict = {
      {kTableName, std::make_shared<arrow::StringScalar>(table_name)},
      {kFinalizedUntil, timestamp(candidate.value)},
      {kEndLsn, std::make_shared<arrow::StringScalar>(end.lsn.ToString())},
      {kEndCommitTs, timestamp(end.commit_ts->value)},
      {kUpdatedAt, timestamp(NowUtc().value)},
  };
  // Columns of the stored table when a row is kept, else of a fresh control table.
  auto schema = stored_row ? stored->schema() : ControlSchema();
  arrow::ArrayVector columns;
  for (const auto& field : schema->fields()) {
    auto set = std::find_if(verdict.begin(), verdict.end(),
                            [&](const auto& entry) { return entry.first == field->name(); });
    if (set != verdict.end()) {
      columns.push_back(OneValue(set->second));
    } else if (stored_row) {
      columns.push_back(OneValue(CellAt(stored, field->name(), *stored_row)));
    } else {
      auto nulls = arrow::MakeArrayOfNull(field->type(), 1);
      Check(nulls.status(), "building a control row");
      columns.push_back(*nulls);
    }
  }
  return arrow::Table::Make(schema, columns, 1);
}

std::shared_ptr<arrow::Table> RowsNamed(const delta::DeltaTable& table,
                                        const std::string& table_name) {
  return table.Read({{kTableName, "=", table_name}});
}

}  // namespace

ConflictRetry::ConflictRetry() : deadline_(std::chrono::steady_clock::now() + kRetryFor) {}

bool ConflictRetry::Expired() const { return std::chrono::steady_clock::now() >= deadline_; }

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
  if (!end.commit_ts) return false;
  const UtcMicros candidate = Truncate(*end.commit_ts, granularity);
  EnsureControlTable(control_uri);
  ConflictRetry retry;
  for (;;) {
    try {
      auto table = delta::DeltaTable::Open(control_uri);
      auto stored = RowsNamed(table, table_name);
      auto stored_row = VerdictRow(stored);
      if (stored_row) {
        auto until = MicrosAt(stored, kFinalizedUntil, *stored_row);
        if (until && *until >= candidate.value) return false;
      }
      auto row = AdvancedRow(stored, stored_row, table_name, candidate, end);
      delta::AppendOptions options;
      options.operation = "MERGE";
      // Compare and set: written only if the name's row is still what was read above. Another
      // writer's verdict (or silver's columns) committed meanwhile makes this read again, so
      // the verdict never moves backwards and silver's columns are never reverted.
      auto result = table.UpsertByKey(
          kTableName, row, options,
          [&stored](const std::shared_ptr<arrow::Table>& now) { return SameRows(stored, now); });
      if (result.written) return true;
      if (retry.Expired()) {
        throw ConcurrentModificationError(
            "control table " + control_uri + ": the row of '" + table_name +
            "' kept changing under concurrent writers for a minute; the verdict was not moved");
      }
    } catch (const ConcurrentModificationError&) {
      const auto delay = retry.NextDelay();
      if (!delay) throw;
      std::this_thread::sleep_for(*delay);
    }
  }
}

std::optional<Verdict> ReadVerdict(const std::string& control_uri, const std::string& table_name) {
  if (!delta::DeltaTable::Exists(control_uri)) return std::nullopt;
  auto rows = RowsNamed(delta::DeltaTable::Open(control_uri), table_name);
  auto row = VerdictRow(rows);
  if (!row) return std::nullopt;
  auto until = MicrosAt(rows, kFinalizedUntil, *row);
  if (!until) return std::nullopt;  // a row silver made before any verdict
  Verdict verdict;
  verdict.table_name = table_name;
  verdict.finalized_until = UtcMicros{*until};
  verdict.end_lsn = StringAt(rows, kEndLsn, *row).value_or("");
  verdict.end_commit_ts = UtcMicros{MicrosAt(rows, kEndCommitTs, *row).value_or(0)};
  verdict.updated_at = UtcMicros{MicrosAt(rows, kUpdatedAt, *row).value_or(0)};
  return verdict;
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

}  // namespace mssql_cdc
