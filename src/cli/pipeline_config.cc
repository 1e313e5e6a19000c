#include "cli/pipeline_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/ascii.h"
#include "core/closest_names.h"
#include "core/errors.h"
#include "core/options.h"
#include "core/stream_params.h"
#include "core/trigger.h"
#include "core/table_ref.h"
#include "core/user_text.h"
#include "engine/finalization.h"

namespace mssql_cdc::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kEnvSuffix = "_env";

class Loader {
 public:
  Loader(std::string file, Secrets secrets, const EnvironmentLookup& environment)
      : file_(std::move(file)), secrets_(secrets), environment_(environment) {
    base_ = fs::absolute(fs::path(file_)).parent_path();
  }

  // Only [source]: what a command that lists the source's tables needs of a file that may
  // not list any yet.
  Options LoadSource() {
    return SourceSection(Section(Parse(), "source"), "[source]");
  }

  PipelineConfig Load() {
    const toml::table doc = Parse();
    for (const auto& [key, node] : doc) {
      if (key == "source" || key == "stream" || key == "tables" || key == "engine" ||
          key == "backfill" || key == "silver" || key == "maintenance") {
        continue;
      }
      const std::string name(key.str());
      if (auto section = SectionOf(name)) {
        Fail(QuoteUserText(name) + " is at the top of the file but belongs in " + *section);
      }
      Fail("unknown section or key " + QuoteUserText(name) +
           " (expected [source], [stream], tables and, optionally, [engine], [backfill], [silver] and [maintenance])");
    }
    PipelineConfig config;
    config.file = file_;
    config.many.shared_options = SourceSection(Section(doc, "source"), "[source]");
    StreamSection(Section(doc, "stream"), config);
    config.many.tables = Tables(doc);
    config.many.limits = OptionalSection<EngineLimits>(doc, "engine");
    config.many.backfill = OptionalSection<NativeBackfillOptions>(doc, "backfill");
    config.many.silver = SilverSection(doc);
    if (doc.get("maintenance")) config.maintenance = OptionalSection<MaintenanceSchedule>(doc, "maintenance");
    if (config.many.silver) {
      for (const auto& [ci, keys] : config.many.silver->keys) {
        const bool listed = std::any_of(config.many.tables.begin(), config.many.tables.end(),
                                        [&](const TableSpec& t) { return AsciiLower(t.capture_instance) == AsciiLower(ci); });
        if (!listed) Fail("[silver.keys] " + QuoteUserText(ci) + " is not one of the pipeline's tables");
      }
    }
    if (config.many.silver && !config.many.control_table) {
      Fail("[silver] keeps each silver table's position in the control table: set [stream] control_table");
    }
    config.warnings = std::move(warnings_);
    config.from_environment = std::move(from_environment_);
    return config;
  }

 private:
  toml::table Parse() const {
    std::error_code ec;
    const auto status = fs::status(file_, ec);
    if (!fs::exists(status)) Fail("the file does not exist");
    if (fs::is_directory(status)) {
      Fail("is a directory; give the pipeline's TOML file inside it, e.g. " +
           (fs::path(file_) / "pipeline.toml").string());
    }
    toml::table doc;
    try {
      doc = toml::parse_file(file_);
    } catch (const toml::parse_error& e) {
      std::ostringstream where;
      where << "line " << e.source().begin.line << ", column " << e.source().begin.column;
      Fail("not valid TOML at " + where.str() + ": " + std::string(e.description()));
    }
    return doc;
  }

  // The section a known key belongs in: "[source]" for a source option (any spelling the
  // file accepts), "[stream]" for a to_delta parameter or a [stream]-only key; nullopt else.
  static std::optional<std::string> SectionOf(const std::string& key) {
    const std::string lower = AsciiLower(key);
    if (IsStreamParamName(lower) || lower == "control_table" || lower == "granularity") {
      return "[stream]";
    }
    std::string name = lower;
    if (name.size() > kEnvSuffix.size() && name.ends_with(kEnvSuffix)) {
      name.resize(name.size() - kEnvSuffix.size());
    }
    if (IsKnownSourceOption(SourceOptionName(name))) return "[source]";
    return std::nullopt;
  }

