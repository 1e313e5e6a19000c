#include "source/output_schema.h"

#include <arrow/type.h>

#include <algorithm>
#include <cctype>

#include "core/errors.h"

namespace mssql_cdc {

const std::vector<std::string_view>& ReservedColumnNames() {
  static const std::vector<std::string_view> reserved = {
      kCaptureInstanceColumn, kStartLsnColumn, kSeqvalColumn,   kOperationColumn, kCommandIdColumn,
      kCommitTsColumn,        kBatchIdColumn,  kSnapshotColumn, kChunkColumn};
  return reserved;
}

bool IsReservedColumnName(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto& reserved = ReservedColumnNames();
  return std::find(reserved.begin(), reserved.end(), lower) != reserved.end();
}

std::vector<std::shared_ptr<arrow::Field>> MetadataFields(bool include_command_id) {
  std::vector<std::shared_ptr<arrow::Field>> fields = {
      arrow::field(std::string(kCaptureInstanceColumn), arrow::utf8()),
      arrow::field(std::string(kStartLsnColumn), arrow::utf8()),
      arrow::field(std::string(kSeqvalColumn), arrow::utf8()),
      arrow::field(std::string(kOperationColumn), arrow::int32()),
  };
  if (include_command_id) {
    fields.push_back(arrow::field(std::string(kCommandIdColumn), arrow::int32()));
  }
  fields.push_back(
      arrow::field(std::string(kCommitTsColumn), arrow::timestamp(arrow::TimeUnit::MICRO)));
  return fields;
}

std::shared_ptr<arrow::Schema> OutputSchema(const std::vector<CapturedColumn>& columns,
                                            bool include_command_id) {
  arrow::FieldVector captured;
  for (const auto& c : columns) {
    if (IsReservedColumnName(c.name)) {
      throw ConfigError("source column '" + c.name +
                        "' has a name the engine reserves for its own columns: leave it out "
                        "with the 'columns' option");
    }
    captured.push_back(arrow::field(c.name, ArrowTypeFor(c.type, c.name)));
  }
  return OutputSchema(captured, include_command_id);
}

std::shared_ptr<arrow::Schema> OutputSchema(const arrow::FieldVector& captured,
                                            bool include_command_id) {
  auto fields = MetadataFields(include_command_id);
  for (const auto& field : captured) {
    if (IsReservedColumnName(field->name())) {
      throw ConfigError("column '" + field->name() +
                        "' has a name the engine reserves for its own columns: leave it out "
                        "of the 'columns' option");
    }
    fields.push_back(arrow::field(field->name(), field->type()));
  }
  return arrow::schema(std::move(fields));
}

}  // namespace mssql_cdc
