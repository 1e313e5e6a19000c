#include "maintenance/maintenance_schedule.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/time.h"
#include "core/user_text.h"
#include "maintenance/maintenance.h"

namespace mssql_cdc {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration Hours(double hours) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(hours * 3600));
}

}  // namespace

MaintenanceSchedule MaintenanceSchedule::Parse(const Options& options) {
  MaintenanceSchedule parsed;
  auto positive = [](const std::string& name, const std::string& value) {
    double out = 0;
    const auto* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), end, out);
    if (ec != std::errc() || ptr != end || !std::isfinite(out) || out <= 0) {
      throw ConfigError("[maintenance] " + name + " = " + QuoteUserText(value) + " must be a number above 0");
    }
    return out;
  };
  for (const auto& [name, value] : options.entries()) {
    const std::string key = AsciiLower(name);
    if (key == "optimize_every_hours") {
      parsed.optimize_every_hours = positive(name, value);
    } else if (key == "vacuum_every_hours") {
      parsed.vacuum_every_hours = positive(name, value);
    } else if (key == "vacuum_retention_hours") {
      parsed.vacuum_retention_hours = positive(name, value);
    } else if (key == "facts_retention_days") {
      parsed.facts_retention_days = positive(name, value);
    } else if (key == "target_file_mb") {
      parsed.target_file_mb = positive(name, value);
    } else {
      throw ConfigError("unknown key " + QuoteUserText(name) +
                        " in [maintenance] (expected optimize_every_hours, vacuum_every_hours, "
                        "vacuum_retention_hours, facts_retention_days, target_file_mb)");
    }
  }
  if (parsed.facts_retention_days && !parsed.vacuum_every_hours) {
    throw ConfigError("[maintenance] facts_retention_days takes effect when vacuum runs: set vacuum_every_hours");
  }
  return parsed;
}

MaintenanceRunner::MaintenanceRunner(ManyConfig config, MaintenanceSchedule schedule)
    : config_(std::move(config)), schedule_(schedule) {
  if (schedule_.vacuum_every_hours) {
    const auto [facts, targets] = PipelineFactsAndTargets(config_);
    CheckVacuumRetention(static_cast<std::int64_t>(schedule_.vacuum_retention_hours * 3600 * 1000),
                         LongestBatchMillis(facts, targets));
  }
  if (schedule_.optimize_every_hours || schedule_.vacuum_every_hours) thread_ = std::thread([this] { Loop(); });
}

MaintenanceRunner::~MaintenanceRunner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MaintenanceRunner::Loop() {
  const auto start = Clock::now();
  auto next_optimize = schedule_.optimize_every_hours ? start + Hours(*schedule_.optimize_every_hours)
                                                      : Clock::time_point::max();
  auto next_vacuum = schedule_.vacuum_every_hours ? start + Hours(*schedule_.vacuum_every_hours)
                                                  : Clock::time_point::max();
  std::unique_lock lock(mu_);
  while (!stop_) {
    const auto next = std::min(next_optimize, next_vacuum);
    if (wake_.wait_until(lock, next, [this] { return stop_; })) break;
    lock.unlock();
    const auto now = Clock::now();
    if (now >= next_optimize) {
      Optimize();
      next_optimize = Clock::now() + Hours(*schedule_.optimize_every_hours);
    }
    if (now >= next_vacuum) {
      Vacuum();
      next_vacuum = Clock::now() + Hours(*schedule_.vacuum_every_hours);
    }
    lock.lock();
  }
}

void MaintenanceRunner::Optimize() {
  try {
    const auto bytes = static_cast<std::int64_t>(schedule_.target_file_mb * 1024 * 1024);
    for (const auto& summary : CompactTables(PipelineTables(config_, {}), bytes)) {
      if (summary.version >= 0) {
        spdlog::info("maintenance: {}: {} files compacted into {} (version {})", summary.table,
                     summary.files_removed, summary.files_added, summary.version);
      }
    }
  } catch (const std::exception& e) {
    spdlog::warn("maintenance: compaction failed, tried again at the next turn: {}", e.what());
  }
}

void MaintenanceRunner::Vacuum() {
  try {
    const auto [facts, targets] = PipelineFactsAndTargets(config_);
    const auto retention_ms = static_cast<std::int64_t>(schedule_.vacuum_retention_hours * 3600 * 1000);
    // A batch may have grown longer than the retention since the start: then this turn waits.
    CheckVacuumRetention(retention_ms, LongestBatchMillis(facts, targets));
    if (schedule_.facts_retention_days && facts) {
      const UtcMicros cutoff{NowUtc().value - static_cast<std::int64_t>(*schedule_.facts_retention_days * kMicrosPerDay)};
      if (const auto deleted = DeleteOldBatchFacts(*facts, cutoff); deleted > 0) {
        spdlog::info("maintenance: {}: {} micro-batch facts rows deleted", *facts, deleted);
      }
    }
    for (const auto& summary : VacuumTables(PipelineTables(config_, {}), retention_ms, false)) {
      if (!summary.deleted.empty()) {
        spdlog::info("maintenance: {}: vacuum deleted {} files", summary.table, summary.deleted.size());
      }
    }
  } catch (const std::exception& e) {
    spdlog::warn("maintenance: vacuum skipped, tried again at the next turn: {}", e.what());
  }
}

}  // namespace mssql_cdc