  // An optional section of scalar keys, e.g. [engine] (engine_limits.h) or [backfill]
  // (engine/backfill.h), parsed by T::Parse; a default T when the file has none.
  template <typename T>
  T OptionalSection(const toml::table& doc, const std::string& name) const {
    const toml::node* node = doc.get(name);
    if (!node) return T{};
    if (!node->is_table()) Fail("'" + name + "' must be a section ([" + name + "])");
    std::vector<Options::Entry> entries;
    for (const auto& [key, value] : *node->as_table()) {
      entries.emplace_back(std::string(key.str()), Scalar(value, "[" + name + "] " + std::string(key.str())));
    }
    try {
      return T::Parse(Options(std::move(entries)));
    } catch (const ConfigError& e) {
      Fail(e.what());
    }
  }

  [[noreturn]] void Fail(const std::string& what) const {
    throw ConfigError("pipeline file " + file_ + ": " + what);
  }

  const toml::table& Section(const toml::table& doc, std::string_view name) {
    const toml::node* node = doc.get(name);
    if (!node) Fail("the [" + std::string(name) + "] section is missing");
    if (!node->is_table()) Fail("'" + std::string(name) + "' must be a section ([" + std::string(name) + "])");
    return *node->as_table();
  }

  // A TOML scalar as the string value options are. `where` names it in messages; the value
  // itself is never shown, since it may be a secret.
  std::string Scalar(const toml::node& node, const std::string& where) const {
    if (auto v = node.value<std::string>(); v && node.is_string()) return *v;
    if (node.is_boolean()) return *node.value<bool>() ? "true" : "false";
    if (node.is_integer()) return std::to_string(*node.value<std::int64_t>());
    if (node.is_floating_point()) {
      std::ostringstream out;
      out << *node.value<double>();
      return out.str();
    }
    Fail(where + " must be a string, a number or a boolean");
  }

  // A source option's canonical spelling: snake_case and any case map to the documented name;
  // unknown names stay as written so that the source options warn about them.
  static std::string SourceOptionName(const std::string& key) {
    std::string squashed;
    for (char c : key) {
      if (c != '_') squashed += c;
    }
    if (auto spelling = KnownSourceOptionSpelling(squashed)) return std::string(*spelling);
    return key;
  }

  static bool IsPathOption(const std::string& name) {
    const std::string lower = AsciiLower(name);
    return lower == "simpath" || lower == "metricspath";
  }

  // Relative local paths are taken from the file's directory; URIs ("s3://...") are kept.
  std::string ResolvePath(const std::string& path) const {
    if (path.empty() || path.find(':') != std::string::npos) return path;
    const fs::path p(path);
    if (p.is_absolute()) return path;
    return (base_ / p).lexically_normal().string();
  }

  // A table argument: a path (resolved as above); a table name is refused, since the native
  // engine has no catalog to resolve it in (core/table_ref.h).
  std::string TablePath(const std::string& value, const std::string& what) const {
    try {
      TableRef::RequirePath(value, what);
    } catch (const ConfigError& e) {
      Fail(e.what());
    }
    return ResolvePath(value);
  }

  // "unknown key 'numPartitons' in [tables.dbo_orders] (did you mean 'numPartitions'?)...".
  static std::string UnknownSourceKey(const std::string& key, const std::string& where, bool per_table) {
    std::string name = AsciiLower(key);
    if (name.size() > kEnvSuffix.size() && name.ends_with(kEnvSuffix)) name.resize(name.size() - kEnvSuffix.size());
    std::string squashed;
    for (char c : name) {
      if (c != '_') squashed += c;
    }
    std::vector<std::string_view> known(kSourceOptionNames.begin(), kSourceOptionNames.end());
    if (per_table) known.insert(known.end(), kStreamParamNames.begin(), kStreamParamNames.end());
    return "unknown key " + QuoteUserText(key) + " in " + where + DidYouMean(squashed, known) +
           "; the keys of " + (per_table ? "a table's section" : "[source]") +
           " are the source options (docs/reference/options.md)" +
           (per_table ? " and the table's own to_delta parameters (docs/pipelines.md)" : "");
  }

