#include "engine/switch_snapshot.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "engine/batch_reader.h"
#include "engine/bootstrap.h"
#include "snapshot/parallel_snapshot.h"
#include "snapshot/range_plan.h"
#include "snapshot/snapshot_stamp.h"

namespace mssql_cdc {

std::string SwitchSnapshotTxnAppId(const std::string& app_id) { return app_id + "#switch"; }

std::int64_t SnapshotAfterSwitch(const SwitchSnapshotRequest& request, Source& source,
                                 SourcePool& sources, const SourceClock& clock,
                                 delta::DeltaTable& bronze) {
  const delta::Txn txn{SwitchSnapshotTxnAppId(request.app_id), request.batch_id, std::nullopt};
  DeltaBootstrapTables tables(bronze, nullptr, request.write);
  const Offset stamp = SnapshotStamp(source, clock, request.instance);
  if (tables.HoldsSnapshot(txn, stamp.lsn)) return 0;
  const std::string& ci = request.instance.name;
  RangePlanRequest ranges;
  ranges.instance = request.instance;
  ranges.columns = source.CapturedColumns(ci);
  ranges.ranges = request.partitions;
  ParallelSnapshotRequest read;
  read.capture_instance = ci;
  read.columns = request.columns;
  read.plan = PlanSnapshotRanges(ranges, source);
  read.snapshot_lsn = stamp.lsn;
  read.snapshot_commit_ts = stamp.commit_ts.value_or(UtcMicros{});
  read.batch_rows = request.arrow_batch_size;
  read.batch_bytes = request.arrow_batch_bytes;
  ParallelSnapshot reader = WholeSnapshotReader(std::move(read), source, sources, request.bronze_schema);
  nlohmann::json metadata = WholeSnapshotMetadata(ci, stamp);
  metadata["after_switch_batch"] = request.batch_id;
  const std::string user_metadata = metadata.dump();
  const std::string lsn = stamp.lsn.ToString();
  spdlog::info("capture instance '{}': snapshot after the switch of batch {} at LSN {} "
               "(snapshot_on_switch)",
               ci, request.batch_id, lsn);
  const bool written = tables.AppendSnapshot(reader, txn, user_metadata, request.write.on_file);
  return written ? reader.rows() : 0;
}

}  // namespace mssql_cdc
