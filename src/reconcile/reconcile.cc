#include "reconcile/reconcile.h"

#include <arrow/api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <unordered_set>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/time.h"
#include "core/timezone.h"
#include "core/user_text.h"
#include "delta/data_file_io.h"
#include "engine/engine_limits.h"
#include "reconcile/key_partitions.h"
#include "reconcile/row_diff.h"
#include "silver/key_units.h"
#include "silver/latest_images.h"
#include "silver/silver_schema.h"
#include "core/arrow_status.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

std::shared_ptr<arrow::Table> ReadAll(arrow::RecordBatchReader& reader) {
  auto table = reader.ToTable();
  ThrowIfError(table.status());  // the engine's own error (SourceError, PermissionError, ...)
  return *table;
}

// The keys changed after silver's LSN: in bronze, and in the change table up to `max_lsn`
// (changes the stream has not harvested yet), as key rows name them (JSON objects).
struct InFlight {
  std::unordered_set<std::string> keys;  // to leave out a row failure on its key
  std::set<std::int64_t> units;          // a sliced key's values in its units, to find their buckets
};

InFlight InFlightKeys(const std::vector<std::string>& keys, bool sliced_key, const Lsn& after,
                      const Lsn& max_lsn, const std::string& capture_instance, Source& source,
                      LakeSide& lake) {
  InFlight out;
  auto note = [&](const arrow::Table& table) {
    auto combined = table.CombineChunksToBatch();
    if (!combined.ok()) throw InternalError("reconcile: keys in flight: " + combined.status().ToString());
    const auto& rows = **combined;
    for (std::int64_t i = 0; i < rows.num_rows(); ++i) {
      nlohmann::json key = nlohmann::json::object();
      for (const auto& name : keys) key[name] = KeyValueJson(*rows.GetColumnByName(name), i);
      out.keys.insert(key.dump());
    }
    if (sliced_key) {
      const auto values = KeyUnitValues(*rows.GetColumnByName(keys.front()));
      for (std::int64_t i = 0; i < values->length(); ++i) {
        if (values->IsValid(i)) out.units.insert(values->Value(i));
      }
    }
  };
  note(*lake.ChangedKeysAfter(keys, after.ToString()));
  Lsn from = after.Increment();
  const Lsn min_lsn = source.MinLsn(capture_instance);
  if (min_lsn > from) from = min_lsn;
  if (from <= max_lsn) {
    ChangeReadRequest request;
    request.capture_instance = capture_instance;
    request.from = from;
    request.to = max_lsn;
    request.columns = keys;
    request.include_command_id = false;
    request.batch_rows = 100'000;
    auto reader = source.ReadChanges(request, SourceClock::Utc());
    note(*ReadAll(*reader));
  }
  return out;
}

// A bucket bound as the snapshot reader and the report take it: the integer, or a date's text.
nlohmann::json Bound(const std::optional<std::int64_t>& bound, KeyUnit unit) {
  if (!bound) return nullptr;
  return unit == KeyUnit::kDay ? nlohmann::json(FormatDate(*bound)) : nlohmann::json(*bound);
}

// A key the source returned (KeyAt, LastKey) in the key's units.
std::int64_t UnitsOfKey(const nlohmann::json& key, KeyUnit unit) {
  if (unit == KeyUnit::kInteger) return key.get<std::int64_t>();
  const std::string text = key.get<std::string>();
  const auto days = ParseDateDays(text);
  if (!days) throw SourceError("reconcile: the source returned " + text + " for a date key");
  return *days;
}

std::optional<std::string> BoundText(const nlohmann::json& bound) {
  if (bound.is_null()) return std::nullopt;
  return bound.dump();
}

// A reader of the source's rows in [lo, hi) of the key (JSON bounds as snapshotChunks takes them).
std::shared_ptr<arrow::RecordBatchReader> SourceReader(Source& source, const std::string& capture_instance,
                                                       const std::vector<std::string>& keys,
                                                       const std::vector<std::string>& columns,
                                                       const nlohmann::json& lo, const nlohmann::json& hi,
                                                       const Lsn& stamp) {
  SnapshotReadRequest request;
  request.capture_instance = capture_instance;
  request.columns = columns;
  request.key_columns = keys;
  request.lo = lo;
  request.hi = hi;
  request.snapshot_lsn = stamp;
  request.batch_rows = 100'000;
  return source.ReadSnapshot(request);
}

// Every row of `reader` into `parts`, the reader's schema first (a range may have no rows).
void AddAll(arrow::RecordBatchReader& reader, KeyPartitions& parts) {
  parts.Add(*ValueOrInternal(arrow::RecordBatch::MakeEmpty(reader.schema()), "reconcile: the source's rows"));
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader.ReadNext(&batch));  // the engine's own error (SourceError, PermissionError, ...)
    if (!batch) break;
    parts.Add(*batch);
  }
}