  // Source options of [source] or of one table: `<option>_env` entries read the environment.
  Options SourceSection(const toml::table& section, const std::string& where,
                        bool per_table = false) {
    std::vector<Options::Entry> entries;
    std::vector<std::string> literal_names;
    for (const auto& [key_view, node] : section) {
      std::string key(key_view.str());
      const std::string item = where + " " + key;
      // A table's own section may set some to_delta parameters; StreamGroup says which.
      if (SectionOf(key) == "[stream]" && !(per_table && IsStreamParamName(key))) {
        Fail(QuoteUserText(key) + " is in " + where + " but belongs in [stream]");
      }
      // The file is ours, not an open map of Spark options: a name no option has is a mistake.
      if (!SectionOf(key)) Fail(UnknownSourceKey(key, where, per_table));
      std::string value = Scalar(node, item);
      if (key.size() > kEnvSuffix.size() && AsciiLower(key).ends_with(kEnvSuffix)) {
        const std::string variable = value;
        key.resize(key.size() - kEnvSuffix.size());
        auto from_env = environment_(variable);
        if (!from_env || from_env->empty()) {
          if (secrets_ == Secrets::kOptional) continue;
          Fail(item + ": the environment variable " + variable + " is not set");
        }
        value = std::move(*from_env);
        from_environment_.push_back(SourceOptionName(key) + " (from $" + variable + ")");
      } else {
        literal_names.push_back(key);
      }
      std::string name = SourceOptionName(key);
      if (IsPathOption(name)) value = ResolvePath(value);
      entries.emplace_back(std::move(name), std::move(value));
    }
    for (const auto& key : literal_names) {
      const std::string lower = AsciiLower(SourceOptionName(key));
      if (lower == "password") {
        warnings_.push_back(where + " holds a password in the file; prefer password_env = \"VAR\"");
      } else if (lower == "accesstoken") {
        warnings_.push_back(where + " holds an access token in the file; prefer "
                            "accessToken_env = \"VAR\" (a token expires within hours anyway)");
      }
    }
    try {
      return Options(std::move(entries));  // refuses a name given twice, e.g. password and password_env
    } catch (const ConfigError& e) {
      Fail(where + ": " + e.what());
    }
  }

  void StreamSection(const toml::table& section, PipelineConfig& config) {
    std::vector<Options::Entry> params;
    bool has_target = false, has_app_id = false, has_checkpoint = false;
    for (const auto& [key_view, node] : section) {
      const std::string key(key_view.str());
      const std::string lower = AsciiLower(key);
      if (SectionOf(key) == "[source]") {
        Fail(QuoteUserText(key) + " is in [stream] but belongs in [source]");
      }
      std::string value = Scalar(node, "[stream] " + key);
      if (lower == "target") {
        config.many.target = TablePath(value, "[stream] target");
        has_target = true;
      } else if (lower == "app_id") {
        config.many.app_id = value;
        has_app_id = true;
      } else if (lower == "checkpoint") {
        config.many.checkpoint = ResolvePath(value);
        has_checkpoint = true;
      } else if (lower == "control_table") {
        config.many.control_table = TablePath(value, "[stream] control_table");
      } else if (lower == "granularity") {
        config.many.granularity = ParseGranularity(value);
      } else {
        if (lower == "facts_table") {
          value = TablePath(value, "[stream] facts_table");
          config.facts_table = value;
        }
        if (lower == "trigger") config.trigger = Trigger::Parse(value);
        params.emplace_back(key, std::move(value));
      }
    }
    if (!has_target) Fail("[stream] target is missing (e.g. target = \"lake/bronze/{ci}\")");
    if (!has_app_id) Fail("[stream] app_id is missing (e.g. app_id = \"{ci}-v1\")");
    if (!has_checkpoint) Fail("[stream] checkpoint is missing (e.g. checkpoint = \"checkpoints/{ci}\")");
    try {
      config.many.stream_params = Options(std::move(params));
      // Checked here as well as per table, so that a wrong [stream] key is reported as the
      // section's, not as the first table's.
      StreamParams::Parse(config.many.stream_params.MergedWith(
          Options{{"target", "t"}, {"app_id", "a"}, {"checkpoint", "c"}}));
    } catch (const ConfigError& e) {
      Fail(std::string("[stream]: ") + e.what());
    }
  }

