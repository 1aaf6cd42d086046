#include "services/gateway/rate_limiter.h"

#include <algorithm>

namespace ibgraphrag::gateway {

bool RateLimiter::Allow(absl::string_view caller, absl::Time now) {
  if (qps_ <= 0) return true;
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = buckets_.try_emplace(caller);
  Bucket& bucket = it->second;
  if (inserted) {
    bucket.tokens = burst_;
  } else {
    const double elapsed = std::max(0.0, absl::ToDoubleSeconds(now - bucket.updated));
    bucket.tokens = std::min(burst_, bucket.tokens + elapsed * qps_);
  }
  bucket.updated = now;
  if (bucket.tokens < 1.0) return false;
  bucket.tokens -= 1.0;
  return true;
}

}  // namespace ibgraphrag::gateway
