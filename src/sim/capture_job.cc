#include "sim/capture_job.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <memory>

#include "sim/database.h"

namespace mssql_cdc::sim {

CaptureJob::CaptureJob(std::string path) : path_(std::move(path)), thread_([this] { Loop(); }) {}

CaptureJob::~CaptureJob() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CaptureJob::Loop() {
  std::unique_ptr<SimDatabase> db;
  bool failing = false;
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
    lock.unlock();
    try {
      if (!db) db = SimDatabase::Open(path_);
      if (const auto written = db->WriteDueIdleEntries(); written > 0) {
        spdlog::debug("capture job: {} idle entr{} in {}", written, written == 1 ? "y" : "ies", path_);
      }
      failing = false;
    } catch (const std::exception& e) {
      db.reset();  // opened again at the next check
      if (!failing) spdlog::warn("capture job: idle entries of {} not written ({}); trying again", path_, e.what());
      failing = true;
    }
    lock.lock();
  }
}

}  // namespace mssql_cdc::sim
