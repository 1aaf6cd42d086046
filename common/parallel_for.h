// The suite's one data-parallel fan-out (the role of Triton's common/thread_pool.h for batch work
// here): run a loop body over [0, n) on a few threads and wait for all of them. For server
// threads and long-lived workers use std::thread directly; this is for "do these N independent
// things at once".
#ifndef IBGRAPHRAG_COMMON_PARALLEL_FOR_H_
#define IBGRAPHRAG_COMMON_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

namespace ibgraphrag::common {

// Calls fn(i) once for every i in [0, n) on up to `num_threads` threads, the calling thread being
// one of them, and returns when every call has returned. Indexes are handed out one at a time in
// increasing order, so tasks of uneven length balance. num_threads <= 1 runs the loop inline.
// `fn` must be safe to call concurrently for different i.
void ParallelFor(size_t n, int num_threads, const std::function<void(size_t i)>& fn);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_PARALLEL_FOR_H_
