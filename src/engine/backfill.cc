#include "engine/backfill.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/phase_log.h"
#include "core/user_text.h"
#include "core/timezone.h"
#include "delta/data_file_io.h"
#include "engine/bootstrap.h"
#include "engine/facts.h"
#include "snapshot/plans_table.h"
#include "snapshot/snapshot_stamp.h"
#include "source/key_extent.h"

namespace mssql_cdc {
namespace {

using Clock = std::chrono::steady_clock;

// Whether the plans table keeps its snapshots as rows of events (0.8.0's layout, in which a
// table is made now) rather than as the rows of chunks earlier releases made.
bool PlansInEventRows(BackfillTables& tables) {
  const auto columns = tables.PlansColumns();
  return !columns || PlansLayoutOf(*columns) == PlansLayout::kEventRows;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::int64_t MillisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

void CheckNonNegative(const std::optional<double>& value, const char* name) {
  if (value && !(std::isfinite(*value) && *value >= 0)) {
    throw ConfigError(std::string("backfill: ") + name + " must be a number of 0 or more, not " +
                      std::to_string(*value));
  }
}

BackfillStatus Ended(BackfillStatus status, std::string state, std::string reason) {
  status.state = std::move(state);
  status.reason = std::move(reason);
  status.done = status.state == "done";
  status.paused = status.state != "done" && status.state != "running";
  return status;
}

// What a wave's bronze commit recorded in its userMetadata: its chunks, and their rows when
// the writer knew them before the commit (a writer that counts them after, Spark's, leaves
// them out: `rows` of bronze's snapshot rows then say). nullopt when it is no wave of this
// snapshot.
std::optional<WaveWritten> WaveOfMetadata(const std::optional<std::string>& metadata,
                                          const Lsn& snapshot, BackfillTables& tables) {
  if (!metadata) return std::nullopt;
  auto doc = nlohmann::json::parse(*metadata, nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  // This engine names the snapshot; 0.8.0 names the wave's txn app id, <app_id>#snap.<S>.
  const std::string backfill = doc.value("backfill", std::string());
  const std::string suffix = "#snap." + snapshot.ToString();
  const bool reference = backfill.size() > suffix.size() &&
                         backfill.compare(backfill.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (doc.value("snapshot", std::string()) != snapshot.ToString() && !reference) return std::nullopt;
  const auto chunks = doc.find("chunks");
  if (chunks == doc.end() || !chunks->is_array()) return std::nullopt;
  WaveWritten wave;
  const auto rows = doc.find("rows");
  std::optional<std::map<int, std::int64_t>> counted;
  for (const auto& chunk : *chunks) {
    // A chunk's number, or 0.8.0's object {chunk, lo, hi, last, rows, ...}.
    const bool object = chunk.is_object();
    const auto number = object ? chunk.value("chunk", nlohmann::json()) : chunk;
    if (!number.is_number_integer()) return std::nullopt;
    const int index = number.get<int>();
    if (object && chunk.value("rows", nlohmann::json()).is_number_integer()) {
      wave.rows[index] = chunk["rows"].get<std::int64_t>();
      continue;
    }
    if (rows != doc.end() && rows->is_object() && rows->contains(std::to_string(index))) {
      wave.rows[index] = (*rows)[std::to_string(index)].get<std::int64_t>();
      continue;
    }
    if (!counted) counted = tables.ChunkRows(snapshot);
    auto it = counted->find(index);
    wave.rows[index] = it == counted->end() ? 0 : it->second;
  }
  return wave;
}

// The userMetadata of a wave's bronze commit: its chunks with their rows, from which its facts
// rows are rebuilt after a stop between the two (WaveOfMetadata). On a snapshot whose plan is
// kept in rows of events (`events_plan`, 0.8.0's layout), the chunks are 0.8.0's WaveChunk
// objects and 0.8.0's WaveMetadata keys are added, so that 0.8.0 can rebuild them too.
std::string WaveCommitMetadata(const std::string& ci, const Lsn& snapshot, const Offset& stamp, std::int64_t wave,
                               const std::vector<int>& chunks, const WaveWritten& written,
                               const std::optional<Lsn>& max_after, const ChunkPlan* events_plan,
                               const std::string& wave_txn) {
  nlohmann::json listed = nlohmann::json::array();
  for (int index : chunks) {
    if (!events_plan) {
      listed.push_back(index);
      continue;
    }
    const auto rows = written.rows.find(index);
    const auto seconds = written.seconds.find(index);
    listed.push_back({{"chunk", index},
                      {"lo", events_plan->chunks[index].lo},
                      {"hi", events_plan->chunks[index].hi},
                      {"last", index + 1 == static_cast<int>(events_plan->chunks.size())},
                      {"rows", rows == written.rows.end() ? nlohmann::json(nullptr) : nlohmann::json(rows->second)},
                      {"high_lsn", stamp.lsn.ToString()},
                      {"read_seconds",
                       seconds == written.seconds.end() ? nlohmann::json(nullptr) : nlohmann::json(seconds->second)},
                      {"read_mb", nullptr}});
  }
  nlohmann::json per_chunk = nlohmann::json::object();
  for (const auto& [chunk, count] : written.rows) per_chunk[std::to_string(chunk)] = count;
  nlohmann::json metadata{{"chunked_snapshot", ci},
                          {"snapshot", snapshot.ToString()},
                          {"lsn", stamp.lsn.ToString()},
                          {"wave", wave},
                          {"chunks", listed},
                          {"rows", per_chunk},
                          {"max_lsn", max_after ? nlohmann::json(max_after->ToString()) : nlohmann::json(nullptr)}};
  if (events_plan) {
    metadata["backfill"] = wave_txn;
    std::string attempt = delta::RandomUuid();  // as uuid4().hex: the dashes left out
    attempt.erase(std::remove(attempt.begin(), attempt.end(), '-'), attempt.end());
    metadata["attempt"] = attempt;
  }
  return metadata.dump();
}

}  // namespace

std::string WaveTxnAppId(const std::string& app_id, const Lsn& snapshot) {
  return app_id + "#snap." + snapshot.ToString();
}
std::string ChunkFactsTxnAppId(const std::string& app_id, const Lsn& snapshot) {
  return app_id + "#snapchunks." + snapshot.ToString();
}
std::string OpensTxnAppId(const std::string& app_id) { return app_id + "#snapshots"; }

std::string OpenTxnAppId(const std::string& app_id, const Lsn& snapshot) {
  return app_id + "#snapopen." + snapshot.ToString();
}

std::string BackfillStatus::ToJson() const {
  return nlohmann::json{{"snapshot", snapshot ? nlohmann::json(*snapshot) : nlohmann::json(nullptr)},
                        {"chunks_done", chunks_done},
                        {"chunks_total", chunks_total ? nlohmann::json(*chunks_total) : nlohmann::json(nullptr)},
                        {"rows", rows},
                        {"done", done},
                        {"paused", paused},
                        {"state", state},
                        {"reason", reason}}
      .dump();
}

ChunkedOpenResult OpenChunkedSnapshot(const SnapshotSubject& subject, const SnapshotCause& cause,
                                      Source& source, const SourceClock& clock,
                                      BackfillTables& tables) {
  const auto events = tables.SnapshotEvents();
  const std::string& ci = subject.instance.name;
  CheckModeLock(events, subject.app_id, SnapshotMode::kChunked,
                "to_delta(bootstrap=True, snapshot=\"chunked\")", source.MinLsn(ci));
  ChunkedOpenResult result;
  auto existing = NewestChunked(events, subject.app_id);
  // Another generation's.
  if (existing && existing->opened.app_id != subject.app_id) existing.reset();
  if (existing) {
    result.snapshot = SnapshotStamp(source, clock, subject.instance, existing->opened.snapshot);
    spdlog::info("bootstrap of capture instance '{}': the chunked snapshot at LSN {} is {}; the "
                 "stream starts there",
                 ci, result.snapshot.lsn.ToString(), existing->opened.complete ? "complete" : "open");
    return result;
  }
  if (auto found = cause.is_resnapshot() ? std::nullopt : tables.FindSnapshot(subject.instances)) {
    result.found = found;
    result.snapshot = found->offset;
    return result;
  }
  // The key columns; a key that cannot be read in ranges is refused here, before any write.
  std::vector<std::string> keys;
  ChunkPlanKind(subject.instance, subject.columns, subject.key_columns, &keys);
  // Recorded before anything is read: every change after S reaches bronze through the stream.
  result.snapshot = SnapshotStamp(source, clock, subject.instance);
  const FactsRow opened = ChunkedOpenFactsRow(subject.app_id, subject.target, result.snapshot, cause);
  // The key's extent, which the facts row leaves out, goes to the plans table as 0.8.0 keeps it
  // there, so that 0.8.0 can plan a snapshot opened here (a table in the earlier layout of one
  // row per chunk has no place for it, and needs none).
  std::optional<nlohmann::ordered_json> extent;
  if (PlansInEventRows(tables)) extent = SnapshotExtent(source, KeyQuery{ci, keys});
  // For the log: the estimate an integer key's extent holds, else the source's.
  const std::int64_t estimate = extent && extent->contains("rows")
                                    ? (*extent)["rows"].get<std::int64_t>()
                                    : source.RowEstimate(ci);
  if (extent) {
    auto detail = nlohmann::ordered_json::parse(opened.detail.value_or("{}"));
    detail["keys"] = keys;
    detail["plan"] = *extent;
    tables.WritePlan(OpenToEventRows(result.snapshot.lsn, detail),
                     delta::Txn{OpenTxnAppId(subject.app_id, result.snapshot.lsn), 0, std::nullopt});
  }
  tables.AppendFacts(FactsToRecordBatch({opened}),
                     delta::Txn{OpensTxnAppId(subject.app_id), cause.generation, std::nullopt});
  result.opened_now = true;
  spdlog::info("bootstrap of capture instance '{}' into {}: chunked snapshot opened at LSN {} "
               "(about {} rows); backfill reads it in waves next to the stream",
               ci, subject.target, result.snapshot.lsn.ToString(), estimate);
  return result;
}

NativeBackfillOptions NativeBackfillOptions::Parse(const Options& options) {
  NativeBackfillOptions parsed;
  auto number = [](const std::string& name, const std::string& value) {
    double out = 0;
    const auto* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), end, out);
    if (ec != std::errc() || ptr != end || !std::isfinite(out) || out < 0) {
      throw ConfigError("[backfill] " + name + " = " + QuoteUserText(value) +
                        " must be a number of 0 or more");
    }
    return out;
  };
  auto count = [](const std::string& name, const std::string& value) {
    std::int64_t out = 0;
    const auto* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), end, out);
    if (ec != std::errc() || ptr != end || out < 1) {
      throw ConfigError("[backfill] " + name + " = " + QuoteUserText(value) +
                        " must be a whole number of at least 1");
    }
    return out;
  };
  for (const auto& [name, value] : options.entries()) {
    std::string key;
    for (char c : AsciiLower(name)) {
      if (c != '_') key += c;
    }
    if (key == "chunkrows") {
      parsed.chunk_rows = count("chunk_rows", value);
    } else if (key == "partitions") {
      parsed.partitions = static_cast<int>(std::min<std::int64_t>(count("partitions", value), 1024));
    } else if (key == "minheadroomhours") {
      parsed.min_headroom_hours = number("min_headroom_hours", value);
    } else if (key == "targetwaveseconds") {
      parsed.target_wave_seconds = number("target_wave_seconds", value);
    } else {
      throw ConfigError("unknown [backfill] key " + QuoteUserText(name) +
                        ": the keys are chunk_rows, partitions, min_headroom_hours, "
                        "target_wave_seconds");
    }
  }
  return parsed;
}

