// Prometheus metrics for one server process: a shared registry plus the HTTP exposer that serves
// it at http://<host>:<port>/metrics on a port of its own (never the gRPC port). ServerRunner
// owns one and records the RPC metrics in it; services take it from the runner and add their own
// series, e.g.
//   IBGR_ASSIGN_OR_RETURN(prometheus::Gauge * triples,
//                         runner->metrics().GetGauge("ibgr_kgstore_triples", "Triples loaded."));
//   triples->Set(snapshot.num_triples());
// Metric and label names must follow Prometheus rules ([a-zA-Z_:][a-zA-Z0-9_:]*); the helpers
// turn prometheus-cpp's exceptions into INVALID_ARGUMENT.
#ifndef IBGRAPHRAG_COMMON_METRICS_H_
#define IBGRAPHRAG_COMMON_METRICS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/labels.h"
#include "prometheus/registry.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace ibgraphrag::common {

class MetricsRegistry {
 public:
  struct Options {
    // Address the HTTP endpoint binds to: "0.0.0.0", "127.0.0.1", "::" or "[::]".
    std::string listen_host = "0.0.0.0";
    // HTTP port of /metrics: -1 = no endpoint (metrics are still recorded and Serialize()
    // works), 0 = the OS picks a free port (see port()).
    int port = -1;
    // Threads of the HTTP server; scrapes are rare, two is plenty.
    int num_threads = 2;
  };

  // Creates the registry and, when options.port >= 0, starts serving /metrics.
  // INVALID_ARGUMENT for a bad port, UNAVAILABLE when the port cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsRegistry>> Create(const Options& options);

  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // The bound HTTP port (fixed at Create, kept after StopEndpoint), or -1 when disabled.
  int port() const { return port_; }

  // The underlying registry, for code that wants prometheus-cpp's builders directly.
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // Get-or-create a series. Repeated calls with the same name and labels return the same object;
  // the same name with a different metric type, or invalid names, give INVALID_ARGUMENT. The
  // returned pointers stay valid for the registry's lifetime. Creating a series takes a lock:
  // keep the pointer instead of looking it up on hot paths.
  absl::StatusOr<prometheus::Counter*> GetCounter(absl::string_view name, absl::string_view help,
                                                  const prometheus::Labels& labels = {});
  absl::StatusOr<prometheus::Gauge*> GetGauge(absl::string_view name, absl::string_view help,
                                              const prometheus::Labels& labels = {});
  // `buckets` are upper bounds in increasing order; the first call for a label set fixes them.
  absl::StatusOr<prometheus::Histogram*> GetHistogram(absl::string_view name,
                                                      absl::string_view help,
                                                      const prometheus::Labels& labels,
                                                      const std::vector<double>& buckets);

  // Families, for callers that add label sets themselves (the RPC interceptor does).
  absl::StatusOr<prometheus::Family<prometheus::Counter>*> GetCounterFamily(absl::string_view name,
                                                                            absl::string_view help);
  absl::StatusOr<prometheus::Family<prometheus::Gauge>*> GetGaugeFamily(absl::string_view name,
                                                                        absl::string_view help);
  absl::StatusOr<prometheus::Family<prometheus::Histogram>*> GetHistogramFamily(
      absl::string_view name, absl::string_view help);

  // The text exposition format (what GET /metrics returns).
  std::string Serialize() const;

  // Stops the HTTP endpoint; recording keeps working. Idempotent.
  void StopEndpoint();

  // Latency buckets in seconds from 0.1 ms to 10 s, roughly 1-2.5-5 per decade.
  static std::vector<double> LatencyBucketsSeconds();

 private:
  MetricsRegistry() = default;

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = -1;
  std::string listen_host_;
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_METRICS_H_
