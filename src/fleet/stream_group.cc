#include "fleet/stream_group.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <span>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "core/user_text.h"
#include "delta/grouped_appender.h"
#include "delta/table.h"
#include "engine/finalization.h"
#include "engine/stream_start.h"
#include "engine/table_schemas.h"

namespace mssql_cdc {
namespace {

// How old a max LSN the streams of one source may plan with: the idle poll of a stream.
constexpr std::chrono::milliseconds kMaxLsnFreshness{100};

constexpr std::string_view kPlaceholder = "{ci}";

// to_delta parameters a table may set for itself. The templates and the facts table are
// shared by the group on purpose: the facts table is created once for all, and the templates
// are what keeps each table's checkpoint and app_id apart.
constexpr std::string_view kPerTableParams[] = {
    "trigger", "query_name", "bootstrap", "on_data_loss", "resnapshot_interval_days",
    "snapshot_on_switch", "snapshot"};
constexpr std::string_view kSharedOnlyParams[] = {"target", "app_id", "checkpoint",
                                                  "facts_table"};

bool Contains(std::span<const std::string_view> names, std::string_view lower) {
  for (auto name : names) {
    if (name == lower) return true;
  }
  return false;
}

// Splits a table's options into source-option overrides and to_delta parameter overrides.
void SplitTableOptions(const TableSpec& table, Options* source, Options* params) {
  std::vector<Options::Entry> source_entries, param_entries;
  for (const auto& [name, value] : table.options.entries()) {
    const std::string lower = AsciiLower(name);
    if (Contains(kSharedOnlyParams, lower)) {
      throw ConfigError("table " + QuoteUserText(table.capture_instance) + ": '" + name +
                        "' is shared by every table and cannot be set per table; set it once "
                        "for the group");
    }
    // captureInstance is always the table's own name, as in start_many.
    if (lower == "captureinstance") continue;
    (Contains(kPerTableParams, lower) ? param_entries : source_entries).emplace_back(name, value);
  }
  *source = Options(std::move(source_entries));
  *params = Options(std::move(param_entries));
}


// What makes two streams' Sources interchangeable: the same server or file, login and session
// settings. Compared only, never shown (it holds the password).
std::string SourceIdentity(const SourceOptions& options) {
  std::string key;
  const auto add = [&](const std::string& part) {
    key += std::to_string(part.size());
    key += ':';
    key += part;
  };
  add(std::string(BackendName(options.backend)));
  add(options.connection_string);
  add(options.user.value_or(""));
  add(options.password.value_or(""));
  add(options.sim_path.value_or(""));
  add(std::to_string(options.connect_timeout_seconds));
  add(options.lock_timeout_ms ? std::to_string(*options.lock_timeout_ms) : "");
  add(std::string(IsolationLevelName(options.isolation_level)));
  return key;
}

// The same error, naming the capture instance when its message does not already, so that a
// caller running many tables knows which one it came from. The class stays the same.
[[noreturn]] void RethrowNamingTable(const std::string& capture_instance) {
  try {
    throw;
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.find(capture_instance) != std::string::npos) throw;
    ThrowError(e.code(), "capture instance " + QuoteUserText(capture_instance) + ": " + message);
  }
}

// Two streams writing one table, or a table that is also a checkpoint, would write over each
// other; the templates keep the tables apart, but a facts or control table may still be named
// like a target.
void CheckDistinctLocations(const std::vector<std::unique_ptr<Stream>>& streams,
                            const std::optional<std::string>& facts_table,
                            const std::optional<std::string>& control_table) {
  std::map<std::string, std::string> used;  // normal location -> what uses it
  auto claim = [&](const std::string& location, const std::string& what) {
    auto [it, inserted] = used.emplace(NormalLocation(location), what);
    if (!inserted) {
      throw ConfigError(what + " and " + it->second + " are the same location " + location +
                        ": give each its own");
    }
  };
  if (facts_table) claim(*facts_table, "facts_table");
  if (control_table) claim(*control_table, "control_table");
  for (const auto& stream : streams) {
    const StreamParams& params = stream->config().params;
    const std::string& ci = stream->config().source.capture_instance;
    claim(params.target, "the target of " + ci);
    claim(params.checkpoint, "the checkpoint of " + ci);
    if (stream->config().silver_table) claim(*stream->config().silver_table, "the silver table of " + ci);
  }
}

}  // namespace

StreamConfig TableStreamConfig(const ManyConfig& config, const TableSpec& table) {
  const std::string& ci = table.capture_instance;
  Options source_overrides, param_overrides;
  SplitTableOptions(table, &source_overrides, &param_overrides);

  StreamConfig stream;
  stream.source = SourceOptions::Parse(config.shared_options.MergedWith(source_overrides)
                                           .MergedWith(Options{{"captureInstance", ci}}));
  const Options expanded{{"target", ExpandTemplate(config.target, "target", ci)},
                         {"app_id", ExpandTemplate(config.app_id, "app_id", ci)},
                         {"checkpoint", ExpandTemplate(config.checkpoint, "checkpoint", ci)}};
  stream.params = StreamParams::Parse(
      config.stream_params.MergedWith(param_overrides).MergedWith(expanded));
  ValidateStreamConfig(stream.source, stream.params);
  stream.control_table = config.control_table;
  stream.granularity = config.granularity;
  stream.limits = config.limits;
  stream.backfill = config.backfill;
  if (config.silver) {
    auto silver = TableSilverOptions(config, stream);
    stream.silver_table = silver.silver;
    stream.after_bronze = KeepSilver(std::move(silver));
  }
  return stream;
}