void ValidateBackfillRequest(const BackfillRequest& request) {
  if (request.chunk_rows && *request.chunk_rows < 1) {
    throw ConfigError("backfill: chunk_rows must be a whole number of rows, 1 or more, not " +
                      std::to_string(*request.chunk_rows) + " (None plans chunks of " +
                      std::to_string(kDefaultChunkRows) + " rows)");
  }
  if (request.max_waves && *request.max_waves < 1) {
    throw ConfigError("backfill: max_waves must be 1 or more, not " +
                      std::to_string(*request.max_waves) + " (None reads until done)");
  }
  CheckNonNegative(request.max_seconds, "max_seconds");
  CheckNonNegative(request.target_wave_seconds, "target_wave_seconds");
  CheckNonNegative(request.min_headroom_hours, "min_headroom_hours");
  if (request.partitions < 1) {
    throw ConfigError("backfill: numPartitions must be 1 or more, not " +
                      std::to_string(request.partitions));
  }
}

BackfillStatus RunBackfill(const BackfillRequest& request, Source& source, SourcePool& more,
                           const SourceClock& clock, BackfillTables& tables) {
  ValidateBackfillRequest(request);
  const auto call_started = Clock::now();
  const UtcMicros call_started_at = NowUtc();
  const std::string& ci = request.instance.name;
  const auto events = tables.SnapshotEvents();
  CheckModeLock(events, request.app_id, SnapshotMode::kChunked, "backfill()", source.MinLsn(ci));
  auto progress = NewestChunked(events, request.app_id);
  BackfillStatus status;
  if (!progress) {
    return Ended(status, "no_snapshot",
                 "no chunked snapshot was opened for stream '" + request.app_id + "' into " +
                     request.target + ": open one with to_delta(..., bootstrap=True, "
                     "snapshot=\"chunked\") (natively: snapshot = \"chunked\" and bootstrap = "
                     "true in the pipeline file), with the same app_id and target");
  }
  const OpenedSnapshot& opened = progress->opened;
  const std::string& app_id = opened.app_id;
  const Lsn& s = opened.snapshot;
  status.snapshot = s.ToString();
  const Offset snapshot = SnapshotStamp(source, clock, request.instance, s);
  // In the layout of one row per event (0.8.0's), the plan is written, and each wave recorded,
  // as 0.8.0 does.
  const bool event_rows = PlansInEventRows(tables);

  // The plan: read back, or made now and written before its facts row.
  std::optional<ChunkPlan> plan;
  if (progress->planned) {
    if (progress->chunks_total > 0) {
      plan = tables.ReadPlan(app_id, s);
      if (!plan) {
        throw ConfigError("plans table " + request.plans_table + " holds no plan of stream '" +
                          app_id + "' at LSN " + s.ToString() + ", which its snapshot_plan facts "
                          "row says was written: it was deleted by hand; restore the table from "
                          "its history (Delta RESTORE), or start a new chunked snapshot with a new "
                          "app_id and checkpoint");
      }
      // 0.8.0's snapshot_plan row records no digest.
      if (!progress->plan_digest.empty() && ChunkPlanDigest(*plan) != progress->plan_digest) {
        throw ConfigError("plans table " + request.plans_table + ": the plan of stream '" +
                          app_id + "' at LSN " + s.ToString() + " differs from the one planned "
                          "(digest " + progress->plan_digest + "): it was edited by hand; restore "
                          "the table from its history (Delta RESTORE), or start a new chunked "
                          "snapshot with a new app_id and checkpoint");
      }
    } else {
      plan = ChunkPlan{};
    }
    if (request.chunk_rows && plan->chunk_rows && *request.chunk_rows != plan->chunk_rows &&
        progress->chunks_total > 0) {
      spdlog::warn("backfill of '{}': chunk_rows {} ignored; the snapshot was planned with {}", ci,
                   *request.chunk_rows, plan->chunk_rows);
    }
  } else {
    plan = tables.ReadPlan(app_id, s);  // written before a crash, without its facts row
    if (!plan) {
      ChunkPlanRequest planning;
      planning.instance = request.instance;
      planning.columns = request.columns;
      planning.key_columns = request.key_columns;
      planning.chunk_rows = request.chunk_rows.value_or(kDefaultChunkRows);
      planning.partitions = request.partitions;
      planning.rows_estimate = opened.rows_estimate;
      const auto planning_started = Clock::now();
      ChunkPlan made = PlanChunks(planning, source, &more);
      spdlog::info("backfill of '{}': planned {} chunks of at most {} rows ({} key) in {:.1f} s",
                   ci, made.chunks.size(), made.chunk_rows, made.kind, SecondsSince(planning_started));
      const delta::Txn txn{PlanTxnAppId(app_id, s), 0, std::nullopt};
      if (!made.chunks.empty()) {
        const auto rows = event_rows ? PlanToEventRows(made, s)
                                          : PlanToRecordBatch(made, app_id, s, ci, NowUtc());
        if (tables.WritePlan(rows, txn)) {
          plan = std::move(made);
        } else {
          // Another call won the plan's txn: the table's plan is the plan.
          plan = tables.ReadPlan(app_id, s);
          if (!plan) throw InternalError("the plan just written is not in " + request.plans_table);
        }
      } else {
        plan = std::move(made);
      }
    }
    tables.AppendFacts(FactsToRecordBatch({SnapshotPlanFactsRow(
                           app_id, request.target, snapshot, plan->kind, plan->keys,
                           plan->chunk_rows, static_cast<int>(plan->chunks.size()),
                           ChunkPlanDigest(*plan), request.plans_table)}),
                       delta::Txn{PlanTxnAppId(app_id, s), 0, std::nullopt});
    progress->planned = true;
    progress->chunks_total = static_cast<int>(plan->chunks.size());
  }
  const int total = static_cast<int>(plan->chunks.size());
  status.chunks_total = total;

  // A wave in bronze without its facts rows (a crash between the two): rebuilt from the commit.
  const std::string wave_txn = WaveTxnAppId(app_id, s);
  const std::string chunk_txn = ChunkFactsTxnAppId(app_id, s);
  auto [last_wave, last_metadata] = tables.LastWave(wave_txn);
  const std::int64_t facts_wave = progress->last_wave();
  auto record_wave = [&](std::int64_t wave, const WaveWritten& written, const Offset& stamp,
                         const std::optional<Lsn>& max_after, UtcMicros started_at,
                         std::int64_t duration_ms) {
    std::set<int> done = progress->done();
    for (const auto& [chunk, rows] : written.rows) done.insert(chunk);
    const bool completes = static_cast<int>(done.size()) == total;
    std::vector<FactsRow> rows;
    std::vector<ChunkRead> reads;
    for (const auto& [chunk, count] : written.rows) {
      if (progress->done().count(chunk)) continue;
      ChunkFacts facts{chunk, count, std::nullopt, false};
      if (auto seconds = written.seconds.find(chunk); seconds != written.seconds.end()) {
        facts.read_seconds = seconds->second;
      }
      facts.last = completes && chunk == written.rows.rbegin()->first;
      rows.push_back(SnapshotChunkFactsRow(app_id, request.target, s, wave, facts, stamp, max_after,
                                           started_at, duration_ms));
      reads.push_back(ChunkRead{chunk, wave, facts.last});
      progress->chunks.push_back(ChunkRecord{chunk, wave, count, facts.last, duration_ms});
    }
    if (rows.empty()) return;
    // 0.8.0 reads which chunks are done from its plans table; the facts rows come after, as the
    // record this engine reads.
    if (event_rows) {
      tables.WritePlan(ChunksToEventRows(*plan, s, reads), delta::Txn{chunk_txn, wave, std::nullopt});
    }
    tables.AppendFacts(FactsToRecordBatch(rows), delta::Txn{chunk_txn, wave, std::nullopt});
  };
  if (last_wave > facts_wave) {
    std::optional<WaveWritten> rebuilt = WaveOfMetadata(last_metadata, s, tables);
    Offset stamp = snapshot;
    std::optional<Lsn> max_after;
    if (rebuilt && last_metadata) {
      const auto doc = nlohmann::json::parse(*last_metadata);
      stamp = SnapshotStamp(source, clock, request.instance, Lsn::ParseLenient(doc.value("lsn", s.ToString())));
      if (doc.contains("max_lsn") && doc["max_lsn"].is_string()) {
        max_after = Lsn::ParseLenient(doc["max_lsn"].get<std::string>());
      }
    } else {
      // The commit left the log: the rows of bronze tell which chunks it held.
      rebuilt = WaveWritten{};
      const auto done = progress->done();
      for (const auto& [chunk, rows] : tables.ChunkRows(s)) {
        if (!done.count(chunk)) rebuilt->rows[chunk] = rows;
      }
    }
    spdlog::info("backfill of '{}': wave {} reached bronze before a stop; its {} chunk facts "
                 "rows are written from its commit",
                 ci, last_wave, rebuilt->rows.size());
    record_wave(last_wave, *rebuilt, stamp, max_after, call_started_at, 0);
  }

  auto complete = [&]() {
    status.chunks_done = static_cast<std::int64_t>(progress->done().size());
    status.rows = progress->rows();
    if (!opened.complete) {
      Lsn last_lsn = s;
      FactsRow row = ChunkedCompletionFactsRow(app_id, request.target, opened.kind, snapshot, total,
                                               status.rows, last_lsn, call_started_at,
                                               MillisSince(call_started));
      row.lost_from_ts = opened.lost_from_ts;
      row.lost_to_ts = opened.lost_to_ts;
      tables.AppendFacts(
          FactsToRecordBatch({row}),
          delta::Txn{EventsTxnAppId(app_id), opened.generation, std::nullopt});
      spdlog::info("backfill of '{}': chunked snapshot at LSN {} complete: {} chunks, {} rows", ci,
                   s.ToString(), total, status.rows);
    }
    return Ended(status, "done", "every chunk of the snapshot at LSN " + s.ToString() +
                                     " is in bronze");
  };
  if (opened.complete || static_cast<int>(progress->done().size()) >= total) return complete();

  const int partitions = request.partitions;
  std::int64_t waves = 0;
  for (;;) {
    status.chunks_done = static_cast<std::int64_t>(progress->done().size());
    status.rows = progress->rows();
    if (request.stop && request.stop()) return Ended(status, "running", "the run is stopping");
    if (request.max_waves && waves >= *request.max_waves) {
      return Ended(status, "running", "max_waves (" + std::to_string(*request.max_waves) +
                                          ") read in this call; call backfill again");
    }
    const double elapsed = SecondsSince(call_started);
    if (request.max_seconds && waves > 0 && elapsed >= *request.max_seconds) {
      return Ended(status, "running", "max_seconds passed; call backfill again");
    }
    if (request.min_headroom_hours) {
      const auto headroom = tables.NewestHeadroom(app_id);
      if (!headroom) {
        return Ended(status, "waiting_metrics",
                     "the stream has written no facts row with retention headroom yet; call "
                     "backfill again once it has run a batch");
      }
      const double left = headroom->first - headroom->second;
      if (left < *request.min_headroom_hours) {
        return Ended(status, "waiting_headroom",
                     "the stream's retention headroom is " + std::to_string(left) +
                         " hours, under min_headroom_hours " +
                         std::to_string(*request.min_headroom_hours) + "; the stream catches up first");
      }
    }
    std::optional<double> seconds_left;
    if (request.max_seconds) seconds_left = std::max(0.0, *request.max_seconds - elapsed);
    const int rounds = RoundsForWave(progress->seconds_per_round(partitions),
                                     request.target_wave_seconds.value_or(300), seconds_left);
    const auto chunks = NextWaveChunks(total, progress->done(), rounds * partitions);
    // Stamped before the read: no chunk row is older than its stamp (P1), and L >= S (P2).
    const Offset stamp = SnapshotStamp(source, clock, request.instance);
    if (stamp.lsn < s) {
      throw SourceError("backfill of '" + ci + "': the source's max LSN " + stamp.lsn.ToString() +
                        " is below the snapshot's LSN " + s.ToString() +
                        ": is this a readable secondary behind the primary the stream read? Read "
                        "the backfill from the same server as the stream");
    }
    WaveRead read;
    read.capture_instance = ci;
    read.keys = plan->keys;
    for (int index : chunks) read.chunks.push_back(plan->chunks[index]);
    read.stamp = stamp;
    read.snapshot = s;
    // Past every wave bronze or the facts know: Delta skips a txn version it holds.
    read.wave = std::max(last_wave, progress->last_wave()) + 1;
    NotePhase(ci + " wave " + std::to_string(read.wave) + " reading");
    const auto wave_started = Clock::now();
    const UtcMicros wave_started_at = NowUtc();
    std::optional<Lsn> max_after;
    WaveWritten written = tables.AppendWave(read, delta::Txn{wave_txn, read.wave, std::nullopt},
                                            [&](const WaveWritten& rows) {
      max_after = source.MaxLsn();
      return WaveCommitMetadata(ci, s, stamp, read.wave, chunks, rows, max_after,
                                event_rows ? &*plan : nullptr, wave_txn);
    });
    if (written.rows.empty()) {
      // Another call held this wave's txn: its commit says what it read.
      auto [version, metadata] = tables.LastWave(wave_txn);
      if (auto theirs = WaveOfMetadata(metadata, s, tables)) written = *theirs;
      read.wave = version;
    }
    NotePhase(ci + " wave " + std::to_string(read.wave) + " in_bronze");
    const std::int64_t wave_ms = MillisSince(wave_started);
    record_wave(read.wave, written, stamp, max_after, wave_started_at, wave_ms);
    NotePhase(ci + " wave " + std::to_string(read.wave) + " recorded");
    last_wave = read.wave;
    ++waves;
    spdlog::info("backfill of '{}': wave {} read {} chunks ({} rows) in {:.1f} s; {} of {} done", ci,
                 read.wave, written.rows.size(), [&] {
                   std::int64_t n = 0;
                   for (const auto& [c, r] : written.rows) n += r;
                   return n;
                 }(), wave_ms / 1000.0, progress->done().size(), total);
    if (static_cast<int>(progress->done().size()) >= total) return complete();
  }
}

}  // namespace mssql_cdc
