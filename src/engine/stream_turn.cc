#include "engine/stream_impl.h"

#include <algorithm>

#include "source/source_clock.h"

namespace mssql_cdc {
namespace {

// How long an idle stream waits before asking for the max LSN again (default trigger, and a
// processing-time trigger of a shorter interval): short enough for low latency, long enough to
// keep an idle stream's CPU near zero.
constexpr std::chrono::milliseconds kIdlePoll{100};
// How often a caught-up availableNow stream looks whether its backfill is done.
constexpr std::chrono::milliseconds kBackfillPoll{200};

}  // namespace

std::optional<Lsn> Stream::Impl::MaxLsn() {
  const auto& services = context_.config.services;
  if (services && services->max_lsn) return services->max_lsn->Get(*context_.source);
  return context_.source->MaxLsn();
}

std::optional<std::chrono::steady_clock::time_point> Stream::Impl::QuietTurn() {
  const Trigger& trigger = context_.config.params.trigger;
  const auto& services = context_.config.services;
  if (replay_ || !empty_up_to_ || trigger.kind() == Trigger::Kind::kAvailableNow ||
      !services || !services->max_lsn) {
    return std::nullopt;
  }
  const std::optional<Lsn> max_lsn = services->max_lsn->Fresh();
  if (!max_lsn || *max_lsn != *empty_up_to_) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  if (trigger.kind() == Trigger::Kind::kProcessingTime) next_trigger_ = now + trigger.interval();
  return IdleUntil(now);
}

std::chrono::steady_clock::time_point Stream::Impl::IdleUntil(
    std::chrono::steady_clock::time_point now) const {
  const auto idle_until = now + kIdlePoll;
  if (context_.config.params.trigger.kind() == Trigger::Kind::kDefault) return idle_until;
  return std::max(next_trigger_, idle_until);
}

std::optional<std::chrono::steady_clock::time_point> Stream::Impl::RunTurn() {
  StreamContext& c = context_;
  BatchRunner runner(c);
  const Trigger& trigger = c.config.params.trigger;
  const auto now = std::chrono::steady_clock::now();
  // A processing-time trigger runs a batch per interval, counted from each batch's start.
  if (trigger.kind() == Trigger::Kind::kProcessingTime) next_trigger_ = now + trigger.interval();
  std::optional<BatchOffsets> offsets;
  if (replay_) {
    // The batch that was running when the last run stopped, with its range unchanged.
    offsets = std::move(replay_);
    replay_.reset();
  } else {
    const bool available_now = trigger.kind() == Trigger::Kind::kAvailableNow;
    std::optional<Lsn> target = available_now ? target_ : MaxLsn();
    // A range found without commits of the instance stays so (a max LSN is final), so a
    // quiet stream asks again only once the max LSN has moved.
    if (target && target != empty_up_to_) {
      offsets = runner.Plan(next_batch_id_, next_start_, *target);
      if (!offsets) empty_up_to_ = target;
    }
  }
  MarkPlanned();
  ObserveBackfill();
  if (!offsets) {
    if (trigger.kind() == Trigger::Kind::kAvailableNow) {
      // availableNow reads everything there is, the open chunked snapshot included; a
      // backfill waiting for headroom (or metrics) is left to the next run.
      if (backfill_ && !backfill_->ended()) {
        const auto status = backfill_->status();
        if (!status || !status->paused) return now + kBackfillPoll;
        backfill_->Stop();
      }
      std::lock_guard lock(mu_);
      progress_.caught_up = true;
      Changed();
      return std::nullopt;
    }
    return IdleUntil(now);
  }
  const BatchOutcome outcome = runner.Execute(*offsets);
  next_batch_id_ = outcome.commit.batch_id + 1;
  next_start_ = outcome.end;
  empty_up_to_.reset();
  {
    std::lock_guard lock(mu_);
    ++progress_.batches;
    progress_.last_batch_id = outcome.commit.batch_id;
    progress_.last_rows = outcome.commit.rows;
    progress_.total_rows += outcome.commit.rows;
    progress_.end = outcome.end;
    progress_.capture_lag_seconds = outcome.facts.capture_lag_seconds;
    progress_.ingestion_lag_seconds = outcome.facts.ingestion_lag_seconds;
    progress_.retention_headroom_hours = outcome.facts.retention_headroom_hours;
    if (outcome.facts.retention_watermark_ts) {
      progress_.cleanup_purged_yet =
          CleanupHasPurged(context_.clock->ToUtc(context_.instance.create_date), outcome.facts.retention_watermark_ts);
    }
    if (outcome.facts.duration_ms) progress_.last_batch_seconds = *outcome.facts.duration_ms / 1000.0;
  }
  Changed();
  if (trigger.kind() == Trigger::Kind::kProcessingTime) return next_trigger_;
  return std::chrono::steady_clock::now();
}

}  // namespace mssql_cdc
