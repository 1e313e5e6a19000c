#include "source/parallel_reads.h"

#include <exception>
#include <thread>
#include <vector>

namespace mssql_cdc {

void RunOnSources(std::size_t n, Source& first_source, SourcePool& sources,
                  const std::function<void(std::size_t, Source&)>& work) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  std::vector<std::size_t> here;  // items this thread runs, in order
  if (n > 0) here.push_back(0);
  for (std::size_t i = 1; i < n; ++i) {
    auto lease = sources.TryAcquire();
    if (!lease) {
      here.push_back(i);
      continue;
    }
    threads.emplace_back([&, i, lease = std::move(*lease)]() mutable {
      try {
        work(i, *lease);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (std::size_t i : here) {
    try {
      work(i, first_source);
    } catch (...) {
      errors[i] = std::current_exception();
      break;
    }
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace mssql_cdc
