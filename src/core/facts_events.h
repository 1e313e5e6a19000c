// The kinds of facts rows other than micro-batches: the `event` column of the ingestion facts
// table (docs/reference/tables.md). Defined once: the engine writes and reads them by these
// names, and the Python package exports them (mssql_cdc.events).
#pragma once

#include <array>
#include <string_view>

namespace mssql_cdc::facts_event {

// A snapshot's completion: the first one of a target, or one taken after changes were lost.
inline constexpr std::string_view kBootstrap = "bootstrap";
inline constexpr std::string_view kResnapshot = "resnapshot";
// A snapshot opened, its chunk plan recorded, one chunk of it read.
inline constexpr std::string_view kSnapshotOpen = "snapshot_open";
inline constexpr std::string_view kSnapshotPlan = "snapshot_plan";
inline constexpr std::string_view kSnapshotChunk = "snapshot_chunk";
// A DDL statement on the source table, a switch to a newer capture instance, changes skipped.
inline constexpr std::string_view kSchemaChange = "schema_change";
inline constexpr std::string_view kCaptureInstanceSwitched = "capture_instance_switched";
inline constexpr std::string_view kDataSkipped = "data_skipped";

inline constexpr std::array kAll = {kBootstrap,     kResnapshot,    kSnapshotOpen,
                                    kSnapshotPlan,  kSnapshotChunk, kSchemaChange,
                                    kCaptureInstanceSwitched,       kDataSkipped};

// True for the events that complete a snapshot.
constexpr bool CompletesSnapshot(std::string_view event) {
  return event == kBootstrap || event == kResnapshot;
}

}  // namespace mssql_cdc::facts_event
