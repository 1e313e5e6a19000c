#include "engine/stream_impl.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/errors.h"
#include "engine/stream_start.h"

namespace mssql_cdc {
namespace {

void CheckSupported(const StreamConfig& config) {
  ValidateStreamConfig(config.source, config.params);
  if (config.source.capture_instance.empty()) {
    throw ConfigError("option 'captureInstance' is required: name the capture instance to read");
  }
  config.limits.Validate();
  if (config.source.num_partitions && *config.source.num_partitions > config.limits.connections) {
    throw ConfigError(fmt::format(
        "numPartitions = {} is more than [engine] connections = {}: a batch reads its ranges at "
        "once, each on a connection of its own; lower numPartitions or raise connections",
        *config.source.num_partitions, config.limits.connections));
  }
}

}  // namespace

Stream::Impl::Impl(const StreamConfig& config, SourceFactory factory) {
  context_.config = config;
  factory_ = factory ? factory : MakeSourceFactory(config.source);
  if (config.services) context_.sources = config.services->sources;
  if (!context_.sources) {
    // A stream alone lends its ranges no more Sources than it reads ranges at once.
    const int partitions = std::min(ReadPartitions(config.source), config.limits.connections);
    context_.sources = std::make_shared<SourcePool>(
        factory ? std::move(factory) : MakeSourceFactory(config.source), partitions);
  }
}

Stream::Impl::~Impl() {
  Stop();
  if (thread_.joinable()) thread_.join();
  backfill_.reset();
}

void Stream::Impl::Prepare() {
  if (prepared_) return;
  try {
    CheckInput();
  } catch (...) {
    Fail(std::current_exception());
    throw;
  }
  prepared_ = true;
}

void Stream::Impl::Start() {
  StartTurns(nullptr);
  thread_ = std::thread([this] {
    while (auto due = Turn()) WaitUntil(*due);
  });
  // Started once the batch thread has planned (or failed to plan) its first batch. A
  // failure there (data loss at the first batch, say) is this stream's runtime failure, as
  // a query's first batch is in Spark: it ends this stream alone and is reported by Await
  // and error(), not thrown here, so the streams started after it still start.
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return planned_ || ended_; });
}

void Stream::Impl::StartTurns(std::function<void()> wake) {
  {
    std::lock_guard lock(mu_);
    if (started_) throw ConfigError("stream of '" + Name() + "' was started already");
    started_ = true;
    wake_ = std::move(wake);
  }
  Changed();
  try {
    if (!prepared_) CheckInput();
    prepared_ = true;
    Setup();
  } catch (...) {
    Fail(std::current_exception());
    throw;
  }
}

void Stream::Impl::Stop() {
  std::function<void()> wake;
  {
    std::lock_guard lock(mu_);
    stop_requested_ = true;
    cv_.notify_all();
    if (started_ && !ended_) wake = wake_;
  }
  if (backfill_) backfill_->Stop();
  if (wake) wake();  // a turn far ahead comes now, and ends the stream
}

std::optional<std::chrono::steady_clock::time_point> Stream::Impl::Turn() {
  if (StopRequested()) {
    End(nullptr);
    return std::nullopt;
  }
  try {
    // A quiet stream whose range is known empty up to the group's fresh max LSN has nothing
    // to do: it does not take a Source, which a busy stream's batch may be waiting for.
    ObserveBackfill();
    if (auto due = QuietTurn()) return due;
    const LentSource lent(context_);
    auto due = RunTurn();
    if (!due) End(nullptr);
    return due;
  } catch (const std::exception& e) {
    spdlog::error("stream of capture instance '{}' into {} failed: {}", Name(),
                  context_.config.params.target, e.what());
    End(std::current_exception());
  } catch (...) {
    End(std::current_exception());
  }
  return std::nullopt;
}

bool Stream::Impl::Await(std::optional<std::chrono::milliseconds> timeout) {
  std::unique_lock lock(mu_);
  auto done = [this] { return !started_ || ended_; };
  if (!timeout) {
    cv_.wait(lock, done);
    return true;
  }
  return cv_.wait_for(lock, *timeout, done);
}

void Stream::Impl::Fail(std::exception_ptr error) {
  lock_.reset();
  std::lock_guard lock(mu_);
  started_ = true;
  error_ = std::move(error);
  ended_ = true;
  cv_.notify_all();
  Changed();
}

void Stream::Impl::MarkPlanned() {
  std::lock_guard lock(mu_);
  if (!planned_) {
    planned_ = true;
    cv_.notify_all();
  }
}

bool Stream::Impl::StopRequested() {
  std::lock_guard lock(mu_);
  return stop_requested_;
}

void Stream::Impl::WaitUntil(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(mu_);
  cv_.wait_until(lock, until, [this] { return stop_requested_; });
}

void Stream::Impl::End(std::exception_ptr error) {
  std::lock_guard lock(mu_);
  if (error && !error_) error_ = std::move(error);
  ended_ = true;
  cv_.notify_all();
  Changed();
}

void Stream::Impl::Changed() {
  const auto& services = context_.config.services;
  if (services && services->changes) services->changes->fetch_add(1, std::memory_order_relaxed);
}

Stream::Stream(StreamConfig config, SourceFactory source_factory) : config_(std::move(config)) {
  CheckSupported(config_);
  impl_ = std::make_unique<Impl>(config_, std::move(source_factory));
}

Stream::~Stream() = default;

void Stream::Prepare() { impl_->Prepare(); }
void Stream::Start() { impl_->Start(); }
void Stream::Stop() { impl_->Stop(); }
void Stream::StartTurns(std::function<void()> wake) { impl_->StartTurns(std::move(wake)); }
std::optional<std::chrono::steady_clock::time_point> Stream::Turn() { return impl_->Turn(); }
bool Stream::planned() const { return impl_->planned(); }
bool Stream::Await(std::optional<std::chrono::milliseconds> timeout) {
  return impl_->Await(timeout);
}
bool Stream::active() const { return impl_->active(); }
std::exception_ptr Stream::error() const { return impl_->error(); }
StreamProgress Stream::progress() const { return impl_->progress(); }
const std::string& Stream::capture_instance() const { return impl_->Name(); }
const std::vector<CapturedColumn>& Stream::captured_columns() const { return impl_->columns(); }
const std::vector<std::string>& Stream::index_columns() const { return impl_->index_columns(); }

StreamProgress Stream::Run() {
  Start();
  Await();
  if (auto error = impl_->error()) std::rethrow_exception(error);
  return impl_->progress();
}


}  // namespace mssql_cdc