ApplyChangesOptions TableSilverOptions(const ManyConfig& config, const StreamConfig& stream) {
  if (!config.silver) throw InternalError("the pipeline has no silver tables");
  if (!config.control_table) {
    throw ConfigError("silver tables keep their position in the control table: give control_table");
  }
  const std::string& ci = stream.source.capture_instance;
  ApplyChangesOptions silver;
  silver.bronze = stream.params.target;
  silver.silver = ExpandTemplate(config.silver->target, "silver target", ci);
  silver.control = *config.control_table;
  silver.facts = stream.params.facts_table;
  silver.keys = SilverKeysOf(*config.silver, ci);
  silver.bronze_verdict_name = stream.tracked_table.value_or(stream.params.target);
  silver.granularity = config.granularity;
  silver.budget = {config.limits.memory_budget, config.limits.spill_directory};
  return silver;
}

std::string ExpandTemplate(const std::string& pattern, const std::string& parameter,
                           const std::string& capture_instance) {
  if (pattern.find(kPlaceholder) == std::string::npos) {
    throw ConfigError(parameter + "=" + QuoteUserText(pattern) +
                      " must contain '{ci}', so that every table gets its own; e.g. '" +
                      parameter + "_{ci}'");
  }
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = pattern.find(kPlaceholder, from)) != std::string::npos;
       from = at + kPlaceholder.size()) {
    out.append(pattern, from, at - from);
    out += capture_instance;
  }
  out.append(pattern, from, std::string::npos);
  return out;
}

std::unique_ptr<StreamGroup> StreamGroup::Prepare(const ManyConfig& config,
                                                  SourceFactoryFor factory) {
  if (config.tables.empty()) throw ConfigError("no tables to start: give at least one");
  config.limits.Validate();
  if (static_cast<std::int64_t>(config.tables.size()) > config.limits.max_streams) {
    throw ConfigError(fmt::format(
        "{} tables are more than [engine] max_streams = {} streams in one process: run them "
        "as several pipelines, or raise max_streams (each stream costs memory and a share of "
        "the connections and workers)",
        config.tables.size(), config.limits.max_streams));
  }
  // Templates first, so that a missing {ci} is reported as such even for a bad table list.
  for (const auto& [pattern, name] : {std::pair{&config.target, "target"},
                                      std::pair{&config.app_id, "app_id"},
                                      std::pair{&config.checkpoint, "checkpoint"}}) {
    ExpandTemplate(*pattern, name, "x");
  }

  // Every table is validated, and its stream built (which touches nothing), before anything
  // is read or created.
  std::set<std::string> seen;
  std::vector<StreamConfig> configs;
  for (const auto& table : config.tables) {
    if (table.capture_instance.empty()) throw ConfigError("a table has an empty capture instance");
    if (!seen.insert(AsciiLower(table.capture_instance)).second) {
      throw ConfigError("capture instance " + QuoteUserText(table.capture_instance) +
                        " is listed twice (names match ignoring case); list each table once");
    }
    try {
      configs.push_back(TableStreamConfig(config, table));
    } catch (const Error&) {
      RethrowNamingTable(table.capture_instance);
    }
  }
  // The memory budget is shared by every range the group may read at once: at most one per
  // connection, and no more than the streams' partitions together.
  std::int64_t ranges = 0;
  for (const auto& stream : configs) {
    ranges += std::min(ReadPartitions(stream.source), config.limits.connections);
  }
  const int concurrent = static_cast<int>(std::min<std::int64_t>(ranges, config.limits.connections));
  std::unique_ptr<StreamGroup> group(new StreamGroup());
  group->limits_ = config.limits;
  group->granularity_ = config.granularity;
  std::vector<std::unique_ptr<Stream>> built;
  const auto table_checks = std::make_shared<SharedTableChecks>();
  for (std::size_t i = 0; i < configs.size(); ++i) {
    try {
      configs[i].concurrent_ranges = concurrent;
      auto& services = group->services_[SourceIdentity(configs[i].source)];
      if (!services) {
        services = std::make_shared<StreamServices>();
        services->sources =
            std::make_shared<SourcePool>(factory(configs[i].source), config.limits.connections);
        services->max_lsn = std::make_shared<MaxLsnCache>(kMaxLsnFreshness);
        services->table_checks = table_checks;
        services->changes = group->changes_;
      }
      configs[i].services = services;
      built.push_back(std::make_unique<Stream>(std::move(configs[i]), nullptr));
    } catch (const Error&) {
      RethrowNamingTable(config.tables[i].capture_instance);
    }
  }
  group->facts_table_ = built.front()->config().params.facts_table;
  group->control_table_ = config.control_table;
  CheckDistinctLocations(built, group->facts_table_, group->control_table_);

  for (std::size_t i = 0; i < built.size(); ++i) {
    const std::string& ci = config.tables[i].capture_instance;
    try {
      built[i]->Prepare();
      if (config.silver) CheckSilverKeys(SilverKeysOf(*config.silver, ci), *built[i]);
    } catch (const CheckpointInUseError&) {
      group->refused_.push_back(ci);  // ended with its error, reported with the others
    } catch (const Error&) {
      RethrowNamingTable(ci);
    }
    group->order_.push_back(ci);
    group->streams_.emplace(ci, std::move(built[i]));
  }
  // The widest table decides whether the memory budget holds a row, and how much it needs.
  const Stream* widest = nullptr;
  std::int64_t widest_bytes = -1;
  for (const auto& ci : group->order_) {
    const Stream& stream = *group->streams_.at(ci);
    if (stream.captured_columns().empty()) continue;  // refused
    const std::int64_t bytes = DeclaredRowBytes(stream.captured_columns());
    if (bytes > widest_bytes) {
      widest = &stream;
      widest_bytes = bytes;
    }
  }
  if (widest) {
    CheckRowFitsBudget(widest->captured_columns(), widest->capture_instance(), config.limits,
                       concurrent);
  }
  return group;
}

