// Bootstrap (reference-features 4.3, full mode): the source table's current rows as
// operation-0 rows in one bronze commit, stamped with the max LSN L recorded before the read
// (invariant 5), a `bootstrap` facts row, and L as where the stream starts.
//
// Crash safety: L is written to <checkpoint>/snapshot.json ("open") before the read, so a run
// that dies mid-bootstrap retakes the snapshot at the same L. The bronze append carries
// txn(<app_id>#snapshot, 0) and the facts row txn(<app_id>#events, 0): a retake after the
// append landed reads nothing and writes nothing twice, and takes the row count from bronze's
// rows with _snapshot = L.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <arrow/type_fwd.h>

#include "core/offset.h"
#include "source/source.h"

namespace mssql_cdc {

class SourceClock;
class StreamCheckpoint;
namespace delta {
class DeltaTable;
}

struct BootstrapRequest {
  CaptureInstanceInfo instance;
  std::shared_ptr<arrow::Schema> bronze_schema;
  std::string app_id;
  std::string target;  // as the facts row names it
  std::int64_t arrow_batch_size = 10'000;
};

struct BootstrapResult {
  Offset offset;          // L and its UTC commit time
  std::int64_t rows = 0;  // the snapshot's rows
  bool taken_now = false; // false: the checkpoint held a finished snapshot
};

// The txn app ids of the bootstrap's bronze commit and of the stream's event facts rows.
std::string SnapshotTxnAppId(const std::string& app_id);
std::string EventsTxnAppId(const std::string& app_id);

BootstrapResult RunBootstrap(const BootstrapRequest& request, Source& source,
                             const SourceClock& clock, StreamCheckpoint& checkpoint,
                             delta::DeltaTable& bronze, delta::DeltaTable* facts);

}  // namespace mssql_cdc
