#include "engine/stream_checkpoint.h"

#include <charconv>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/user_text.h"
#include "engine/table_schemas.h"

namespace mssql_cdc {
namespace {

using nlohmann::json;

// Batch ids stay far below int64's end, so that id + 1 never overflows (2^53: exact as a
// JSON number in every reader).
constexpr std::uint64_t kMaxBatchId = 1ULL << 53;

std::optional<json> ReadJsonFile(const CheckpointDirectory& dir, const std::string& relative) {
  const std::optional<std::string> text = dir.Read(relative);
  if (!text) return std::nullopt;
  const std::string path = dir.Path(relative);
  json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    // Files are written whole, so a bad one was edited or damaged by hand.
    throw SourceError("checkpoint file " + path +
                      " is not a JSON object; restore it or start a new checkpoint with a new "
                      "app_id");
  }
  return doc;
}

json OffsetJson(const Offset& offset) { return json::parse(offset.ToJson()); }
Offset OffsetFrom(const json& doc, const char* key, const std::string& path) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_object()) {
    throw SourceError("checkpoint file " + path + " has no \"" + key + "\" offset");
  }
  try {
    return Offset::FromJson(it->dump());
  } catch (const ConfigError& e) {
    throw SourceError("checkpoint file " + path + ": \"" + key + "\" is " + e.what() +
                      "; restore the file or start a new checkpoint with a new app_id");
  }
}

std::int64_t IntField(const json& doc, const char* key, const std::string& path) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_number_integer() ||
      (it->is_number_unsigned() && it->get<std::uint64_t>() > kMaxBatchId)) {
    throw SourceError("checkpoint file " + path + " has no integer \"" + key +
                      "\" in range; restore the file or start a new checkpoint with a new app_id");
  }
  return it->get<std::int64_t>();
}

// The batch id a file name <id>.json stands for; nullopt for other names. An id past
// kMaxBatchId was not written by mssql-cdc: SourceError naming the file.
std::optional<std::int64_t> BatchIdOfName(const std::string& dir, const std::string& name) {
  constexpr std::string_view kSuffix = ".json";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return std::nullopt;
  const std::string_view stem(name.data(), name.size() - kSuffix.size());
  if (stem.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::int64_t id = 0;
  const auto [end, error] = std::from_chars(stem.data(), stem.data() + stem.size(), id);
  if (error != std::errc() || end != stem.data() + stem.size() ||
      id > static_cast<std::int64_t>(kMaxBatchId)) {
    throw SourceError("checkpoint file " + dir + "/" + name +
                      " names batch " + QuoteUserText(stem) + ", out of range (0 to " +
                      std::to_string(kMaxBatchId) +
                      "); it was not written by mssql-cdc: remove it or restore the checkpoint");
  }
  return id;
}

// The highest batch id among the files <id>.json in the subdirectory `relative`.
std::optional<std::int64_t> HighestBatchId(const CheckpointDirectory& dir,
                                           const std::string& relative) {
  std::optional<std::int64_t> highest;
  for (const auto& name : dir.List(relative)) {
    const auto id = BatchIdOfName(dir.Path(relative), name);
    if (id && (!highest || *id > *highest)) highest = id;
  }
  return highest;
}

}  // namespace

StreamCheckpoint::StreamCheckpoint(std::string directory) : dir_(std::move(directory)) {}

std::string StreamCheckpoint::Path(const std::string& relative) const {
  return dir_.Path(relative);
}

void StreamCheckpoint::CheckIdentity(const StreamIdentity& identity) const {
  auto existing = ReadIdentity();
  if (!existing) return;
  const std::string& app_id = existing->app_id;
  const std::string& target = existing->target;
  if (app_id != identity.app_id) {
    throw ConfigError("checkpoint " + dir_.location() + " belongs to app_id " + QuoteUserText(app_id) +
                      ", not " + QuoteUserText(identity.app_id) +
                      ": a checkpoint keeps one app_id for its life; give this stream its own "
                      "checkpoint (a new checkpoint needs a new app_id)");
  }
  if (NormalLocation(target) != NormalLocation(identity.target)) {
    throw ConfigError("checkpoint " + dir_.location() + " belongs to target " +
                      QuoteUserText(target, kPathShown) + ", not " +
                      QuoteUserText(identity.target, kPathShown) +
                      ": a checkpoint writes one table; use a new checkpoint and a new app_id "
                      "for another target");
  }
}

