#include "source/parallel_reads.h"

#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace mssql_cdc {

void RunOnSources(std::size_t n, Source& first_source, SourcePool& sources,
                  const std::function<void(std::size_t, Source&)>& work) {
  std::vector<std::exception_ptr> errors(n);
  // Workers take the next item as each finishes, so that n items over fewer Sources keep
  // every Source busy; the first error stops the taking.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto run = [&](Source& source) {
    for (std::size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
      try {
        work(i, source);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  // Every Source lent at once is taken before any thread starts, so that a quick first item
  // does not hand its Source back to be lent again in place of another.
  std::vector<SourcePool::Lease> leases;
  while (leases.size() + 1 < n) {
    auto lease = sources.TryAcquire();
    if (!lease) break;
    leases.push_back(std::move(*lease));
  }
  std::vector<std::thread> threads;
  for (auto& lease : leases) threads.emplace_back([&run, &lease] { run(*lease); });
  run(first_source);
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace mssql_cdc
