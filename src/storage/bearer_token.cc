#include "storage/bearer_token.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace mssql_cdc::storage {
namespace {

constexpr std::chrono::milliseconds kTokenTimeout{30'000};

// A whole number of seconds, written as a JSON number or as a string of digits.
std::optional<std::int64_t> Seconds(const nlohmann::json& json, const char* name) {
  if (!json.contains(name)) return std::nullopt;
  const auto& value = json[name];
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (!text.empty() && text.size() < 19 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::stoll(text);
    }
  }
  return std::nullopt;
}

}  // namespace

std::string BearerTokenSource::Token() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (token_.empty() || now >= refresh_at_) {
    Fetched fetched = Fetch();
    token_ = std::move(fetched.token);
    refresh_at_ = now + std::max(fetched.lifetime - std::chrono::seconds(300), fetched.lifetime / 2);
  }
  return token_;
}

BearerTokenSource::Fetched BearerTokenSource::RequestToken(const std::string& url, HttpRequest request,
                                                           const std::string& whose) {
  auto [endpoint, path] = ParseHttpUrl(url, "the token endpoint of " + whose);
  request.target = path;
  HttpResponse response;
  try {
    response = SendHttpRequest(endpoint, request, kTokenTimeout);
  } catch (const HttpTransportError& e) {
    throw SourceError("cannot reach the token endpoint of " + whose + ": " + e.what());
  }
  const auto json = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (response.status != 200) {
    std::string reason = "HTTP " + std::to_string(response.status);
    if (json.is_object() && json.contains("error")) {
      const auto& error = json["error"];
      reason = error.is_string() ? error.get<std::string>() : error.dump();
      if (json.contains("error_description") && json["error_description"].is_string()) {
        reason += ": " + json["error_description"].get<std::string>();
      }
    }
    const std::string message = "the token endpoint refused " + whose + " (" + reason + ")";
    if (response.status == 400 || response.status == 401 || response.status == 403) {
      throw PermissionError(message + "; check the credentials");
    }
    throw SourceError(message);
  }
  if (!json.is_object() || !json.contains("access_token") || !json["access_token"].is_string()) {
    throw SourceError("the token endpoint of " + whose + " answered without an access_token");
  }
  Fetched fetched{json["access_token"].get<std::string>(), std::chrono::seconds(3600)};
  if (const auto in = Seconds(json, "expires_in")) {
    fetched.lifetime = std::chrono::seconds(*in);
  } else if (const auto on = Seconds(json, "expires_on")) {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    fetched.lifetime = std::chrono::seconds(std::max<std::int64_t>(*on - now, 0));
  }
  return fetched;
}

HttpRequest BearerTokenSource::FormPost(const std::string& body) {
  HttpRequest request;
  request.method = "POST";
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  request.body = body;
  return request;
}

}  // namespace mssql_cdc::storage
