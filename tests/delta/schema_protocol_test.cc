// Delta schemaString <-> Arrow, the type widening rules, schema merges and the protocol a
// table needs.
#include "delta/schema.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "delta/protocol.h"

namespace mssql_cdc::delta {
namespace {

TEST(DeltaSchema, EveryTypeRoundTripsWithNullabilityAndComments) {
  auto comment = arrow::key_value_metadata({"comment"}, {"business key"});
  auto schema = arrow::schema({
      arrow::field("s", arrow::utf8()),
      arrow::field("l", arrow::int64(), false, comment),
      arrow::field("i", arrow::int32()),
      arrow::field("sh", arrow::int16()),
      arrow::field("b", arrow::int8()),
      arrow::field("f", arrow::float32()),
      arrow::field("d", arrow::float64()),
      arrow::field("flag", arrow::boolean()),
      arrow::field("bin", arrow::binary()),
      arrow::field("day", arrow::date32()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("amount", arrow::decimal128(19, 4)),
  });
  std::string json = ToDeltaSchemaString(*schema);
  auto parsed = nlohmann::json::parse(json);
  EXPECT_EQ(parsed["type"], "struct");
  std::vector<std::string> types;
  for (const auto& f : parsed["fields"]) types.push_back(f["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"string", "long", "integer", "short", "byte", "float",
                                             "double", "boolean", "binary", "date", "timestamp",
                                             "timestamp_ntz", "decimal(19,4)"}));
  EXPECT_EQ(parsed["fields"][1]["nullable"], false);
  EXPECT_EQ(parsed["fields"][1]["metadata"], nlohmann::json({{"comment", "business key"}}));

  auto back = FromDeltaSchemaString(json, "test");
  EXPECT_TRUE(back->Equals(*schema, /*check_metadata=*/true)) << back->ToString();
}

TEST(DeltaSchema, ReadsSparkSpellingsAndRefusesWhatItCannotRead) {
  auto schema = FromDeltaSchemaString(
      R"j({"type":"struct","fields":[{"name":"p","type":"decimal(10, 2)","nullable":true,"metadata":{}}]})j",
      "t");
  EXPECT_TRUE(schema->field(0)->type()->Equals(arrow::decimal128(10, 2)));
  // Spark Connect's spelling of the default collation is a plain string; another is refused.
  auto collated = FromDeltaSchemaString(
      R"j({"type":"struct","fields":[{"name":"s","type":"string collate UTF8_BINARY","nullable":true,"metadata":{}}]})j",
      "t");
  EXPECT_TRUE(collated->field(0)->type()->Equals(arrow::utf8()));
  EXPECT_THROW(FromDeltaSchemaString(
                   R"j({"type":"struct","fields":[{"name":"s","type":"string collate UTF8_LCASE","nullable":true}]})j",
                   "t"),
               SourceError);
  EXPECT_THROW(FromDeltaSchemaString("{nope", "t"), SourceError);
  EXPECT_THROW(FromDeltaSchemaString(R"({"type":"struct","fields":[{"name":"v","type":"variant","nullable":true}]})", "t"),
               SourceError);
  EXPECT_THROW(ToDeltaSchemaString(*arrow::schema({arrow::field("x", arrow::list(arrow::int32()))})),
               UnsupportedTypeError);
}

TEST(DeltaSchema, TypeChangeMetadataKeepsItsJson) {
  auto field = arrow::field(
      "e", arrow::int64(), true,
      arrow::key_value_metadata({"delta.typeChanges"},
                                {R"([{"fromType":"short","toType":"integer"}])"}));
  auto json = nlohmann::json::parse(ToDeltaSchemaString(*arrow::schema({field})));
  EXPECT_TRUE(json["fields"][0]["metadata"]["delta.typeChanges"].is_array());
}

TEST(DeltaSchema, WideningFollowsTheProtocolList) {
  EXPECT_TRUE(IsTypeWidening("byte", "short"));
  EXPECT_TRUE(IsTypeWidening("short", "long"));
  EXPECT_TRUE(IsTypeWidening("integer", "long"));
  EXPECT_TRUE(IsTypeWidening("float", "double"));
  EXPECT_TRUE(IsTypeWidening("integer", "double"));
  EXPECT_TRUE(IsTypeWidening("date", "timestamp_ntz"));
  EXPECT_TRUE(IsTypeWidening("decimal(10,2)", "decimal(12,4)"));
  EXPECT_TRUE(IsTypeWidening("decimal(10,2)", "decimal(12,2)"));
  EXPECT_TRUE(IsTypeWidening("integer", "decimal(10,0)"));
  EXPECT_TRUE(IsTypeWidening("long", "decimal(22,2)"));

  EXPECT_FALSE(IsTypeWidening("long", "integer"));
  EXPECT_FALSE(IsTypeWidening("long", "double"));
  EXPECT_FALSE(IsTypeWidening("date", "timestamp"));
  EXPECT_TRUE(IsTypeWidening("decimal(10,2)", "decimal(11,3)"));  // k1 = k2 = 1
  EXPECT_FALSE(IsTypeWidening("decimal(10,2)", "decimal(10,3)"));
  EXPECT_FALSE(IsTypeWidening("integer", "decimal(9,0)"));
  EXPECT_FALSE(IsTypeWidening("long", "decimal(20,1)"));
  EXPECT_FALSE(IsTypeWidening("string", "long"));
  EXPECT_FALSE(IsTypeWidening("long", "long"));
}

TEST(DeltaSchemaMerge, AppendsNewColumnsAsNullableAndMatchesNamesIgnoringCase) {
  auto table = arrow::schema({arrow::field("Id", arrow::int64(), false)});
  auto incoming = arrow::schema({arrow::field("extra", arrow::utf8(), false),
                                 arrow::field("ID", arrow::int32(), false)});
  auto merged = MergeSchemas(*table, *incoming, {});
  EXPECT_TRUE(merged.changed);
  EXPECT_FALSE(merged.widened);
  ASSERT_EQ(merged.schema->num_fields(), 2);
  EXPECT_EQ(merged.schema->field(0)->name(), "Id");
  EXPECT_TRUE(merged.schema->field(0)->type()->Equals(arrow::int64()));
  EXPECT_EQ(merged.schema->field(1)->name(), "extra");
  EXPECT_TRUE(merged.schema->field(1)->nullable());

  EXPECT_FALSE(MergeSchemas(*table, *arrow::schema({arrow::field("id", arrow::int16())}), {}).changed);
  EXPECT_THROW(MergeSchemas(*table,
                            *arrow::schema({arrow::field("a", arrow::utf8()), arrow::field("A", arrow::utf8())}),
                            {}),
               ConfigError);
}

TEST(DeltaSchemaMerge, WideningIsRecordedOnlyWhenEnabled) {
  auto table = arrow::schema({arrow::field("v", arrow::decimal128(10, 2))});
  auto incoming = arrow::schema({arrow::field("v", arrow::decimal128(14, 4))});
  SchemaMergeRules rules;
  rules.table = "/t";
  EXPECT_THROW(MergeSchemas(*table, *incoming, rules), SchemaChangedError);
  rules.type_widening_enabled = true;
  auto merged = MergeSchemas(*table, *incoming, rules);
  EXPECT_TRUE(merged.widened);
  EXPECT_TRUE(merged.schema->field(0)->type()->Equals(arrow::decimal128(14, 4)));
  auto json = nlohmann::json::parse(ToDeltaSchemaString(*merged.schema));
  EXPECT_EQ(json["fields"][0]["metadata"]["delta.typeChanges"],
            nlohmann::json::parse(R"j([{"fromType":"decimal(10,2)","toType":"decimal(14,4)"}])j"));

  // A second widening appends to the history.
  auto again = MergeSchemas(*merged.schema, *arrow::schema({arrow::field("v", arrow::decimal128(20, 4))}), rules);
  auto history = nlohmann::json::parse(
      again.schema->field(0)->metadata()->Get("delta.typeChanges").ValueOrDie());
  EXPECT_EQ(history.size(), 2u);
}

TEST(DeltaProtocol, LowestVersionsForTheFeaturesInUse) {
  auto plain = arrow::schema({arrow::field("a", arrow::int64())});
  EXPECT_EQ(RequiredProtocol(std::nullopt, *plain, {}), (Protocol{1, 2, {}, {}}));

  auto ntz = arrow::schema({arrow::field("a", arrow::timestamp(arrow::TimeUnit::MICRO))});
  EXPECT_EQ(RequiredProtocol(std::nullopt, *ntz, {}),
            (Protocol{3, 7, {"timestampNtz"}, {"appendOnly", "invariants", "timestampNtz"}}));

  // An existing (1,2) table moving to table features keeps what version 2 implied.
  auto widened = RequiredProtocol(Protocol{}, *plain, {{"delta.enableTypeWidening", "true"}});
  EXPECT_EQ(widened, (Protocol{3, 7, {"typeWidening"}, {"appendOnly", "invariants", "typeWidening"}}));

  // Features are kept once added, even when nothing needs them any more.
  EXPECT_EQ(RequiredProtocol(widened, *plain, {}), widened);
  auto both = RequiredProtocol(widened, *ntz, {});
  EXPECT_EQ(both.reader_features, (std::vector<std::string>{"typeWidening", "timestampNtz"}));
}

TEST(DeltaProtocol, RefusesWhatThisEngineCannotReadOrWrite) {
  const Metadata plain;
  Metadata by_id;
  by_id.configuration = {{"delta.columnMapping.mode", "id"}};
  EXPECT_NO_THROW(CheckCanRead(Protocol{3, 7, {"timestampNtz"}, {"timestampNtz"}}, plain, "t"));
  EXPECT_THROW(CheckCanRead(Protocol{3, 7, {"deletionVectors"}, {"deletionVectors"}}, plain, "t"),
               SourceError);
  EXPECT_THROW(CheckCanRead(Protocol{2, 5, {}, {}}, by_id, "t"), SourceError);
  EXPECT_THROW(CheckCanWrite(Protocol{1, 4, {}, {}}, plain, "t"), ConfigError);
  EXPECT_THROW(CheckCanWrite(Protocol{3, 7, {}, {"rowTracking"}}, plain, "t"), ConfigError);
  EXPECT_THROW(CheckCanWrite(Protocol{2, 5, {}, {}}, by_id, "t"), ConfigError);
  EXPECT_NO_THROW(CheckCanWrite(Protocol{1, 2, {}, {}}, plain, "t"));
  EXPECT_THROW(CheckTableProperties({{"delta.columnMapping.mode", "id"}}), ConfigError);
  EXPECT_THROW(CheckTableProperties({{"delta.checkpointInterval", "0"}}), ConfigError);
  EXPECT_NO_THROW(CheckTableProperties({{"delta.enableTypeWidening", "true"},
                                        {"delta.columnMapping.mode", "name"},
                                        {"mssql_cdc.schema_version", "3"}}));
}

// Writer version 5 (what the ALTER TABLE that enables column mapping gives) implies constraints,
// the change data feed and generated columns; they bind a writer only where the table uses them.
TEST(DeltaProtocol, WritesVersionFiveTablesThatUseNothingItCannotWrite) {
  Metadata mapped;
  mapped.configuration = {{"delta.columnMapping.mode", "name"}};
  EXPECT_NO_THROW(CheckCanRead(Protocol{2, 5, {}, {}}, mapped, "t"));
  EXPECT_NO_THROW(CheckCanWrite(Protocol{2, 5, {}, {}}, mapped, "t"));
  const Protocol upgraded{3, 7, {"columnMapping"},
                          {"appendOnly", "invariants", "checkConstraints", "changeDataFeed",
                           "generatedColumns", "columnMapping"}};
  EXPECT_NO_THROW(CheckCanWrite(upgraded, mapped, "t"));

  Metadata with_feed = mapped;
  with_feed.configuration["delta.enableChangeDataFeed"] = "true";
  EXPECT_THROW(CheckCanWrite(Protocol{2, 5, {}, {}}, with_feed, "t"), ConfigError);
  Metadata with_constraint = mapped;
  with_constraint.configuration["delta.constraints.positive"] = "id > 0";
  EXPECT_THROW(CheckCanWrite(upgraded, with_constraint, "t"), ConfigError);
}

TEST(DeltaProtocol, ColumnMappingAloneIsReaderTwoWriterFive) {
  auto plain = arrow::schema({arrow::field("a", arrow::int64())});
  const StringMap mapped = {{"delta.columnMapping.mode", "name"}};
  EXPECT_EQ(RequiredProtocol(std::nullopt, *plain, mapped), (Protocol{2, 5, {}, {}}));

  // With a feature only table features name, mapping is named in both lists.
  auto ntz = arrow::schema({arrow::field("a", arrow::timestamp(arrow::TimeUnit::MICRO))});
  EXPECT_EQ(RequiredProtocol(std::nullopt, *ntz, mapped),
            (Protocol{3, 7, {"timestampNtz", "columnMapping"},
                      {"appendOnly", "invariants", "timestampNtz", "columnMapping"}}));

  // A (2,5) table that then needs type widening keeps mapping and what version 5 implied.
  StringMap widening = mapped;
  widening["delta.enableTypeWidening"] = "true";
  auto upgraded = RequiredProtocol(Protocol{2, 5, {}, {}}, *plain, widening);
  EXPECT_EQ(upgraded.min_reader_version, 3);
  EXPECT_EQ(upgraded.reader_features, (std::vector<std::string>{"columnMapping", "typeWidening"}));
  EXPECT_EQ(upgraded.writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "checkConstraints", "changeDataFeed",
                                      "generatedColumns", "columnMapping", "typeWidening"}));
}

}  // namespace
}  // namespace mssql_cdc::delta
