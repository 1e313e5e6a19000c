// The requests an object store must answer that Arrow's filesystem cannot make as Delta needs
// them: creating an object only if no object has its name (atomic, for commits), and deleting
// one without leaving a directory marker behind (Arrow's DeleteFile puts one in its parent's
// place). Each store answers with its own precondition (S3's If-None-Match: *, Azure's
// If-None-Match: *, GCS's ifGenerationMatch=0); the retries and the reading of an unknown
// outcome are the store-independent part, in ObjectStoreFileSystem.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/file_system.h"
#include "storage/http_client.h"

namespace mssql_cdc::storage {

enum class PutOutcome {
  kCreated,    // the store created the object from these bytes
  kExists,     // the store refused: an object of that name exists
  kTransient,  // refused for now (throttled, a conflicting request in flight): send again
  kUnknown,    // the request may or may not have taken effect (timeout, 5xx after sending)
};

struct PutResult {
  PutOutcome outcome;
  std::string detail;  // what the store said, for the log line of a retry
};

// One page of a store's listing: the entries named relative to the listed prefix (directory
// markers left out), and the token that asks for the next page (empty on the last).
struct ListPage {
  std::vector<FileInfo> entries;
  std::string next;
};

// A directory's store path ("bucket/a/b") as its bucket (or container) and the prefix the names
// under it share ("a/b/"; empty for the bucket's root).
std::pair<std::string, std::string> BucketAndPrefix(const std::string& directory);

// FileSystem::ListAfter from a store's pages: asks `fetch` for the page of token "" and then of
// each page's next, and keeps the names after `after` (a store's parameter to start there may
// include the name itself, and an older service may ignore it), sorted by name.
std::vector<FileInfo> CollectListing(const std::function<ListPage(const std::string& token)>& fetch,
                                     const std::string& after);

// Sends one request with the stores' timeout: nullopt when a response came (in `response`),
// else the outcome of a request that got none (kUnknown once the whole request was sent).
std::optional<PutResult> SendObjectRequest(const HttpEndpoint& endpoint, const HttpRequest& request,
                                           HttpResponse& response);

// What every store's status means for a retry: 409 (a conflicting request in flight), 429 and
// 503 are kTransient, 500, 502 and 504 kUnknown (the request may have taken effect); nullopt
// for any other status, which the store reads itself.
std::optional<PutResult> RetryableOutcome(int status, const std::string& code);

class ObjectRequests {
 public:
  virtual ~ObjectRequests() = default;
  // `path` is the store's path (bucket or container first). Both throw ConfigError or
  // PermissionError for an answer no retry can change (no such bucket, access denied).
  virtual PutResult PutIfAbsent(const std::string& path, const std::string& contents) = 0;
  // Creates or replaces the object in one request, so readers see the old or the new bytes
  // whole. kCreated stands for done, kTransient and kUnknown for "send again".
  virtual PutResult Put(const std::string& path, const std::string& contents) = 0;
  // Deletes the object; an absent one is already deleted. kCreated stands for done here,
  // kTransient and kUnknown for "send again" (a delete may be repeated).
  virtual PutResult Delete(const std::string& path) = 0;
  // The object's whole contents in one request (one version of it, even while it is being
  // replaced), or nullopt when there is none; SourceError when the store does not answer.
  virtual std::optional<std::string> Get(const std::string& path) = 0;
  // FileSystem::ListAfter in as few requests as the store allows (all pages of the listing
  // that starts after `after`); SourceError when the store does not answer.
  virtual std::vector<FileInfo> ListAfter(const std::string& directory,
                                          const std::string& after) = 0;
};

}  // namespace mssql_cdc::storage
