#include "storage/conditional_write_probe.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <random>

#include "core/errors.h"
#include "storage/object_store_file_system.h"

namespace mssql_cdc::storage {
namespace {

std::string RandomHex() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(rng()));
  return text;
}

}  // namespace

void CheckConditionalWrites(FileSystem& fs, ObjectRequests& requests, const std::string& directory,
                            const std::string& where, const std::string& precondition) {
  const std::string probe = directory + "/_mssql_cdc_conditional_write_probe_" + RandomHex();
  const PutResult first = requests.PutIfAbsent(probe, "probe");
  PutResult second{PutOutcome::kTransient, ""};
  if (first.outcome == PutOutcome::kCreated) second = requests.PutIfAbsent(probe, "probe");
  fs.Delete(probe);
  if (first.outcome != PutOutcome::kCreated) {
    throw SourceError(where + ": a test write failed (" + first.detail +
                      "); try again when the store answers");
  }
  if (second.outcome != PutOutcome::kExists) {
    throw ConfigError(where + " does not honour conditional writes: a second create with " +
                      precondition + " was not refused. Two writers could both commit one Delta "
                      "version there; use a store that refuses it");
  }
}

std::shared_ptr<FileSystem> CheckedObjectStore(const std::string& scheme,
                                               std::shared_ptr<arrow::fs::FileSystem> arrow,
                                               std::unique_ptr<ObjectRequests> requests,
                                               const std::string& root, const std::string& where,
                                               const std::string& precondition) {
  ObjectRequests& checked = *requests;
  auto fs = std::make_shared<ObjectStoreFileSystem>(scheme, std::move(arrow), std::move(requests));
  CheckConditionalWrites(*fs, checked, root, where, precondition);
  spdlog::info("opened {}", where);
  return fs;
}

}  // namespace mssql_cdc::storage
