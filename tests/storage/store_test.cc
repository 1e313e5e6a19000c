// The storage seam: the local filesystem's create-if-absent, which URIs open which store, and
// the pieces of an S3 conditional write that need no server (the emulator tests are in
// tests/storage/test_s3_store.py).
#include "storage/store.h"

#include <gtest/gtest.h>

#include <chrono>

#include "core/errors.h"
#include "storage/aws_signature.h"
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
  S3ListPage page = ParseListObjectsV2(body, "t/_delta_log/");
  ASSERT_EQ(page.entries.size(), 3u);
  EXPECT_EQ(page.entries[0].name, "00000000000000000011.json");
  EXPECT_EQ(page.entries[0].size, 1234);
  EXPECT_EQ(page.entries[0].modification_time_ms, 1796482502250LL);
  EXPECT_EQ(page.entries[1].name, "a&b");
  EXPECT_EQ(page.entries[2].name, "_commits");
  EXPECT_TRUE(page.entries[2].is_directory);
  EXPECT_EQ(page.next_continuation_token, "tok&en");
  EXPECT_THROW(ParseListObjectsV2("<Error><Code>AccessDenied</Code></Error>", ""), SourceError);
  EXPECT_THROW(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                  "</ListBucketResult>", ""), SourceError);
}

TEST(AwsSignature, QueryValuesEncodeSlashes) {
  EXPECT_EQ(AwsEncodeQueryValue("t/_delta_log/0001 x"), "t%2F_delta_log%2F0001%20x");
  EXPECT_EQ(S3EncodeKey("t/_delta_log/0001 x"), "t/_delta_log/0001%20x");
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
  for (const char* uri : {"hdfs://namenode/t", "abfss://c@a.dfs.core.windows.net/t",
                          "gs://bucket/t", "S3://bucket/t", "http://host/t"}) {
    try {
      OpenStore(uri);
      ADD_FAILURE() << uri << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("s3://"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(IsObjectStoreUri("s3://b/t"));
  EXPECT_TRUE(IsObjectStoreUri("s3a://b/t"));
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
