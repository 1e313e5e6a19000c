// The capture process's idle entries for a simulated database file, written on a thread of its
// own for as long as the CaptureJob lives, as SQL Server's capture job writes them while a
// database is quiet (SimDatabase::WriteDueIdleEntries, checked once a second). `sim serve`
// runs one, so that a reader sees the max LSN move on a quiet database as it does on SQL
// Server 2022. A failed write (the file busy, removed) is logged and tried at the next check;
// the job never stops the process that runs it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace mssql_cdc::sim {

class CaptureJob {
 public:
  explicit CaptureJob(std::string path);
  ~CaptureJob();  // stops the thread and waits for it
  CaptureJob(const CaptureJob&) = delete;
  CaptureJob& operator=(const CaptureJob&) = delete;

 private:
  void Loop();

  const std::string path_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace mssql_cdc::sim
