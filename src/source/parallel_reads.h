// Work over several Sources at once: the calling thread with `first_source`, and a thread for
// each Source the pool lends at once (at most n - 1), each taking the next item as it finishes
// one, so that n items over fewer Sources keep them all busy and a caller never waits for a
// Source another caller holds.
// Used by the reads that cut one question into ranges: a micro-batch's change rows, a
// snapshot's key ranges.
#pragma once

#include <cstddef>
#include <functional>

#include "source/source.h"
#include "source/source_pool.h"

namespace mssql_cdc {

// Runs work(i, source) for every i in [0, n). Every thread has ended when it returns; the
// first failure (by item order) is rethrown then, and no item starts after a failure.
void RunOnSources(std::size_t n, Source& first_source, SourcePool& sources,
                  const std::function<void(std::size_t, Source&)>& work);

}  // namespace mssql_cdc
