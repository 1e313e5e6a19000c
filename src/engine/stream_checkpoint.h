// The checkpoint directory of a native stream: what it has done and where it goes on.
//
// The directory may be local or in an object store (checkpoint_directory.h). Layout (every
// file JSON, written whole, so a crash leaves the old file or the new one, never a torn one):
//   stream.json            identity {"app_id", "capture_instance", "target"}: written once;
//                          a checkpoint belongs to one app_id and one target for its life.
//   start.json             the offset the first batch starts after, written once.
//   snapshot.json          bootstrap state {"state": "open"|"done", "lsn", "commit_ts",
//                          "rows", "bronze_version"}.
//   offsets/<id>.json      {"batch_id", "start", "end"[, "read_from", "skipped"]}: written
//                          before the batch reads anything, created only if absent: a batch
//                          another run planned with another range is refused
//                          (CheckpointInUseError), the fence between runs where no lock is.
//   commits/<id>.json      {"batch_id", "bronze_version", "rows", "bronze_txn"}: written
//                          after the batch's bronze and facts commits; the first one stands.
//   owner.json             {"pid", "host", "since"}: the run that holds the checkpoint's lock
//                          (checkpoint_lock.h), for the message of a run it refuses.
// The highest batch with offsets but no commit marker is replayed with the same range; else
// the next batch starts at the end of the highest committed one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/lsn.h"
#include "core/offset.h"
#include "engine/checkpoint_directory.h"

namespace mssql_cdc {

struct StreamIdentity {
  std::string app_id;
  std::string capture_instance;
  std::string target;
};

// The range of one batch as planned. `read_from` is set when the batch skips purged changes
// (failOnDataLoss=false): it reads from there instead of increment(start.lsn).
struct BatchOffsets {
  std::int64_t batch_id = 0;
  Offset start;
  Offset end;
  std::optional<Lsn> read_from;
  std::optional<UtcMicros> lost_to_ts;  // commit time of read_from, for the data_skipped row
};

struct BatchCommit {
  std::int64_t batch_id = 0;
  std::int64_t bronze_version = -1;  // -1: the batch wrote no bronze commit
  std::int64_t rows = 0;
  // The stream's txn version in bronze once this batch is done: the id of the newest batch
  // that wrote rows, -1 when none has. Markers written before this field existed lack it.
  std::optional<std::int64_t> bronze_txn;
};

struct SnapshotState {
  bool done = false;
  Offset offset;  // the snapshot LSN L and its UTC commit time
  std::int64_t rows = 0;
  std::int64_t bronze_version = -1;
};

// Where the stream stands when it starts: the batch to replay, or the next one's id and start.
struct RecoveryPoint {
  std::optional<BatchOffsets> replay;     // offsets without commit marker
  std::int64_t next_batch_id = 0;         // when there is nothing to replay
  std::optional<Offset> next_start;       // end of the last committed batch; nullopt: none yet
  // What bronze must hold for this checkpoint's app id after the committed batches: the id of
  // the newest committed batch that wrote rows, -1 when none has (BatchCommit::bronze_txn).
  std::int64_t bronze_txn = -1;
};

class StreamCheckpoint {
 public:
  explicit StreamCheckpoint(std::string directory);

  const std::string& directory() const { return dir_.location(); }
  // CheckpointDirectory::Exists and Create.
  bool Exists() const { return dir_.Exists(); }
  void Create() { dir_.Create(); }

  // Creates the directory and stream.json when missing; otherwise checks that stream.json
  // names the same app_id and target (ConfigError: a new checkpoint needs a new app_id).
  void ClaimFor(const StreamIdentity& identity);
  // Reads and checks what ClaimFor, ReadStart, ReadSnapshot and Recover will read, writing
  // nothing: the identity (ConfigError), and every file they use (SourceError naming a file
  // that is damaged, out of range or not mssql-cdc's).
  void Check(const StreamIdentity& identity) const;

  std::optional<Offset> ReadStart() const;
  void WriteStart(const Offset& start);

  std::optional<SnapshotState> ReadSnapshot() const;
  void WriteSnapshot(const SnapshotState& state);

  // The identity stream.json holds; nullopt when there is none (not a checkpoint yet).
  std::optional<StreamIdentity> ReadIdentity() const;

  RecoveryPoint Recover() const;
  // Throws CheckpointInUseError when the batch's offsets exist with another range.
  void WriteOffsets(const BatchOffsets& offsets);
  void WriteCommit(const BatchCommit& commit);
  std::optional<BatchOffsets> ReadOffsets(std::int64_t batch_id) const;
  std::optional<BatchCommit> ReadCommit(std::int64_t batch_id) const;

 private:
  std::string Path(const std::string& relative) const;
  void CheckIdentity(const StreamIdentity& identity) const;
  // RecoveryPoint::bronze_txn after the committed batch `last`.
  std::int64_t BronzeTxnAfter(std::int64_t last) const;
  CheckpointDirectory dir_;
};

}  // namespace mssql_cdc