void StreamCheckpoint::Check(const StreamIdentity& identity) const {
  CheckIdentity(identity);
  ReadStart();
  ReadSnapshot();
  const RecoveryPoint point = Recover();
  if (point.next_batch_id > 0) {
    const std::int64_t last = point.next_batch_id - 1;
    if (const auto commit = ReadCommit(last); commit && commit->batch_id != last) {
      throw SourceError("checkpoint file " + Path("commits/" + std::to_string(last) + ".json") +
                        " holds batch " + std::to_string(commit->batch_id) +
                        "; restore the file or start a new checkpoint with a new app_id");
    }
  }
}

void StreamCheckpoint::ClaimFor(const StreamIdentity& identity) {
  CheckIdentity(identity);
  if (ReadIdentity()) return;
  json doc = {{"app_id", identity.app_id},
              {"capture_instance", identity.capture_instance},
              {"target", identity.target}};
  if (!dir_.WriteIfAbsent("stream.json", doc.dump() + "\n")) CheckIdentity(identity);
}

std::optional<Offset> StreamCheckpoint::ReadStart() const {
  const std::string path = Path("start.json");
  auto doc = ReadJsonFile(dir_, "start.json");
  if (!doc) return std::nullopt;
  return OffsetFrom(*doc, "start", path);
}

void StreamCheckpoint::WriteStart(const Offset& start) {
  dir_.Write("start.json", json{{"start", OffsetJson(start)}}.dump() + "\n");
}

std::optional<SnapshotState> StreamCheckpoint::ReadSnapshot() const {
  const std::string path = Path("snapshot.json");
  auto doc = ReadJsonFile(dir_, "snapshot.json");
  if (!doc) return std::nullopt;
  SnapshotState state;
  state.done = doc->value("state", "") == "done";
  state.offset = OffsetFrom(*doc, "offset", path);
  state.rows = doc->value("rows", std::int64_t{0});
  state.bronze_version = doc->value("bronze_version", std::int64_t{-1});
  return state;
}

void StreamCheckpoint::WriteSnapshot(const SnapshotState& state) {
  json doc = {{"state", state.done ? "done" : "open"},
              {"offset", OffsetJson(state.offset)},
              {"rows", state.rows},
              {"bronze_version", state.bronze_version}};
  dir_.Write("snapshot.json", doc.dump() + "\n");
}

std::optional<BatchOffsets> StreamCheckpoint::ReadOffsets(std::int64_t batch_id) const {
  const std::string relative = "offsets/" + std::to_string(batch_id) + ".json";
  const std::string path = Path(relative);
  auto doc = ReadJsonFile(dir_, relative);
  if (!doc) return std::nullopt;
  BatchOffsets offsets;
  offsets.batch_id = IntField(*doc, "batch_id", path);
  if (offsets.batch_id != batch_id) {
    throw SourceError("checkpoint file " + path + " holds batch " +
                      std::to_string(offsets.batch_id) +
                      "; restore the file or start a new checkpoint with a new app_id");
  }
  offsets.start = OffsetFrom(*doc, "start", path);
  offsets.end = OffsetFrom(*doc, "end", path);
  if (auto it = doc->find("read_from"); it != doc->end() && it->is_string()) {
    offsets.read_from = Lsn::Parse(it->get<std::string>());
  }
  if (auto it = doc->find("lost_to_ts"); it != doc->end() && it->is_string()) {
    if (auto micros = ParseDateTime(it->get<std::string>())) offsets.lost_to_ts = UtcMicros{*micros};
  }
  return offsets;
}

