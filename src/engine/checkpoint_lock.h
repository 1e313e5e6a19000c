// Ownership of a native stream's checkpoint by one stream at a time (invariant 8 of docs/invariants.md).
//
// The lock is flock(2) on the checkpoint directory itself, so the kernel drops it when its
// holder ends however it ends: a SIGKILLed run never leaves a stale lock behind, and the next
// run can start at once. Taking it writes nothing, so a run may hold the checkpoints of all
// its tables while it still checks their input. Once past those checks the holder records who
// it is (owner.json: process id, host, since when) so that a refused process can name it. A
// second lock on the same directory, from this process or another, is refused with
// CheckpointInUseError naming the holder. Local filesystems only (flock's own limit): in an
// object store nothing is locked and owner.json only names the last run; there a batch's
// offsets, created only if absent, keep a second run from writing (stream_checkpoint.h).
#pragma once

#include <memory>
#include <string>

namespace mssql_cdc {

class CheckpointLock {
 public:
  // Locks the existing directory `directory`. Throws CheckpointInUseError naming the holder
  // when another lock holds it, SourceError when it cannot be opened.
  static std::unique_ptr<CheckpointLock> Acquire(const std::string& directory);
  ~CheckpointLock();  // releases the lock
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

  // Writes owner.json naming this process; the first write a run makes to the checkpoint.
  void RecordOwner();

  // "process 4242 on host 'etl-1' since '2026-12-01T20:15:03.120Z'" from owner.json when it
  // names the holder; else the holder's process id from the kernel's lock table when it is
  // on this host ("..., which is starting up": it has not recorded itself yet).
  static std::string DescribeHolder(const std::string& directory);

 private:
  CheckpointLock(std::string directory, int fd) : directory_(std::move(directory)), fd_(fd) {}
  std::string directory_;
  int fd_;
};

}  // namespace mssql_cdc
