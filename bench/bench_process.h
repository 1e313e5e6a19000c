// Child processes of the benchmarks: starting one with its output in a file, waiting for a
// line of it, `mssql-cdc sim serve` as a child, and the CPU seconds of this process and of
// another one, so that a benchmark can report the engine's cost apart from the server's.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace mssql_cdc::bench {

// Starts argv[0] (a path) with argv, its stdout in the file `out`.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out);

std::string ReadAll(const std::string& path);

// Waits for `text` in the file `path`, calling `each` between looks; false after `limit`.
bool WaitForText(const std::string& path, const std::string& text, std::chrono::seconds limit,
                 const std::function<void()>& each = nullptr);

// utime + stime of this process, in seconds.
double CpuSeconds();
// utime + stime of another process from /proc/<pid>/stat, in seconds; 0 without a pid.
double ProcessCpuSeconds(int pid);

// Starts this process's peak resident memory (VmHWM) again from what it holds now, so that a
// run measured in-process reports its own peak, not an earlier run's (/proc/self/clear_refs).
void ResetPeakRss();
// This process's peak resident memory since the start or the last ResetPeakRss, in MB.
double PeakRssMb();

struct ServedChild {
  pid_t pid = -1;
  int port = 0;
};

// `binary sim serve --db db --port 0`, its output in `dir`/serve.out; waits until it listens.
ServedChild ServeSim(const std::string& binary, const std::string& db, const std::string& dir);

}  // namespace mssql_cdc::bench