void StreamCheckpoint::WriteOffsets(const BatchOffsets& offsets) {
  json doc = {{"batch_id", offsets.batch_id},
              {"start", OffsetJson(offsets.start)},
              {"end", OffsetJson(offsets.end)}};
  if (offsets.read_from) doc["read_from"] = offsets.read_from->ToString();
  if (offsets.lost_to_ts) doc["lost_to_ts"] = FormatIsoMillis(offsets.lost_to_ts->value);
  const std::string relative = "offsets/" + std::to_string(offsets.batch_id) + ".json";
  const std::string text = doc.dump() + "\n";
  if (dir_.WriteIfAbsent(relative, text)) return;
  // The batch was planned before: by this stream, when it replays the batch (the same range,
  // perhaps now skipping purged changes), or by another run, whose range this one must not
  // overwrite. Where no lock excludes other runs (an object store) this is what does.
  const std::optional<BatchOffsets> planned = ReadOffsets(offsets.batch_id);
  if (planned && planned->start == offsets.start && planned->end == offsets.end) {
    dir_.Write(relative, text);
    return;
  }
  throw CheckpointInUseError(
      "checkpoint " + dir_.location() + ": batch " + std::to_string(offsets.batch_id) +
      " was planned by another run (it ends at LSN " +
      (planned ? planned->end.lsn.ToString() : std::string("?")) + ", this run's at LSN " +
      offsets.end.lsn.ToString() + "): one run per stream at a time; stop the other run and "
      "start this one again");
}

std::optional<BatchCommit> StreamCheckpoint::ReadCommit(std::int64_t batch_id) const {
  const std::string relative = "commits/" + std::to_string(batch_id) + ".json";
  const std::string path = Path(relative);
  auto doc = ReadJsonFile(dir_, relative);
  if (!doc) return std::nullopt;
  BatchCommit commit{IntField(*doc, "batch_id", path), IntField(*doc, "bronze_version", path),
                     IntField(*doc, "rows", path), std::nullopt};
  if (doc->contains("bronze_txn")) commit.bronze_txn = IntField(*doc, "bronze_txn", path);
  return commit;
}

void StreamCheckpoint::WriteCommit(const BatchCommit& commit) {
  json doc = {{"batch_id", commit.batch_id},
              {"bronze_version", commit.bronze_version},
              {"rows", commit.rows}};
  if (commit.bronze_txn) doc["bronze_txn"] = *commit.bronze_txn;
  // A marker already there was written by a run that finished the same batch first; it
  // stands (the batch's bronze and facts commits are the same either way, by their txn).
  dir_.WriteIfAbsent("commits/" + std::to_string(commit.batch_id) + ".json", doc.dump() + "\n");
}

RecoveryPoint StreamCheckpoint::Recover() const {
  RecoveryPoint point;
  const auto last_planned = HighestBatchId(dir_, "offsets");
  if (!last_planned) return point;
  auto offsets = ReadOffsets(*last_planned);
  if (!ReadCommit(*last_planned)) {
    point.replay = offsets;
    point.next_batch_id = *last_planned;
    if (*last_planned > 0) point.bronze_txn = BronzeTxnAfter(*last_planned - 1);
    return point;
  }
  point.next_batch_id = *last_planned + 1;
  point.next_start = offsets->end;
  point.bronze_txn = BronzeTxnAfter(*last_planned);
  return point;
}

std::int64_t StreamCheckpoint::BronzeTxnAfter(std::int64_t last) const {
  // Markers carry it; older ones are walked back to the newest batch that wrote rows.
  for (std::int64_t id = last; id >= 0; --id) {
    const auto commit = ReadCommit(id);
    if (!commit) {
      throw SourceError("checkpoint " + dir_.location() + " has no commit marker for batch " +
                        std::to_string(id) + " before batch " + std::to_string(last + 1) +
                        "; restore commits/" + std::to_string(id) +
                        ".json or start a new checkpoint with a new app_id");
    }
    if (commit->bronze_txn) return *commit->bronze_txn;
    if (commit->bronze_version >= 0) return id;
  }
  return -1;
}

std::optional<StreamIdentity> StreamCheckpoint::ReadIdentity() const {
  auto doc = ReadJsonFile(dir_, "stream.json");
  if (!doc) return std::nullopt;
  return StreamIdentity{doc->value("app_id", ""), doc->value("capture_instance", ""),
                        doc->value("target", "")};
}

}  // namespace mssql_cdc
