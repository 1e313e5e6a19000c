#include "fleet/idle_trim.h"

#include <arrow/memory_pool.h>
#include <malloc.h>

namespace mssql_cdc {

void ReleaseFreeMemory() {
  arrow::default_memory_pool()->ReleaseUnused();
  malloc_trim(0);
}

void IdleTrim::Poll(std::uint64_t changes, Clock::time_point now) {
  if (changes != changes_) {
    changes_ = changes;
    changed_at_ = now;
    trimmed_ = false;
    return;
  }
  if (trimmed_ || now - changed_at_ < stillness_) return;
  ReleaseFreeMemory();
  trimmed_ = true;
  ++trims_;
}

}  // namespace mssql_cdc
