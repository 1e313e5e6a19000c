#include "engine/stream_checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void Fail(const std::string& what, const std::string& path) {
  throw SourceError("checkpoint: cannot " + what + " " + path + ": " + std::strerror(errno));
}

void SyncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) Fail("open", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) Fail("fsync", path);
}

std::optional<json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    // Files are renamed into place whole, so a bad one was edited or damaged by hand.
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
  return Offset::FromJson(it->dump());
}

std::int64_t IntField(const json& doc, const char* key, const std::string& path) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_number_integer()) {
    throw SourceError("checkpoint file " + path + " has no integer \"" + key + "\"");
  }
  return it->get<std::int64_t>();
}

// The batch ids of the files <id>.json in `dir`, highest first.
std::optional<std::int64_t> HighestBatchId(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  std::optional<std::int64_t> highest;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 5 || name.substr(name.size() - 5) != ".json") continue;
    const std::string stem = name.substr(0, name.size() - 5);
    if (stem.empty() || stem.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::int64_t id = std::stoll(stem);
    if (!highest || id > *highest) highest = id;
  }
  return highest;
}

// Paths compare as absolute normal forms, so "bronze" and "./bronze" are one target; URIs
// compare as written.
std::string NormalTarget(const std::string& target) {
  if (target.find("://") != std::string::npos) return target;
  return fs::absolute(fs::path(target)).lexically_normal().string();
}

}  // namespace

void WriteFileAtomically(const std::string& path, const std::string& contents) {
  const fs::path target(path);
  // A hidden name beside the target, so the rename stays on one filesystem.
  std::string temp_name = ".";
  temp_name.append(target.filename().string());
  temp_name.append(".tmp.");
  temp_name.append(std::to_string(::getpid()));
  const std::string temp = (target.parent_path() / temp_name).string();
  {
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) Fail("create", temp);
    std::size_t written = 0;
    while (written < contents.size()) {
      const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        ::close(fd);
        Fail("write", temp);
      }
      written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
      ::close(fd);
      Fail("fsync", temp);
    }
    ::close(fd);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) Fail("rename into place", path);
  SyncPath(target.parent_path().string(), /*directory=*/true);
}

StreamCheckpoint::StreamCheckpoint(std::string directory) : directory_(std::move(directory)) {}

std::string StreamCheckpoint::Path(const std::string& relative) const {
  return (fs::path(directory_) / relative).string();
}

void StreamCheckpoint::ClaimFor(const StreamIdentity& identity) {
  std::error_code ec;
  fs::create_directories(Path("offsets"), ec);
  if (ec) throw SourceError("checkpoint: cannot create " + Path("offsets") + ": " + ec.message());
  fs::create_directories(Path("commits"), ec);
  if (ec) throw SourceError("checkpoint: cannot create " + Path("commits") + ": " + ec.message());
  auto existing = ReadIdentity();
  if (!existing) {
    json doc = {{"app_id", identity.app_id},
                {"capture_instance", identity.capture_instance},
                {"target", identity.target}};
    WriteFileAtomically(Path("stream.json"), doc.dump() + "\n");
    return;
  }
  const std::string& app_id = existing->app_id;
  const std::string& target = existing->target;
  if (app_id != identity.app_id) {
    throw ConfigError("checkpoint " + directory_ + " belongs to app_id '" + app_id +
                      "', not '" + identity.app_id +
                      "': a checkpoint keeps one app_id for its life; give this stream its own "
                      "checkpoint (a new checkpoint needs a new app_id)");
  }
  if (NormalTarget(target) != NormalTarget(identity.target)) {
    throw ConfigError("checkpoint " + directory_ + " belongs to target '" + target +
                      "', not '" + identity.target +
                      "': a checkpoint writes one table; use a new checkpoint and a new app_id "
                      "for another target");
  }
}

std::optional<Offset> StreamCheckpoint::ReadStart() const {
  const std::string path = Path("start.json");
  auto doc = ReadJsonFile(path);
  if (!doc) return std::nullopt;
  return OffsetFrom(*doc, "start", path);
}

void StreamCheckpoint::WriteStart(const Offset& start) {
  WriteFileAtomically(Path("start.json"), json{{"start", OffsetJson(start)}}.dump() + "\n");
}

std::optional<SnapshotState> StreamCheckpoint::ReadSnapshot() const {
  const std::string path = Path("snapshot.json");
  auto doc = ReadJsonFile(path);
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
  WriteFileAtomically(Path("snapshot.json"), doc.dump() + "\n");
}

std::optional<BatchOffsets> StreamCheckpoint::ReadOffsets(std::int64_t batch_id) const {
  const std::string path = Path("offsets/" + std::to_string(batch_id) + ".json");
  auto doc = ReadJsonFile(path);
  if (!doc) return std::nullopt;
  BatchOffsets offsets;
  offsets.batch_id = IntField(*doc, "batch_id", path);
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
  WriteFileAtomically(Path("offsets/" + std::to_string(offsets.batch_id) + ".json"),
                      doc.dump() + "\n");
}

std::optional<BatchCommit> StreamCheckpoint::ReadCommit(std::int64_t batch_id) const {
  const std::string path = Path("commits/" + std::to_string(batch_id) + ".json");
  auto doc = ReadJsonFile(path);
  if (!doc) return std::nullopt;
  return BatchCommit{IntField(*doc, "batch_id", path), IntField(*doc, "bronze_version", path),
                     IntField(*doc, "rows", path)};
}

void StreamCheckpoint::WriteCommit(const BatchCommit& commit) {
  json doc = {{"batch_id", commit.batch_id},
              {"bronze_version", commit.bronze_version},
              {"rows", commit.rows}};
  WriteFileAtomically(Path("commits/" + std::to_string(commit.batch_id) + ".json"),
                      doc.dump() + "\n");
}

RecoveryPoint StreamCheckpoint::Recover() const {
  RecoveryPoint point;
  const auto last_planned = HighestBatchId(Path("offsets"));
  if (!last_planned) return point;
  auto offsets = ReadOffsets(*last_planned);
  if (!ReadCommit(*last_planned)) {
    point.replay = offsets;
    point.next_batch_id = *last_planned;
    return point;
  }
  point.next_batch_id = *last_planned + 1;
  point.next_start = offsets->end;
  return point;
}

std::optional<StreamIdentity> StreamCheckpoint::ReadIdentity() const {
  auto doc = ReadJsonFile(Path("stream.json"));
  if (!doc) return std::nullopt;
  return StreamIdentity{doc->value("app_id", ""), doc->value("capture_instance", ""),
                        doc->value("target", "")};
}

}  // namespace mssql_cdc