  // [silver]: target = "<template with {ci}>", and [silver.keys] <capture instance> = ["col", ...].
  std::optional<SilverConfig> SilverSection(const toml::table& doc) const {
    const toml::node* node = doc.get("silver");
    if (!node) return std::nullopt;
    if (!node->is_table()) Fail("'silver' must be a section ([silver])");
    SilverConfig silver;
    bool has_target = false;
    for (const auto& [key_view, value] : *node->as_table()) {
      const std::string key(key_view.str());
      if (AsciiLower(key) == "target") {
        silver.target = TablePath(Scalar(value, "[silver] target"), "[silver] target");
        try {
          ExpandTemplate(silver.target, "[silver] target", "x");
        } catch (const ConfigError& e) {
          Fail(e.what());
        }
        has_target = true;
      } else if (AsciiLower(key) == "keys") {
        if (!value.is_table()) Fail("[silver] keys must be a section [silver.keys] of <capture instance> = [\"column\", ...]");
        for (const auto& [ci, list] : *value.as_table()) {
          const std::string where = "[silver.keys] " + std::string(ci.str());
          const toml::array* columns = list.as_array();
          if (!columns || columns->empty()) Fail(where + " must be a list of key columns, e.g. [\"id\"]");
          std::vector<std::string> names;
          for (const auto& column : *columns) {
            auto name = column.value<std::string>();
            if (!column.is_string() || !name || name->empty()) Fail(where + " must list column names as strings");
            names.push_back(*name);
          }
          silver.keys.emplace(std::string(ci.str()), std::move(names));
        }
      } else {
        Fail("unknown key " + QuoteUserText(key) + " in [silver] (expected target and [silver.keys])");
      }
    }
    if (!has_target) Fail("[silver] target is missing (e.g. target = \"lake/silver/{ci}\")");
    return silver;
  }

  std::vector<TableSpec> Tables(const toml::table& doc) {
    const toml::node* node = doc.get("tables");
    if (!node) Fail("no tables: add tables = [\"dbo_orders\", ...] or [tables.<capture_instance>] sections");
    std::vector<TableSpec> tables;
    if (const toml::array* list = node->as_array()) {
      for (const auto& item : *list) {
        auto name = item.value<std::string>();
        if (!item.is_string() || !name) Fail("tables must list capture instance names as strings");
        tables.push_back({*name, Options{}});
      }
    } else if (const toml::table* sections = node->as_table()) {
      // toml++ keeps keys sorted; the file's order is the start order users expect.
      std::vector<std::pair<std::size_t, const toml::key*>> ordered;
      for (const auto& [key, value] : *sections) {
        if (!value.is_table()) {
          Fail("tables." + std::string(key.str()) +
               " must be a section [tables." + std::string(key.str()) + "] of that table's options");
        }
        ordered.emplace_back(key.source().begin.line, &key);
      }
      std::stable_sort(ordered.begin(), ordered.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [line, key] : ordered) {
        const std::string ci(key->str());
        tables.push_back(
            {ci, SourceSection(*sections->get(*key)->as_table(), "[tables." + ci + "]", true)});
      }
    } else {
      Fail("tables must be a list of capture instances or [tables.<capture_instance>] sections");
    }
    if (tables.empty()) Fail("tables is empty: list at least one capture instance");
    return tables;
  }

  std::string file_;
  Secrets secrets_;
  const EnvironmentLookup& environment_;
  fs::path base_;
  std::vector<std::string> warnings_;
  std::vector<std::string> from_environment_;
};

}  // namespace

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

PipelineConfig LoadPipelineConfig(const std::string& file, Secrets secrets,
                                  const EnvironmentLookup& environment) {
  return Loader(file, secrets, environment).Load();
}

Options LoadPipelineSource(const std::string& file, Secrets secrets, const EnvironmentLookup& environment) {
  return Loader(file, secrets, environment).LoadSource();
}

std::vector<TableSpec> SelectedTables(const PipelineConfig& config, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const bool listed = std::any_of(config.many.tables.begin(), config.many.tables.end(), [&](const TableSpec& t) {
      return EqualsIgnoringAsciiCase(t.capture_instance, name);
    });
    if (!listed) throw ConfigError("--table " + QuoteUserText(name) + " is not one of the pipeline's tables");
  }
  std::vector<TableSpec> selected;
  for (const auto& table : config.many.tables) {
    const bool wanted = names.empty() || std::any_of(names.begin(), names.end(), [&](const std::string& n) {
                          return EqualsIgnoringAsciiCase(n, table.capture_instance);
                        });
    if (wanted) selected.push_back(table);
  }
  return selected;
}

}  // namespace mssql_cdc::cli
