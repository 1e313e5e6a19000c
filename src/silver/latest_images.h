// The latest image of each key among bronze rows (docs/silver.md), the rule both
// modes apply: rows are ranked by (_start_lsn, _command_id, _seqval, _operation), a NULL
// ranking after any value, so that a snapshot row outranks a change of its own LSN (the
// snapshot was read after that commit) and an update's after-image (4) outranks its
// before-image (3). Keys compare null-safely: NULL equals NULL. The latest image of a key
// deletes it when its operation is 1 (delete) or 3 (the before-image of an update that moved
// the row to another key); 0, 2 and 4 upsert it.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mssql_cdc {

struct LatestImages {
  // One row per key, in the silver schema it was computed for.
  std::shared_ptr<arrow::Table> rows;
  // Per row of `rows`: whether its image deletes the key.
  std::vector<bool> deletes;
  // The highest _start_lsn among the bronze rows given, and among their changes (operation
  // not 0); empty when there were none.
  std::string max_lsn;
  std::string max_change_lsn;
};

// The ranking columns (_start_lsn, _command_id, _seqval, _operation) of rows in a bronze schema,
// or of images that kept them: which of two rows' images is the later, by the rule above.
class ImageRanks {
 public:
  explicit ImageRanks(const arrow::Table& rows);
  explicit ImageRanks(const arrow::RecordBatch& rows);

  // Whether row `a` of `x` outranks row `b` of `y`.
  static bool Outranks(const ImageRanks& x, std::int64_t a, const ImageRanks& y, std::int64_t b);
  // Whether the row's image deletes its key (operation 1 or 3).
  bool Deletes(std::int64_t row) const;
  std::string_view Lsn(std::int64_t row) const;
  std::int64_t Operation(std::int64_t row) const;

 private:
  void Bind(std::shared_ptr<arrow::Array> lsns, std::shared_ptr<arrow::Array> operations,
            std::shared_ptr<arrow::Array> command_ids, std::shared_ptr<arrow::Array> seqvals);

  std::shared_ptr<arrow::StringArray> lsns_;
  std::shared_ptr<arrow::Int64Array> operations_, command_ids_;
  std::shared_ptr<arrow::StringArray> seqvals_;
};

// `bronze_rows` in a bronze schema; `keys` in its spelling (ResolveSilverKeys); `silver` the
// schema the images are given in (columns bronze lacks are NULL).
LatestImages LatestImagesOf(const std::shared_ptr<arrow::Table>& bronze_rows,
                            const std::vector<std::string>& keys,
                            const std::shared_ptr<arrow::Schema>& silver);

// The highest _start_lsn among the changes (operation not 0) of bronze rows; empty for none.
std::string NewestChangeLsn(const arrow::Table& bronze_rows);

// Whether `keys` are one integer column of `schema`: such a key is matched by its values, other
// keys by EncodeKeys.
bool IsSingleIntegerKey(const arrow::Schema& schema, const std::vector<std::string>& keys);
// That column of `rows` as int64 values.
std::shared_ptr<arrow::Int64Array> IntegerKeyValues(const arrow::Table& rows, const std::string& key);

// Each row's key as a group number (0, 1, ...; equal keys, NULL equal to NULL, share one), and
// in `groups` how many there are: one integer key is grouped by its values, other keys by
// EncodeKeys.
std::vector<std::int64_t> KeyGroups(const arrow::Table& rows, const std::vector<std::string>& keys,
                                    std::int64_t* groups);

// Each row's key columns as one byte string, equal exactly when the keys are equal with NULL
// equal to NULL: what two tables are matched on.
std::vector<std::string> EncodeKeys(const arrow::Table& table, const std::vector<std::string>& keys);
std::vector<std::string> EncodeKeys(const arrow::RecordBatch& rows, const std::vector<std::string>& keys);

}  // namespace mssql_cdc
