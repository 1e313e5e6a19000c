// The memory settings of a long-running engine process (`mssql-cdc run`, and the benchmarks
// that measure it): Arrow's jemalloc pool, which does not purge freed pages as it goes, so
// that back-to-back batches reuse them instead of faulting them in again; the process gives
// them back when its streams are still (fleet/idle_trim.h). Decisions 0007 and 0009.
//
// Must run before Arrow first allocates. A user's own ARROW_DEFAULT_MEMORY_POOL and
// JE_ARROW_MALLOC_CONF win.
#pragma once

namespace mssql_cdc {

void UseRunAllocator();

}  // namespace mssql_cdc
