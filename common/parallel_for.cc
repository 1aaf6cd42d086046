#include "common/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ibgraphrag::common {

void ParallelFor(size_t n, int num_threads, const std::function<void(size_t i)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t extra = std::min<size_t>(static_cast<size_t>(std::max(num_threads, 1)), n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& thread : pool) thread.join();
}

}  // namespace ibgraphrag::common
