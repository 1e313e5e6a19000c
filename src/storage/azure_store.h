// The Azure Blob store: abfss://container@account.dfs.core.windows.net/path (Hadoop's name,
// also with .blob. for the host) and az://container/path URIs, opened through Arrow's Azure
// filesystem, with commits made by a Shared Key or SAS authorized Put Blob carrying
// If-None-Match: * (decision 0017).
//
// Settings are read where Azure's own tools read them: AZURE_STORAGE_CONNECTION_STRING (its
// AccountName, AccountKey, SharedAccessSignature, BlobEndpoint, EndpointSuffix,
// DefaultEndpointsProtocol, or UseDevelopmentStorage=true for Azurite's defaults), or
// AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN (the Azure CLI's
// names). Two sources of one setting that could disagree are refused, never chosen between.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "storage/file_system.h"

namespace mssql_cdc::storage {

struct AzureLocation {
  std::string account;          // empty for az:// (the settings name it)
  std::string endpoint_suffix;  // "core.windows.net"; empty for az://
  std::string container;
  std::string path;  // without leading or trailing '/'; empty for the container's root
};

// Reads "abfss://container@account.dfs.<suffix>/path" (or .blob.<suffix>) and
// "az://container/path". Throws ConfigError saying what is wrong.
AzureLocation ParseAzureUri(const std::string& uri);

// The parts of an Azure Storage connection string ("Name=value;..."); a value may hold '='.
// Throws ConfigError naming the part's position (never its value) when one has no '='.
std::map<std::string, std::string> ParseAzureConnectionString(const std::string& text);

// The filesystem of the URI's container and the table's root in it ("container/path"). The
// first call for a container checks, before anything is written, the settings, that the
// container exists and the credentials may read it, and that the store refuses a second
// Put Blob with If-None-Match: * (a probe created twice, then deleted). Later calls share it.
std::pair<std::shared_ptr<FileSystem>, std::string> OpenAzureStore(const std::string& uri);

// Forgets every Azure filesystem (store.h's ReleaseObjectStores).
void ReleaseAzureStores();

}  // namespace mssql_cdc::storage
