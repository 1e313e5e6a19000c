#include "delta/table_state.h"

#include <arrow/type.h>

#include "delta/schema.h"

namespace mssql_cdc::delta {

std::shared_ptr<arrow::Schema> TableState::schema() const {
  return FromDeltaSchemaString(metadata.schema_string, "metaData.schemaString");
}

}  // namespace mssql_cdc::delta
