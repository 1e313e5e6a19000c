// The storage seam: the local filesystem's create-if-absent, which URIs open which store, and
// the pieces of an S3 conditional write that need no server (the emulator tests are in
// tests/storage/test_s3_store.py).
#include "storage/base64.h"
#include "storage/store.h"

#include <gtest/gtest.h>

#include <chrono>

#include "core/errors.h"
#include "storage/aws_signature.h"
#include "storage/azure_list_response.h"
#include "storage/azure_signature.h"
#include "storage/azure_store.h"
#include "storage/http_client.h"
#include "storage/s3_list_response.h"
#include "storage/s3_store.h"
#include "storage/store_retry.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::storage {
namespace {

TEST(LocalFileSystem, WriteIfAbsentNeverOverwritesAndLeavesNoTempFiles) {
  mssql_cdc::testing::TempDir dir;
  auto fs = LocalFileSystem();
  std::string path = dir.path() + "/00000000000000000000.json";
  EXPECT_TRUE(fs->WriteIfAbsent(path, "first\n"));
  EXPECT_FALSE(fs->WriteIfAbsent(path, "second\n"));
  EXPECT_EQ(*fs->ReadFile(path), "first\n");
  fs->WriteAtomic(dir.path() + "/_last_checkpoint", "a");
  fs->WriteAtomic(dir.path() + "/_last_checkpoint", "b");
  EXPECT_EQ(*fs->ReadFile(dir.path() + "/_last_checkpoint"), "b");
  auto entries = fs->List(dir.path());
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "00000000000000000000.json");
  EXPECT_EQ(entries[1].name, "_last_checkpoint");
  EXPECT_FALSE(fs->ReadFile(dir.path() + "/missing").has_value());
  EXPECT_TRUE(fs->List(dir.path() + "/missing").empty());
  EXPECT_THROW(fs->Stat(dir.path() + "/missing"), SourceError);
}

TEST(LocalFileSystem, ListAfterKeepsOnlyLaterNames) {
  mssql_cdc::testing::TempDir dir;
  auto fs = LocalFileSystem();
  for (const char* name : {"00000000000000000009.json", "00000000000000000010.checkpoint.parquet",
                           "00000000000000000010.json", "00000000000000000011.json",
                           "_last_checkpoint"}) {
    fs->WriteAtomic(dir.path() + "/" + name, "x");
  }
  std::vector<std::string> names;
  for (const auto& entry : fs->ListAfter(dir.path(), "00000000000000000010")) {
    names.push_back(entry.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"00000000000000000010.checkpoint.parquet",
                                             "00000000000000000010.json",
                                             "00000000000000000011.json", "_last_checkpoint"}));
}

TEST(S3ListResponse, ReadsObjectsPrefixesPagesAndEscapes) {
  const std::string body =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>"
      "<Prefix>t/_delta_log/</Prefix><KeyCount>3</KeyCount><IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>tok&amp;en</NextContinuationToken>"
      "<Contents><Key>t/_delta_log/</Key><Size>0</Size></Contents>"
      "<Contents><Key>t/_delta_log/00000000000000000011.json</Key>"
      "<LastModified>2026-12-05T14:55:02.250Z</LastModified><Size>1234</Size></Contents>"
      "<Contents><Key>t/_delta_log/a&amp;b</Key><LastModified>2026-12-05T14:55:02.000Z"
      "</LastModified><Size>7</Size></Contents>"
      "<CommonPrefixes><Prefix>t/_delta_log/_commits/</Prefix></CommonPrefixes>"
      "</ListBucketResult>";
  ListPage page = ParseListObjectsV2(body, "t/_delta_log/");
  ASSERT_EQ(page.entries.size(), 3u);
  EXPECT_EQ(page.entries[0].name, "00000000000000000011.json");
  EXPECT_EQ(page.entries[0].size, 1234);
  EXPECT_EQ(page.entries[0].modification_time_ms, 1796482502250LL);
  EXPECT_EQ(page.entries[1].name, "a&b");
  EXPECT_EQ(page.entries[2].name, "_commits");
  EXPECT_TRUE(page.entries[2].is_directory);
  EXPECT_EQ(page.next, "tok&en");
  EXPECT_THROW(ParseListObjectsV2("<Error><Code>AccessDenied</Code></Error>", ""), SourceError);
  EXPECT_THROW(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                  "</ListBucketResult>", ""), SourceError);
}

