#include "core/phase_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

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

// The step MSSQL_CDC_PHASE_PAUSE names, or empty.
const std::string& PauseStep() {
  static const std::string step = [] {
    const char* value = std::getenv("MSSQL_CDC_PHASE_PAUSE");
    return std::string(value == nullptr ? "" : value);
  }();
  return step;
}

}  // namespace

void NotePhase(std::string_view line) {
  const int fd = PhaseLogDescriptor();
  if (fd < 0) return;
  std::string text(line);
  text += '\n';
  // One write: O_APPEND keeps the lines of concurrent writers whole.
  [[maybe_unused]] const ssize_t written = ::write(fd, text.data(), text.size());
  const std::string& pause = PauseStep();
  if (!pause.empty() && line.size() > pause.size() && line.ends_with(" " + pause)) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // until the test kills it
  }
}

}  // namespace mssql_cdc
