// Bronze rows written by hand for the silver tests: a bronze table of capture instance
// dbo_items with captured columns id INT and name STRING.
#pragma once

#include <arrow/api.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/table_schemas.h"
#include "silver/silver_schema.h"
#include "source/output_schema.h"

namespace mssql_cdc::silver_testing {

inline constexpr char kInstance[] = "dbo_items";

// One change row: commit `lsn`, `seqval`, `command_id`, `operation`; snapshot rows (operation
// 0) carry _snapshot = their LSN, and `chunk` when of a chunked snapshot.
struct BronzeRow {
  int lsn = 1;
  int seqval = 1;
  int command_id = 1;
  int operation = 2;
  std::optional<int> id;
  std::optional<std::string> name;
  bool snapshot = false;
  std::optional<int> chunk;
  std::string instance = kInstance;
  std::optional<int> snapshot_lsn;  // a chunk row's S, below its stamp `lsn`; default `lsn`
};

inline std::string LsnText(int n) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%020X", n);
  return text;
}

inline std::shared_ptr<arrow::Schema> kBronzeSchema() {
  return BronzeSchema(OutputSchema({arrow::field("id", arrow::int32()), arrow::field("name", arrow::utf8())},
                                   /*include_command_id=*/true));
}

inline std::shared_ptr<arrow::Schema> Silver() { return SilverSchema(*kBronzeSchema()); }

inline std::shared_ptr<arrow::Table> BronzeRows(const std::vector<BronzeRow>& rows) {
  auto schema = kBronzeSchema();
  std::unique_ptr<arrow::RecordBatchBuilder> builder =
      arrow::RecordBatchBuilder::Make(schema, arrow::default_memory_pool()).ValueOrDie();
  for (const auto& row : rows) {
    for (int f = 0; f < schema->num_fields(); ++f) {
      const std::string& name = schema->field(f)->name();
      auto* field = builder->GetField(f);
      arrow::Status status;
      auto str = [&](const std::optional<std::string>& v) {
        auto* b = static_cast<arrow::StringBuilder*>(field);
        return v ? b->Append(*v) : b->AppendNull();
      };
      auto i32 = [&](const std::optional<int>& v) {
        auto* b = static_cast<arrow::Int32Builder*>(field);
        return v ? b->Append(*v) : b->AppendNull();
      };
      if (name == "_capture_instance") status = str(row.instance);
      else if (name == "_start_lsn") status = str(LsnText(row.lsn));
      else if (name == "_seqval") status = str(row.snapshot ? std::nullopt : std::optional(LsnText(row.seqval)));
      else if (name == "_operation") status = i32(row.operation);
      else if (name == "_command_id") status = i32(row.snapshot ? std::nullopt : std::optional(row.command_id));
      else if (name == "_commit_ts")
        status = static_cast<arrow::TimestampBuilder*>(field)->Append(1'700'000'000'000'000LL + row.lsn);
      else if (name == "id") status = i32(row.id);
      else if (name == "name") status = str(row.name);
      else if (name == "_batch_id") status = i32(0);
      else if (name == "_snapshot") status = str(row.snapshot ? std::optional(LsnText(row.snapshot_lsn.value_or(row.lsn))) : std::nullopt);
      else if (name == "_chunk") status = i32(row.chunk);
      else status = field->AppendNull();
      if (!status.ok()) throw std::runtime_error(status.ToString());
    }
  }
  auto batch = builder->Flush().ValueOrDie();
  return arrow::Table::FromRecordBatches({batch}).ValueOrDie();
}

}  // namespace mssql_cdc::silver_testing