TEST(AwsSignature, QueryValuesEncodeSlashes) {
  EXPECT_EQ(AwsEncodeQueryValue("t/_delta_log/0001 x"), "t%2F_delta_log%2F0001%20x");
  EXPECT_EQ(S3EncodeKey("t/_delta_log/0001 x"), "t/_delta_log/0001%20x");
}

TEST(AzureUri, AbfssAndAzForms) {
  AzureLocation a = ParseAzureUri("abfss://lake@acct1.dfs.core.windows.net/bronze/t/");
  EXPECT_EQ(a.account, "acct1");
  EXPECT_EQ(a.endpoint_suffix, "core.windows.net");
  EXPECT_EQ(a.container, "lake");
  EXPECT_EQ(a.path, "bronze/t");
  AzureLocation blob = ParseAzureUri("abfss://lake@acct1.blob.core.chinacloudapi.cn");
  EXPECT_EQ(blob.endpoint_suffix, "core.chinacloudapi.cn");
  EXPECT_EQ(blob.path, "");
  AzureLocation az = ParseAzureUri("az://lake/bronze/t");
  EXPECT_EQ(az.account, "");
  EXPECT_EQ(az.container, "lake");
  EXPECT_EQ(az.path, "bronze/t");
  for (const char* bad : {"abfss://acct1.dfs.core.windows.net/t", "abfss://lake@acct1.example.com/t",
                          "abfss://lake@Acct.dfs.core.windows.net/t", "az://La/t", "az://a--b/t",
                          "az://lake//t", "az://lake/t?sig=x", "abfss://lake@acct1.dfs.core.windows.net/t#x"}) {
    EXPECT_THROW(ParseAzureUri(bad), ConfigError) << bad;
  }
}

TEST(AzureConnectionString, PartsKeepEqualsSignsAndNeverEchoValues) {
  auto parts = ParseAzureConnectionString(
      "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=abc==;"
      "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;");
  EXPECT_EQ(parts.at("AccountKey"), "abc==");
  EXPECT_EQ(parts.at("BlobEndpoint"), "http://127.0.0.1:10000/devstoreaccount1");
  try {
    ParseAzureConnectionString("AccountName=a;secretvalue");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find("secretvalue"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("part 2"), std::string::npos) << e.what();
  }
}

