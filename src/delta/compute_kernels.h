// Arrow's compute functions beyond the core few (min_max, comparisons, filter, cast of
// nested types) live in libarrow_compute since Arrow 21 and are only callable after they have
// been registered once per process. Code of any component that calls arrow::compute calls
// EnsureComputeKernels() first; it is cheap after the first call and safe from any thread.
#pragma once

namespace mssql_cdc::delta {

// Throws InternalError when the kernels cannot be registered.
void EnsureComputeKernels();

}  // namespace mssql_cdc::delta