// Rows of each side Tier 2 holds at once: a quarter of the memory budget at the declared width
// of a row (a (max) column counted at the 1 MiB piece it is read in), at least 1,000.
std::int64_t PieceRows(std::int64_t memory_budget, const std::vector<CapturedColumn>& columns) {
  const std::int64_t row_bytes = std::max<std::int64_t>(1, DeclaredRowBytes(columns));
  return std::max<std::int64_t>(1'000, memory_budget / 4 / row_bytes);
}

// How many of `n` matching ranges a sample of `sample` compares: none at 0, else at least one.
std::size_t SampleSize(std::size_t n, double sample) {
  return std::min(n, static_cast<std::size_t>(std::ceil(sample * static_cast<double>(n))));
}

}  // namespace

std::optional<std::string> SilverCurrentTo(const std::optional<SilverPosition>& position) {
  if (!position) return std::nullopt;
  if (!position->applied_lsn) return position->snapshot_lsn;
  if (!position->snapshot_lsn) return position->applied_lsn;
  return std::max(*position->applied_lsn, *position->snapshot_lsn);
}

void CheckReconcileOptions(std::int64_t bucket_rows, double sample) {
  if (bucket_rows < 1) {
    throw ConfigError("bucket_rows must be at least 1 (rows per bucket of the comparison), not " +
                      std::to_string(bucket_rows));
  }
  if (!(sample >= 0.0 && sample <= 1.0)) {
    throw ConfigError("sample must be a fraction in [0, 1] (of the matching buckets compared row by row), not " +
                      std::to_string(sample));
  }
}

