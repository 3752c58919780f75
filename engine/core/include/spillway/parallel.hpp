#pragma once
// Jobs 0 … n−1 spread over threads, each job taken once. A job that throws stops the others
// from taking new jobs, and its exception is rethrown in the caller once every thread has
// joined: a bad input found in a worker is an error message and exit 2, never std::terminate.
// Results go where each job writes them, so they do not depend on the thread count.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace spillway {

// `threads` (0 = every core), never more than there are jobs, at least 1.
inline unsigned threadsFor(unsigned threads, std::size_t jobs) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, jobs)));
}

// Runs job(i) for i in [0, jobs) on threadsFor(threads, jobs) threads, the caller's among them.
// Of several jobs that throw, the lowest index's exception is rethrown (the same message
// whatever the scheduling).
template <class Job>
void forEachJob(std::size_t jobs, unsigned threads, Job&& job) {
  std::atomic<std::size_t> next{0};
  std::mutex failed;
  std::exception_ptr first;
  std::size_t firstIndex = jobs;
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < jobs;) {
      try {
        job(i);
      } catch (...) {
        const std::lock_guard lock(failed);
        if (i < firstIndex) {
          firstIndex = i;
          first = std::current_exception();
        }
        next.store(jobs);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threadsFor(threads, jobs); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace spillway
