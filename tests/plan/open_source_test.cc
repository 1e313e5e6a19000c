#include "source/open_source.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/testing/temp_dir.h"
#include "core/errors.h"
#include "sim/database.h"

namespace mssql_cdc {
namespace {

using testing::TempDir;

std::string ConfigErrorOf(const SourceOptions& options) {
  try {
    MakeSourceFactory(options);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

TEST(MakeSourceFactory, SimWithoutSimPathIsAConfigError) {
  SourceOptions options;
  options.backend = Backend::kSim;
  EXPECT_NE(ConfigErrorOf(options).find("simPath"), std::string::npos);
  options.sim_path = "";
  EXPECT_NE(ConfigErrorOf(options).find("simPath"), std::string::npos);
}

TEST(MakeSourceFactory, SimFactoryOpensANewSourcePerCall) {
  TempDir dir;
  const std::string path = dir.File("sim.db");
  auto db = sim::SimDatabase::Create(path);
  const Lsn idle = db->WriteIdleEntry();

  SourceOptions options;
  options.backend = Backend::kSim;
  options.sim_path = path;
  const SourceFactory factory = MakeSourceFactory(options);
  auto a = factory();
  auto b = factory();
  ASSERT_TRUE(a && b);
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(a->MaxLsn(), idle);
  EXPECT_EQ(b->MaxLsn(), idle);
}

TEST(MakeSourceFactory, MissingSimFileFailsWhenOpened) {
  TempDir dir;
  SourceOptions options;
  options.backend = Backend::kSim;
  options.sim_path = dir.File("absent.db");
  const SourceFactory factory = MakeSourceFactory(options);
  EXPECT_THROW(factory(), SourceError);
}

}  // namespace
}  // namespace mssql_cdc