ReconcileResult Reconcile(const ReconcileOptions& options, const LakeState& state, Source& source,
                          LakeSide& lake) {
  CheckReconcileOptions(options.bucket_rows, options.sample);
  const CaptureInstanceInfo instance = source.ResolveCaptureInstance(options.capture_instance);
  std::vector<std::string> keys = options.keys.empty() ? instance.index_columns : options.keys;
  if (keys.empty()) {
    throw ConfigError("capture instance " + QuoteUserText(instance.name) +
                      " has no unique index to reconcile by; give the keys");
  }
  keys = ResolveSilverKeys(keys, *state.silver_schema, state.silver_name);
  CheckSilverOfBronze(*state.silver_schema, state.silver_properties, state.silver_name, *state.bronze_schema,
                      state.bronze_name, state.bronze_id, keys);
  if (!state.silver_lsn) {
    throw ConfigError("silver " + state.silver_name +
                      " has no position in the control table: run apply_changes on it first");
  }
  // The columns both sides hold: silver's captured columns the instance captures.
  std::vector<std::string> columns;
  const auto captured = source.CapturedColumns(instance.name);
  for (const auto& name : CapturedColumnNames(*state.silver_schema)) {
    const bool in_source = std::any_of(captured.begin(), captured.end(),
                                       [&](const CapturedColumn& c) { return EqualsIgnoringAsciiCase(c.name, name); });
    if (in_source) columns.push_back(name);
  }

  ReconcileResult result;
  result.run = ReportRun{delta::RandomUuid(), NowUtc(), state.silver_name, state.silver_version, state.silver_lsn};
  const std::optional<Lsn> max_before = source.MaxLsn();
  if (!max_before) throw SourceError("reconcile: the source's cdc.lsn_time_mapping is empty");
  result.source_lsn = max_before->ToString();
  const Lsn silver_lsn = Lsn::Parse(*state.silver_lsn);
  const Lsn floor = std::min(silver_lsn, *max_before);
  std::mt19937_64 random(options.seed ? *options.seed : std::random_device{}());

  // Tier 1 sums a one-column integer key, or a date key as day numbers; other keys are one
  // whole-table count.
  const auto field = keys.size() == 1 ? state.silver_schema->GetFieldByName(keys.front()) : nullptr;
  const std::optional<KeyUnit> unit = field ? KeyUnitOf(*field->type()) : std::nullopt;
  const bool sliced_key = unit == KeyUnit::kInteger || unit == KeyUnit::kDay;
  const KeyUnit key_unit = unit.value_or(KeyUnit::kInteger);
  const KeyQuery key_query{instance.name, keys};

  // Tier 1, then the ranges Tier 2 reads: [lo, hi) of the key as JSON bounds.
  struct Range {
    nlohmann::json lo, hi;
    std::size_t bucket = 0;
    bool whole = true;  // silver's rows of the range are known, not only looked up by key
  };
  std::vector<Bucket> buckets;
  KeyGrid grid;
  std::vector<nlohmann::json> cuts;  // other keys: every bucket_rows-th source key
  SliceTallies source_tallies, lake_tallies;
  if (sliced_key) {
    const auto first = source.KeyAt(key_query, nullptr, 0);
    const auto last = source.LastKey(key_query);
    if (first && last) {
      grid = GridOver(UnitsOfKey(*first, key_unit), UnitsOfKey(*last, key_unit));
      for (const SliceCount& slice : source.CountKeySlices(key_query, grid.start, grid.width, grid.slices)) {
        source_tallies[slice.slice] = Tally{slice.rows, slice.key_sum};
      }
    }
    lake_tallies = lake.TallySlices(keys.front(), key_unit, grid);
    buckets = MergeSlices(grid, source_tallies, lake_tallies, options.bucket_rows);
  } else {
    Bucket whole;
    auto reader = source.ReadSnapshot([&] {
      SnapshotReadRequest request;
      request.capture_instance = instance.name;
      request.columns = keys;
      request.key_columns = keys;
      request.snapshot_lsn = *max_before;
      request.batch_rows = 100'000;
      return request;
    }());
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ThrowIfError(reader->ReadNext(&batch));  // a failed read must not end the count early
      if (!batch) break;
      for (std::int64_t i = 0; i < batch->num_rows(); ++i, ++whole.source.rows) {
        if (whole.source.rows % options.bucket_rows != 0 || whole.source.rows == 0) continue;
        nlohmann::json cut = nlohmann::json::array();
        for (const auto& key : keys) cut.push_back(KeyValueJson(*batch->GetColumnByName(key), i));
        cuts.push_back(keys.size() == 1 ? cut.front() : cut);
      }
    }
    whole.lake.rows = lake.CountRows();
    whole.status = whole.source == whole.lake ? BucketStatus::kMatch : BucketStatus::kMismatch;
    buckets.push_back(whole);
  }
  const std::optional<Lsn> max_after = source.MaxLsn();

  // Tier 2's ranges: every bucket that differs, and a sample of the others: ceil(sample x n)
  // of the n that match (of the n ranges of a whole-table bucket), chosen at random.
  std::vector<Range> ranges;
  std::vector<Range> matching;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const bool differs = buckets[b].status != BucketStatus::kMatch;
    if (sliced_key) {
      (differs ? ranges : matching).push_back({Bound(buckets[b].lo, key_unit), Bound(buckets[b].hi, key_unit), b, true});
    } else if (differs) {
      ranges.push_back({nullptr, nullptr, b, true});
    } else {
      for (std::size_t c = 0; c <= cuts.size(); ++c) {
        matching.push_back({c == 0 ? nlohmann::json(nullptr) : cuts[c - 1],
                            c == cuts.size() ? nlohmann::json(nullptr) : cuts[c], b, false});
      }
    }
  }
  std::shuffle(matching.begin(), matching.end(), random);
  matching.resize(SampleSize(matching.size(), options.sample));
  for (auto& range : matching) ranges.push_back(std::move(range));
  const bool any_differs = std::any_of(buckets.begin(), buckets.end(),
                                       [](const Bucket& b) { return b.status != BucketStatus::kMatch; });
  InFlight in_flight;
  if (any_differs || !ranges.empty()) {
    in_flight = InFlightKeys(keys, sliced_key, floor, max_after.value_or(*max_before), instance.name, source, lake);
  }
  std::vector<bool> flying(buckets.size(), !sliced_key && !in_flight.keys.empty());
  for (const std::int64_t key : in_flight.units) flying[BucketOf(buckets, grid, key)] = true;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    if (buckets[b].status == BucketStatus::kMismatch && flying[b]) buckets[b].status = BucketStatus::kInFlight;
  }

  // Tier 2: an IN_FLIGHT bucket is compared too, less its keys in flight, so that a change in
  // flight never hides a real difference of another key; one found makes it MISMATCH.
  std::vector<bool> hashed(buckets.size(), false);
  std::vector<bool> failed(buckets.size(), false);
  std::vector<ReportRow> key_rows;
  // A bucket is read a piece at a time: at most piece_rows rows of each side held at once. A
  // sliced key's pieces are key ranges; other keys are split by a hash of the key into as many
  // parts as keep the larger side's within piece_rows, spilled to disk when there are more
  // than one, silver's once for the run and the source's once per range.
  const std::int64_t piece_rows = PieceRows(options.memory_budget, captured);
  const int parts = sliced_key ? 1 : PartsFor(std::max(buckets.front().source.rows, buckets.front().lake.rows), piece_rows);
  std::unique_ptr<SpillDirectory> spill;
  std::unique_ptr<KeyPartitions> silver_parts;
  for (const Range& range : ranges) {
    hashed[range.bucket] = true;
    std::vector<KeyFailure> failures;
    if (sliced_key) {
      for (const Bucket& piece : SplitBucket(buckets[range.bucket], grid, source_tallies, lake_tallies, piece_rows)) {
        const auto source_rows = ReadAll(*SourceReader(source, instance.name, keys, columns, Bound(piece.lo, key_unit),
                                                       Bound(piece.hi, key_unit), *max_before));
        const auto silver_rows = lake.RowsBetween(keys.front(), key_unit, piece.lo, piece.hi);
        for (auto& failure : DiffRows(*source_rows, *silver_rows, keys, columns, range.whole)) {
          failures.push_back(std::move(failure));
        }
      }
    } else {
      if (!silver_parts) {
        if (parts > 1) spill = std::make_unique<SpillDirectory>(options.spill_directory);
        silver_parts = std::make_unique<KeyPartitions>(spill.get(), keys, parts);
        lake.ScanAllRows([&](const arrow::RecordBatch& batch) { silver_parts->Add(batch); });
        result.spilled_bytes += silver_parts->Finish();
      }
      KeyPartitions source_parts(spill.get(), keys, parts);
      AddAll(*SourceReader(source, instance.name, keys, columns, range.lo, range.hi, *max_before), source_parts);
      result.spilled_bytes += source_parts.Finish();
      for (int p = 0; p < parts; ++p) {
        // Without the source's rows, a part holds no failure a lookup by key could find.
        if (source_parts.rows_in(p) == 0 && (!range.whole || silver_parts->rows_in(p) == 0)) continue;
        for (auto& failure : DiffRows(*source_parts.Part(p), *silver_parts->Part(p), keys, columns, range.whole)) {
          failures.push_back(std::move(failure));
        }
      }
      result.parts = std::max(result.parts, parts);
    }
    for (auto& failure : failures) {
      if (in_flight.keys.count(failure.key.dump()) > 0) continue;  // explained by a change in flight
      failed[range.bucket] = true;
      ReportRow row;
      row.bucket_lo = BoundText(range.lo);
      row.bucket_hi = BoundText(range.hi);
      row.source_lsn = result.source_lsn;
      row.key = failure.key.dump();
      row.failure_type = failure.failure_type;
      row.detail = failure.detail;
      ++result.failures[failure.failure_type];
      key_rows.push_back(std::move(row));
    }
  }

  for (std::size_t b = 0; b < buckets.size(); ++b) {
    if (buckets[b].status == BucketStatus::kInFlight && failed[b]) buckets[b].status = BucketStatus::kMismatch;
  }
  result.keys_in_flight.assign(in_flight.keys.begin(), in_flight.keys.end());
  std::sort(result.keys_in_flight.begin(), result.keys_in_flight.end());

  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const Bucket& bucket = buckets[b];
    ReportRow row;
    row.bucket_lo = BoundText(Bound(bucket.lo, key_unit));
    row.bucket_hi = BoundText(Bound(bucket.hi, key_unit));
    row.source_lsn = result.source_lsn;
    row.source_rows = bucket.source.rows;
    row.silver_rows = bucket.lake.rows;
    if (sliced_key) {
      row.source_key_sum = bucket.source.key_sum;
      row.silver_key_sum = bucket.lake.key_sum;
    }
    row.status = BucketStatusName(bucket.status);
    row.hashed = hashed[b];
    result.report.push_back(std::move(row));
    ++result.buckets;
    result.match += bucket.status == BucketStatus::kMatch;
    result.in_flight += bucket.status == BucketStatus::kInFlight;
    result.mismatch += bucket.status == BucketStatus::kMismatch;
    result.hashed += hashed[b];
  }
  for (auto& row : key_rows) result.report.push_back(std::move(row));

  // The chunk checks of the newest chunked snapshot, from the lake alone.
  if (state.has_facts) {
    if (const auto newest = NewestChunkedOfAny(lake.SnapshotEvents()); newest && newest->planned) {
      std::vector<ReportRow> chunk_rows;
      if (const auto plan = lake.Plan(newest->opened.app_id, newest->opened.snapshot)) {
        chunk_rows = CheckChunks(*plan, *newest, lake.ChunkTallies(newest->opened.snapshot.ToString()));
      } else {
        ReportRow missing;
        missing.failure_type = "CHUNK_TILING";
        missing.detail = nlohmann::json({{"snapshot", newest->opened.snapshot.ToString()}, {"plan", "missing"}}).dump();
        chunk_rows.push_back(std::move(missing));
      }
      for (auto& row : chunk_rows) {
        ++result.failures[*row.failure_type];
        result.report.push_back(std::move(row));
      }
    }
  }
  return result;
}

}  // namespace mssql_cdc
