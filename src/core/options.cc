#include "core/options.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/option_words.h"
#include "core/user_text.h"

namespace mssql_cdc {

std::optional<std::string_view> KnownSourceOptionSpelling(std::string_view name) {
  const std::string lower = AsciiLower(name);
  for (std::string_view known : kSourceOptionNames) {
    if (AsciiLower(known) == lower) return known;
  }
  return std::nullopt;
}

bool IsKnownSourceOption(std::string_view name) {
  return KnownSourceOptionSpelling(name).has_value();
}

bool IsSecretOptionName(std::string_view name) {
  std::string lower = AsciiLower(name);
  if (lower == "connectionstring") return true;
  for (std::string_view word : {"password", "passwd", "pwd", "secret", "token"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

bool IsAccessTokenText(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x21 && byte <= 0x7E;
  });
}

// ---------------------------------------------------------------------------------------------
// Options

Options::Options(const std::map<std::string, std::string>& options) {
  for (const auto& [name, value] : options) Add(name, value);
}

Options::Options(std::vector<Entry> options) {
  for (auto& [name, value] : options) Add(std::move(name), std::move(value));
}

Options::Options(std::initializer_list<Entry> options) {
  for (const auto& [name, value] : options) Add(name, value);
}

void Options::Add(std::string name, std::string value) {
  std::string lower = AsciiLower(name);
  if (auto it = index_.find(lower); it != index_.end()) {
    const std::string& first = entries_[it->second].first;
    if (first == name) {
      throw ConfigError(fmt::format("option {} is given twice: give it once", QuoteUserText(name)));
    }
    throw ConfigError(fmt::format(
        "options {} and {} are the same option (names ignore case): give it once",
        QuoteUserText(first), QuoteUserText(name)));
  }
  index_.emplace(std::move(lower), entries_.size());
  entries_.emplace_back(std::move(name), std::move(value));
}

const Options::Entry* Options::Find(std::string_view name) const {
  auto it = index_.find(AsciiLower(name));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::optional<std::string> Options::Get(std::string_view name) const {
  if (const Entry* entry = Find(name)) return entry->second;
  return std::nullopt;
}

Options Options::MergedWith(const Options& overrides) const {
  Options merged;
  for (const auto& [name, value] : entries_) {
    if (const Entry* over = overrides.Find(name)) {
      merged.Add(over->first, over->second);
    } else {
      merged.Add(name, value);
    }
  }
  for (const auto& [name, value] : overrides.entries_) {
    if (!Find(name)) merged.Add(name, value);
  }
  return merged;
}

std::string Options::Redacted() const {
  std::string out;
  for (const auto& [name, value] : entries_) {
    if (!out.empty()) out += ", ";
    out += name + "=" + (IsSecretOptionName(name) ? std::string(kSecretShown) : value);
  }
  return out;
}

}  // namespace mssql_cdc
