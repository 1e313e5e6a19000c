// A Source that forwards every call to another one: tests derive from it and override the
// calls they watch or disturb (count them, fail them, restart the server in their middle).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "source/source.h"

namespace mssql_cdc::testing {

class ForwardingSource : public Source {
 public:
  explicit ForwardingSource(std::unique_ptr<Source> inner) : inner_(std::move(inner)) {}

  std::vector<CaptureInstanceInfo> ListCaptureInstances() override {
    return inner_->ListCaptureInstances();
  }
  std::vector<CaptureInstanceInfo> ListTableInstances(const std::string& source_schema,
                                                      const std::string& source_table) override {
    return inner_->ListTableInstances(source_schema, source_table);
  }
  std::vector<CapturedColumn> CapturedColumns(const std::string& ci) override {
    return inner_->CapturedColumns(ci);
  }
  std::vector<DdlEvent> DdlHistory(const std::string& ci) override {
    return inner_->DdlHistory(ci);
  }
  std::string ServerTimeZone() override { return inner_->ServerTimeZone(); }
  std::optional<double> RoundTripMs() override { return inner_->RoundTripMs(); }
  Lsn MinLsn(const std::string& ci) override { return inner_->MinLsn(ci); }
  std::optional<Lsn> MaxLsn() override { return inner_->MaxLsn(); }
  std::optional<Lsn> NthCommitAfter(const Lsn& after, std::int64_t n) override {
    return inner_->NthCommitAfter(after, n);
  }
  std::optional<LocalMicros> CommitTime(const Lsn& lsn) override { return inner_->CommitTime(lsn); }
  std::optional<Lsn> LastCommitAtOrBefore(LocalMicros time) override {
    return inner_->LastCommitAtOrBefore(time);
  }
  std::optional<LocalMicros> CommitTimeAtOrBefore(const Lsn& lsn) override {
    return inner_->CommitTimeAtOrBefore(lsn);
  }
  std::vector<SplitPoint> SplitPoints(const std::string& ci, const Lsn& from, const Lsn& to,
                                      int n) override {
    return inner_->SplitPoints(ci, from, to, n);
  }
  std::unique_ptr<arrow::RecordBatchReader> ReadChanges(const ChangeReadRequest& request,
                                                         const SourceClock& clock) override {
    return inner_->ReadChanges(request, clock);
  }
  std::unique_ptr<arrow::RecordBatchReader> ReadSnapshot(
      const SnapshotReadRequest& request) override {
    return inner_->ReadSnapshot(request);
  }
  std::optional<nlohmann::json> KeyAt(const KeyQuery& query, const nlohmann::json& from,
                                      std::int64_t offset) override {
    return inner_->KeyAt(query, from, offset);
  }
  std::optional<nlohmann::json> LastKey(const KeyQuery& query) override {
    return inner_->LastKey(query);
  }
  std::int64_t RowEstimate(const std::string& ci) override { return inner_->RowEstimate(ci); }
  std::vector<std::string> TableColumns(const std::string& ci) override { return inner_->TableColumns(ci); }
  std::vector<SliceCount> CountKeySlices(const KeyQuery& query, std::int64_t start,
                                         std::int64_t width, std::int64_t slices) override {
    return inner_->CountKeySlices(query, start, width, slices);
  }

 private:
  std::unique_ptr<Source> inner_;
};

}  // namespace mssql_cdc::testing
