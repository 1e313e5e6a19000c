// Latest images applied to a silver Delta table by the native engine (decision 0016): copy on
// write, one commit per apply. Only the files whose statistics say they may hold a key the
// images touch are read and rewritten, so a batch of changes costs the files it touches, not
// the table. Rows are written ordered by key, which keeps each file's key range narrow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "delta/table.h"
#include "silver/latest_images.h"

namespace mssql_cdc {

struct SilverMergeResult {
  std::int64_t upserted = 0;       // keys whose image was written
  std::int64_t deleted = 0;        // keys removed
  std::int64_t unchanged = 0;      // images no newer than silver's row (reruns, old images)
  std::int64_t files_read = 0;     // files rewritten
  delta::CommitResult commit;
};

// Incremental (rebuild false): a key takes its image only when the image is newer than
// silver's row (_start_lsn), so a rerun of the same images changes nothing and an old image
// never brings a deleted row back. Rebuild: silver becomes exactly the images' upserts; every
// other row goes.
SilverMergeResult MergeIntoSilver(delta::DeltaTable& silver, const LatestImages& images,
                                  const std::vector<std::string>& keys, bool rebuild);

}  // namespace mssql_cdc
