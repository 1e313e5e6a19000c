#include "core/phase_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace mssql_cdc {
namespace {

// The log's descriptor, opened once for the process; -1 when the variable is not set.
int PhaseLogDescriptor() {
  static const int fd = [] {
    const char* path = std::getenv("MSSQL_CDC_PHASE_LOG");
    if (path == nullptr || *path == '\0') return -1;
    return ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }();
  return fd;
}

}  // namespace

void NotePhase(std::string_view line) {
  const int fd = PhaseLogDescriptor();
  if (fd < 0) return;
  std::string text(line);
  text += '\n';
  // One write: O_APPEND keeps the lines of concurrent writers whole.
  [[maybe_unused]] const ssize_t written = ::write(fd, text.data(), text.size());
}

}  // namespace mssql_cdc
