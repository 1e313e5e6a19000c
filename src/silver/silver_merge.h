// Latest images applied to a silver Delta table by the native engine (decision 0016): copy on
// write, one commit per apply; or silver rebuilt from a snapshot's images. Only the files whose statistics say they may hold a key the
// images touch are read and rewritten, so a batch of changes costs the files it touches, not
// the table. Rows are written ordered by key, which keeps each file's key range narrow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "delta/table.h"
#include "silver/latest_images.h"
#include "silver/spilled_rebuild.h"

namespace mssql_cdc {

struct SilverMergeResult {
  std::int64_t upserted = 0;       // keys whose image was written
  std::int64_t deleted = 0;        // keys removed
  std::int64_t unchanged = 0;      // images no newer than silver's row (reruns, old images)
  std::int64_t files_read = 0;     // files rewritten
  delta::CommitResult commit;
};

// A key takes its image only when the image is newer than silver's row (_start_lsn), so a
// rerun of the same images changes nothing and an old image never brings a deleted row back.
SilverMergeResult MergeIntoSilver(delta::DeltaTable& silver, const LatestImages& images,
                                  const std::vector<std::string>& keys);

// Silver becomes exactly the rebuild's upserts, in one commit that removes every file it had;
// `schema` is the rebuild's silver schema. The data files' row groups hold up to a quarter of
// `memory_budget`.
SilverMergeResult RebuildSilver(delta::DeltaTable& silver, SpilledRebuild& rebuild,
                                const std::shared_ptr<arrow::Schema>& schema, std::int64_t memory_budget);

}  // namespace mssql_cdc
