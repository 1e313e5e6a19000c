#include "core/run_allocator.h"

#include <cstdlib>

namespace mssql_cdc {

void UseRunAllocator() {
  setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc", /*overwrite=*/0);
  setenv("JE_ARROW_MALLOC_CONF", "dirty_decay_ms:-1,muzzy_decay_ms:-1", /*overwrite=*/0);
}

}  // namespace mssql_cdc