TEST(AzureSignature, SharedKeyMatchesTheSchemesStringToSign) {
  const std::string key = *Base64Decode(
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(Base64Encode(key).size(), 88u);
  EXPECT_FALSE(Base64Decode("not base64!").has_value());
  const auto when = std::chrono::system_clock::from_time_t(1796482583);
  EXPECT_EQ(HttpDate(when), "Sat, 05 Dec 2026 14:56:23 GMT");
  auto authorization = [](const HttpRequest& request) {
    for (const auto& [name, value] : request.headers) {
      if (name == "Authorization") return value;
    }
    return std::string();
  };
  // Strings to sign as Azurite accepts them, with the signatures HMAC-SHA256 gives for them.
  HttpRequest put;
  put.method = "PUT";
  put.target = "/devstoreaccount1/probe1796482583/_delta_log/00000000000000000000.json";
  put.headers = {{"x-ms-blob-type", "BlockBlob"}, {"If-None-Match", "*"},
                 {"x-ms-version", "2021-10-04"}};
  put.body = std::string(18, 'x');
  SignAzureSharedKey(put, "devstoreaccount1", key, {}, when);
  EXPECT_EQ(authorization(put),
            "SharedKey devstoreaccount1:l8Tm6Z2YbKzaZTVvv+HzJcNPYNpjXe7gqD8a1YVbBfM=");
  HttpRequest list;
  list.method = "GET";
  list.target = "/devstoreaccount1/cont?restype=container&comp=list";
  list.headers = {{"x-ms-version", "2026-02-06"}};
  SignAzureSharedKey(list, "devstoreaccount1", key,
                     {{"restype", "container"}, {"comp", "list"}, {"prefix", "t/_delta_log/"},
                      {"delimiter", "/"}, {"startFrom", "t/_delta_log/00000000000000000003"}},
                     when);
  EXPECT_EQ(authorization(list),
            "SharedKey devstoreaccount1:Ww/UUx2W/dpeuQAcf0oxhcaeB7JUBp93fPEH6iBja0A=");
}

TEST(AzureListResponse, ReadsBlobsPrefixesAndMarkers) {
  const std::string body =
      "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ContainerName=\"c\">"
      "<Prefix>t/_delta_log/</Prefix><Blobs>"
      "<Blob><Name>t/_delta_log/</Name><Properties><Content-Length>0</Content-Length>"
      "</Properties></Blob>"
      "<Blob><Name>t/_delta_log/00000000000000000004.json</Name><Properties>"
      "<Last-Modified>Sat, 05 Dec 2026 14:56:23 GMT</Last-Modified>"
      "<Content-Length>812</Content-Length></Properties></Blob>"
      "<BlobPrefix><Name>t/_delta_log/_commits/</Name></BlobPrefix></Blobs>"
      "<NextMarker>2!a&amp;b</NextMarker></EnumerationResults>";
  ListPage page = ParseListBlobs(body, "t/_delta_log/");
  ASSERT_EQ(page.entries.size(), 2u);
  EXPECT_EQ(page.entries[0].name, "00000000000000000004.json");
  EXPECT_EQ(page.entries[0].size, 812);
  EXPECT_EQ(page.entries[0].modification_time_ms, 1796482583000LL);
  EXPECT_EQ(page.entries[1].name, "_commits");
  EXPECT_TRUE(page.entries[1].is_directory);
  EXPECT_EQ(page.next, "2!a&b");
  EXPECT_TRUE(ParseListBlobs("<EnumerationResults><Blobs/><NextMarker/></EnumerationResults>", "")
                  .next.empty());
  EXPECT_THROW(ParseListBlobs("<Error><Code>AuthorizationFailure</Code></Error>", ""),
               SourceError);
}

TEST(OpenStore, LocalPathsAndFileUris) {
  EXPECT_EQ(OpenStore("/data/t/").second, "/data/t");
  EXPECT_EQ(OpenStore("file:///data/my%20t").second, "/data/my t");
  EXPECT_EQ(OpenStore("file://localhost/data/t").second, "/data/t");
  EXPECT_EQ(OpenStore("file:/data/t").second, "/data/t");
  EXPECT_EQ(OpenStore("relative/t").second.front(), '/');
  EXPECT_THROW(OpenStore("file://otherhost/t"), ConfigError);
  EXPECT_THROW(OpenStore(""), ConfigError);
}

TEST(OpenStore, RefusesSchemesNoStoreOpensNamingTheOnesThatDo) {
  for (const char* uri : {"hdfs://namenode/t", "abfs://c@acct.dfs.core.windows.net/t",
                          "gcs://bucket/t", "S3://bucket/t", "http://host/t"}) {
    try {
      OpenStore(uri);
      ADD_FAILURE() << uri << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("s3://"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(IsObjectStoreUri("s3://b/t"));
  EXPECT_TRUE(IsObjectStoreUri("s3a://b/t"));
  EXPECT_TRUE(IsObjectStoreUri("abfss://c@acct.dfs.core.windows.net/t"));
  EXPECT_TRUE(IsObjectStoreUri("az://cont/t"));
  EXPECT_TRUE(IsObjectStoreUri("gs://bucket/t"));
  EXPECT_FALSE(IsObjectStoreUri("/data/s3://b"));
  EXPECT_FALSE(IsObjectStoreUri("file:///t"));
}

TEST(S3Uri, BucketAndKey) {
  EXPECT_EQ(ParseS3Uri("s3://my-bucket/lake/bronze/").bucket, "my-bucket");
  EXPECT_EQ(ParseS3Uri("s3://my-bucket/lake/bronze/").key, "lake/bronze");
  EXPECT_EQ(ParseS3Uri("s3a://my.bucket/t").key, "t");
  EXPECT_EQ(ParseS3Uri("s3://bucket").key, "");
  for (const char* bad : {"s3://", "s3:///t", "s3://Bucket/t", "s3://ab/t", "s3://-bucket/t",
                          "s3://bucket/t?versionId=1", "s3://bucket/a//b", "s3://under_score/t"}) {
    EXPECT_THROW(ParseS3Uri(bad), ConfigError) << bad;
  }
}

// The example request of the AWS Signature Version 4 documentation for S3 ("GET Object"):
// its published signature is the oracle.
TEST(AwsSignature, MatchesThePublishedS3Example) {
  HttpRequest request;
  request.method = "GET";
  request.target = "/test.txt";
  request.headers = {{"Range", "bytes=0-9"}};
  AwsCredentials credentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
  const auto when = std::chrono::system_clock::from_time_t(1369353600);  // 2013-05-24T00:00:00Z
  SignAwsRequest(request, "examplebucket.s3.amazonaws.com", "us-east-1", "s3", credentials, when);
  std::string authorization;
  for (const auto& [name, value] : request.headers) {
    if (name == "Authorization") authorization = value;
  }
  EXPECT_EQ(authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(AwsSignature, SessionTokenIsSignedAndKeysAreEncoded) {
  HttpRequest request;
  request.method = "PUT";
  request.target = "/b/" + S3EncodeKey("t/_delta_log/0 1$.json");
  AwsCredentials credentials{"AKID", "SECRET", "TOKEN"};
  SignAwsRequest(request, "localhost:9000", "us-east-1", "s3", credentials,
                 std::chrono::system_clock::now());
  EXPECT_EQ(request.target, "/b/t/_delta_log/0%201%24.json");
  bool token = false;
  for (const auto& [name, value] : request.headers) {
    if (name == "x-amz-security-token") token = value == "TOKEN";
    if (name == "Authorization") {
      EXPECT_NE(value.find("x-amz-security-token"), std::string::npos);
      EXPECT_EQ(value.find("SECRET"), std::string::npos);
    }
  }
  EXPECT_TRUE(token);
}

TEST(HttpEndpoint, ParsesSchemeHostAndPort) {
  HttpEndpoint local = ParseHttpEndpoint("http://127.0.0.1:5000/", "AWS_ENDPOINT_URL");
  EXPECT_FALSE(local.tls);
  EXPECT_EQ(local.host, "127.0.0.1");
  EXPECT_EQ(local.port, 5000);
  EXPECT_EQ(local.HostHeader(), "127.0.0.1:5000");
  HttpEndpoint remote = ParseHttpEndpoint("https://s3.example.com", "AWS_ENDPOINT_URL");
  EXPECT_TRUE(remote.tls);
  EXPECT_EQ(remote.port, 443);
  EXPECT_EQ(remote.HostHeader(), "s3.example.com");
  EXPECT_EQ(ParseHttpEndpoint("http://[::1]:9000", "x").HostHeader(), "[::1]:9000");
  for (const char* bad : {"localhost:9000", "ftp://h", "http://h:0", "http://h:99999",
                          "http://h/path", "https://user@h"}) {
    EXPECT_THROW(ParseHttpEndpoint(bad, "AWS_ENDPOINT_URL"), ConfigError) << bad;
  }
}

TEST(StoreRetry, BackoffGrowsAndIsCapped) {
  RetryPolicy policy{8, std::chrono::milliseconds(100), std::chrono::milliseconds(1000)};
  for (int i = 0; i < 50; ++i) {
    auto first = BackoffDelay(policy, 1).count();
    EXPECT_GE(first, 50);
    EXPECT_LE(first, 100);
    auto late = BackoffDelay(policy, 10).count();
    EXPECT_GE(late, 500);
    EXPECT_LE(late, 1000);
  }
}

}  // namespace
}  // namespace mssql_cdc::storage