void StreamGroup::Start() {
  if (started_) throw ConfigError("the streams of this group were started already");
  started_ = true;
  // Created once here: streams that created a new Delta table at the same moment would
  // conflict on its first commit.
  std::shared_ptr<delta::GroupedAppender> facts;
  if (facts_table_) {
    facts = std::make_shared<delta::GroupedAppender>(
        delta::DeltaTable::Create(*facts_table_, FactsTableOptions()));
  }
  std::shared_ptr<VerdictWriter> verdicts;
  if (control_table_) {
    EnsureControlTable(*control_table_);
    verdicts = std::make_shared<VerdictWriter>(*control_table_, granularity_);
  }
  for (auto& [identity, services] : services_) {
    services->facts = facts;
    services->verdicts = verdicts;
  }
  scheduler_ = std::make_unique<TurnScheduler>(limits_.workers);
  for (const auto& ci : order_) {
    if (std::find(refused_.begin(), refused_.end(), ci) != refused_.end()) continue;
    Stream* stream = streams_.at(ci).get();
    try {
      // The scheduler's id is known once the task is added; a Stop before then needs no wake.
      auto id = std::make_shared<std::optional<std::size_t>>();
      stream->StartTurns([this, id] {
        if (*id) scheduler_->Wake(**id);
      });
      *id = scheduler_->Add([stream] { return stream->Turn(); });
    } catch (const CheckpointInUseError&) {
      // A new checkpoint that another run created and locked since Prepare: refused alone.
      refused_.push_back(ci);
    } catch (...) {
      // A start that fails needs a person; stop what runs so that nothing is left half done.
      StopAll();
      RethrowNamingTable(ci);
    }
  }
  // Started once every stream has planned its first batch (or ended trying), as a single
  // stream's Start returns.
  for (const auto& ci : order_) {
    const Stream& stream = *streams_.at(ci);
    while (stream.active() && !stream.planned()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

int StreamGroup::worker_threads() const { return scheduler_ ? scheduler_->threads() : 0; }

int StreamGroup::open_sources() const {
  int open = 0;
  for (const auto& [identity, services] : services_) open += services->sources->open();
  return open;
}

int StreamGroup::most_open_sources() const {
  int most = 0;
  for (const auto& [identity, services] : services_) most += services->sources->most_open();
  return most;
}

std::unique_ptr<StreamGroup> StreamGroup::StartMany(const ManyConfig& config,
                                                    SourceFactoryFor factory) {
  auto group = Prepare(config, std::move(factory));
  group->Start();
  return group;
}

StreamGroup::~StreamGroup() {
  StopAll();
  scheduler_.reset();  // before the streams its turns use
}

std::map<std::string, std::exception_ptr> StreamGroup::AwaitAll(
    std::optional<std::chrono::milliseconds> timeout) {
  const auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                                : std::chrono::steady_clock::time_point::max();
  for (const auto& ci : order_) {
    Stream& stream = *streams_.at(ci);
    try {
      if (!timeout) {
        stream.Await();
        continue;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      // Past the deadline each stream is still asked once, without waiting, so that the ones
      // that already ended are reported.
      stream.Await(std::max(left, std::chrono::milliseconds(0)));
    } catch (...) {
      // Await reports through error(); AwaitAll promises to throw nothing whatever happens.
    }
  }
  std::map<std::string, std::exception_ptr> failed;
  for (const auto& ci : order_) {
    const Stream& stream = *streams_.at(ci);
    if (stream.active()) continue;
    if (auto error = stream.error()) failed.emplace(ci, error);
  }
  return failed;
}

void StreamGroup::StopAll() {
  // Asked all at once so that they finish their current batches together.
  for (const auto& ci : order_) streams_.at(ci)->Stop();
  for (const auto& ci : order_) streams_.at(ci)->Await();
}

}  // namespace mssql_cdc
