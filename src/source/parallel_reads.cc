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
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < n; ++i) {
    auto lease = sources.TryAcquire();
    if (!lease) break;
    threads.emplace_back([&, lease = std::move(*lease)]() mutable { run(*lease); });
  }
  run(first_source);
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace mssql_cdc
