// Helpers for the Delta table tests: a temporary directory, small batches, the lines of a
// commit file.
#pragma once

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/testing/temp_dir.h"

namespace mssql_cdc::delta::testing_util {

// A temporary table directory, created empty; Log(name) is a file in its _delta_log.
class TempTableDir : public mssql_cdc::testing::TempDir {
 public:
  std::string Log(const std::string& name) const { return File("_delta_log/" + name); }
};

inline std::string Commit(std::int64_t version) {
  char name[32];
  std::snprintf(name, sizeof name, "%020lld.json", static_cast<long long>(version));
  return name;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The JSON objects of a commit file, one per line.
inline std::vector<nlohmann::json> CommitLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(ReadText(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

// The bodies of the actions called `name` in a commit file.
inline std::vector<nlohmann::json> ActionsNamed(const std::string& path, const std::string& name) {
  std::vector<nlohmann::json> found;
  for (const auto& line : CommitLines(path)) {
    if (line.contains(name)) found.push_back(line[name]);
  }
  return found;
}

inline int CountFilesEndingWith(const std::string& dir, const std::string& suffix) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      ++count;
    }
  }
  return count;
}

// A batch of (id int64, name utf8) rows: ids first..first+count-1, names "n<id>".
inline std::shared_ptr<arrow::RecordBatch> IdNameBatch(std::int64_t first, std::int64_t count) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (std::int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    EXPECT_TRUE(names.Append("n" + std::to_string(i)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false),
                               arrow::field("name", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, count, {*ids.Finish(), *names.Finish()});
}

inline std::shared_ptr<arrow::Schema> IdNameSchema() { return IdNameBatch(0, 0)->schema(); }

inline std::int64_t SumInt64(const std::shared_ptr<arrow::Table>& table, const std::string& column) {
  std::int64_t sum = 0;
  for (const auto& chunk : table->GetColumnByName(column)->chunks()) {
    const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
    for (std::int64_t i = 0; i < values.length(); ++i) {
      if (values.IsValid(i)) sum += values.Value(i);
    }
  }
  return sum;
}

}  // namespace mssql_cdc::delta::testing_util

#include <sys/inotify.h>
#include <poll.h>

#include <future>

namespace mssql_cdc::delta::testing_util {

// Plays the writer that wins a race: as soon as a data file (*.parquet) appears directly in
// `table_dir` (the losing writer has read the log and is writing its data), it creates
// `commit_path` with `contents`. The future says whether it created the file.
inline std::future<bool> WinRaceWhenDataFileAppears(const std::string& table_dir,
                                                    const std::string& commit_path,
                                                    const std::string& contents) {
  int fd = inotify_init1(IN_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_GE(inotify_add_watch(fd, table_dir.c_str(), IN_CREATE), 0);
  return std::async(std::launch::async, [fd, commit_path, contents]() {
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool created = false;
    bool seen = false;  // one chance: the first data file decides the race
    pollfd waiting{fd, POLLIN, 0};
    while (!seen && poll(&waiting, 1, 10'000) > 0) {
      ssize_t n = read(fd, buffer, sizeof buffer);
      for (char* p = buffer; p < buffer + n;) {
        auto* event = reinterpret_cast<inotify_event*>(p);
        std::string name = event->len ? event->name : "";
        if (name.size() > 8 && name.compare(name.size() - 8, 8, ".parquet") == 0) {
          seen = true;
          if (!std::filesystem::exists(commit_path)) {
            WriteText(commit_path, contents);
            created = true;
          }
          break;
        }
        p += sizeof(inotify_event) + event->len;
      }
    }
    close(fd);
    return created;
  });
}

// Enough rows that writing their data file takes longer than the racing thread's reaction.
inline std::shared_ptr<arrow::RecordBatch> BigBatch(std::int64_t first) {
  return IdNameBatch(first, 300'000);
}

}  // namespace mssql_cdc::delta::testing_util
