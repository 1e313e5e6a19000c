// A fresh directory under the system temp dir ($TMPDIR) for one test, removed with its
// contents afterwards, unless MSSQL_CDC_KEEP_TEST_DIRS is set: then it stays, so that a
// second reader can open what the test wrote (tests/engine/test_tables_open_in_delta_rs.py).
// Shared by the GoogleTest binaries of every tests/<component>.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace mssql_cdc::testing {

class TempDir {
 public:
  // kCreate: the directory exists, empty. kNameOnly: nothing is there yet, for code under
  // test that creates the directory itself (a new Delta table, say).
  enum class Mode { kCreate, kNameOnly };

  // Named mssql_cdc_test_<pid>_<n>, unique within the process and between processes that
  // run at once; whatever an earlier process of the same pid left there is removed first.
  explicit TempDir(Mode mode = Mode::kCreate) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("mssql_cdc_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    if (mode == Mode::kCreate) std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    if (std::getenv("MSSQL_CDC_KEEP_TEST_DIRS") != nullptr) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  // `name` (may hold '/') under the directory.
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace mssql_cdc::testing
