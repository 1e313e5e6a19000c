#include "engine/checkpoint_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/time.h"
#include "core/user_text.h"
#include "engine/checkpoint_directory.h"
#include "storage/store.h"

namespace mssql_cdc {
namespace {

constexpr char kOwnerFile[] = "owner.json";

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// Whether process `pid` runs now (on this host).
bool ProcessLives(long long pid) {
  if (pid <= 0 || pid > INT_MAX) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The process holding a flock on `directory`, as Linux lists it in /proc/locks
// ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:246947 0 EOF"); nullopt when it cannot tell.
std::optional<long long> FlockHolder(const std::string& directory) {
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0) return std::nullopt;
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string id, kind, mode, access, device_inode;
    long long pid = 0;
    in >> id >> kind;
    if (kind == "->") continue;  // a waiter, not the holder
    if (!(in >> mode >> access >> pid >> device_inode) || kind != "FLOCK") continue;
    unsigned major_dev = 0, minor_dev = 0;
    unsigned long long inode = 0;
    if (std::sscanf(device_inode.c_str(), "%x:%x:%llu", &major_dev, &minor_dev, &inode) != 3) {
      continue;
    }
    if (major_dev == major(st.st_dev) && minor_dev == minor(st.st_dev) && inode == st.st_ino) {
      return pid;
    }
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<CheckpointLock> CheckpointLock::Acquire(const std::string& directory) {
  if (storage::IsObjectStoreUri(directory)) {
    return std::unique_ptr<CheckpointLock>(new CheckpointLock(directory, -1));
  }
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    throw SourceError("checkpoint " + directory + " cannot be opened: " + std::strerror(errno));
  }
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      throw CheckpointInUseError(
          "checkpoint " + directory + " is in use by " + DescribeHolder(directory) +
          ": one run per stream at a time; wait for that run to end, or stop it, and start "
          "this one again");
    }
    throw SourceError("checkpoint " + directory + " cannot be locked: " + std::strerror(error));
  }
  return std::unique_ptr<CheckpointLock>(new CheckpointLock(directory, fd));
}

CheckpointLock::~CheckpointLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor unlocks
}

void CheckpointLock::RecordOwner() {
  nlohmann::json doc = {{"pid", static_cast<long long>(::getpid())},
                        {"host", HostName()},
                        {"since", FormatIsoMillis(NowUtc().value) + "Z"}};
  CheckpointDirectory(directory_).Write(kOwnerFile, doc.dump() + "\n");
}

std::string CheckpointLock::DescribeHolder(const std::string& directory) {
  const bool object_store = storage::IsObjectStoreUri(directory);
  const std::optional<long long> holder =
      object_store ? std::nullopt : FlockHolder(directory);
  const std::string text = CheckpointDirectory(directory).Read(kOwnerFile).value_or("");
  const auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const bool recorded = doc.is_object() && doc.contains("pid") && doc["pid"].is_number_integer();
  if (recorded) {
    const long long pid = doc["pid"].get<long long>();
    const std::string host = doc.value("host", "");
    // owner.json outlives its writer: it names the holder only when it names a live process
    // that holds the lock (or, on another host, when this one cannot tell).
    const bool current = host == HostName() ? (holder ? *holder == pid : ProcessLives(pid))
                                            : !holder;
    if (current) {
      return "process " + std::to_string(pid) + " on host " + QuoteUserText(host) + " since " +
             QuoteUserText(doc.value("since", "an unknown time"));
    }
  }
  if (holder) {
    return "process " + std::to_string(*holder) + " on this host (" + QuoteUserText(HostName()) +
           "), which is starting up";
  }
  return "another process";
}

}  // namespace mssql_cdc
