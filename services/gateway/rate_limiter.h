// Per-caller token buckets: each key may make `qps` requests per second on average with bursts of
// up to `burst`. Over the limit the gateway answers RESOURCE_EXHAUSTED.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_RATE_LIMITER_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_RATE_LIMITER_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ibgraphrag::gateway {

class RateLimiter {
 public:
  // qps <= 0 disables limiting; burst < 1 is treated as 1.
  RateLimiter(double qps, double burst) : qps_(qps), burst_(burst < 1 ? 1 : burst) {}

  // Takes one token from `caller`'s bucket at time `now`; false when the bucket is empty.
  bool Allow(absl::string_view caller, absl::Time now);

  bool enabled() const { return qps_ > 0; }

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time updated;
  };
  const double qps_;
  const double burst_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_RATE_LIMITER_H_
