#include "delta/compute_kernels.h"

#include <arrow/compute/initialize.h>

#include "core/errors.h"

namespace mssql_cdc::delta {

void EnsureComputeKernels() {
  static const arrow::Status status = arrow::compute::Initialize();
  if (!status.ok()) throw InternalError("cannot register Arrow compute functions: " + status.ToString());
}

}  // namespace mssql_cdc::delta
