// Work over several Sources at once: item i of n runs on a thread of its own with a Source
// borrowed from a pool when one is free at once, else after the first item on the calling
// thread with `first_source`, so that a caller never waits for a Source another caller holds.
// Used by the reads that cut one question into ranges: a micro-batch's change rows, a
// snapshot's key ranges.
#pragma once

#include <cstddef>
#include <functional>

#include "source/source.h"
#include "source/source_pool.h"

namespace mssql_cdc {

// Runs work(i, source) for every i in [0, n). Every thread has ended when it returns; the
// first failure (by item order) is rethrown then, and the calling thread stops at its own
// first failure.
void RunOnSources(std::size_t n, Source& first_source, SourcePool& sources,
                  const std::function<void(std::size_t, Source&)>& work);

}  // namespace mssql_cdc
