#include "delta/grouped_appender.h"

namespace mssql_cdc::delta {

GroupedAppender::GroupedAppender(DeltaTable table)
    : table_(std::move(table)), group_([this](std::vector<Request>& requests) { WriteAll(requests); }) {}

CommitResult GroupedAppender::Append(std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                                     const Txn& txn, std::function<void(const std::string&)> on_file) {
  CommitResult result;
  group_.Submit(Request{DeltaTable::GroupedPart{txn, std::move(batches)}, std::move(on_file), &result});
  return result;
}

void GroupedAppender::WriteAll(std::vector<Request>& requests) {
  std::vector<DeltaTable::GroupedPart> parts;
  std::vector<std::function<void(const std::string&)>> observers;
  for (auto& request : requests) {
    parts.push_back(std::move(request.part));
    if (request.on_file) observers.push_back(request.on_file);
  }
  AppendOptions options;
  // Every append of the group lists the commit's files: whichever of them runs next after a
  // crash finds and deletes a file no commit named.
  if (!observers.empty()) {
    options.write.on_file = [&observers](const std::string& path) {
      for (const auto& observer : observers) observer(path);
    };
  }
  std::lock_guard lock(table_mutex_);
  const std::vector<CommitResult> results = table_.AppendGrouped(parts, options);
  for (std::size_t i = 0; i < requests.size(); ++i) *requests[i].result = results[i];
  ++commits_;
  appends_ += static_cast<std::int64_t>(requests.size());
}

int GroupedAppender::DeleteUnnamedFiles(const std::vector<std::string>& relative_paths) {
  std::lock_guard lock(table_mutex_);
  return table_.DeleteUnnamedFiles(relative_paths);
}

std::int64_t GroupedAppender::commits() const {
  std::lock_guard lock(table_mutex_);
  return commits_;
}

std::int64_t GroupedAppender::appends() const {
  std::lock_guard lock(table_mutex_);
  return appends_;
}

}  // namespace mssql_cdc::delta
