// The [maintenance] section of a pipeline file: how often `mssql-cdc run` compacts and vacuums
// the pipeline's tables itself, on a thread of its own beside the streams (maintenance.h says
// why that is safe). Failures are logged and retried at the next turn; they never stop a stream.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "core/options.h"
#include "fleet/stream_group.h"

namespace mssql_cdc {

struct MaintenanceSchedule {
  std::optional<double> optimize_every_hours;  // unset: run never compacts
  std::optional<double> vacuum_every_hours;    // unset: run never vacuums
  double vacuum_retention_hours = 168;
  std::optional<double> facts_retention_days;  // with vacuum: old micro-batch facts rows go too
  double target_file_mb = 128;

  // From the [maintenance] keys (snake_case, any case); ConfigError naming an unknown key or
  // a value that is not a positive number.
  static MaintenanceSchedule Parse(const Options& options);
};

class MaintenanceRunner {
 public:
  // Checks the vacuum retention against the longest batch the facts table records now
  // (ConfigError, nothing started), then starts the thread. The first turn of each task comes
  // one period after the start.
  MaintenanceRunner(ManyConfig config, MaintenanceSchedule schedule);
  ~MaintenanceRunner();  // stops after the task in progress
  MaintenanceRunner(const MaintenanceRunner&) = delete;
  MaintenanceRunner& operator=(const MaintenanceRunner&) = delete;

 private:
  void Loop();
  void Optimize();
  void Vacuum();

  ManyConfig config_;
  MaintenanceSchedule schedule_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace mssql_cdc
