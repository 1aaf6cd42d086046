#include "common/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "prometheus/exposer.h"
#include "prometheus/text_serializer.h"

namespace ibgraphrag::common {
namespace {

// civetweb wants IPv6 addresses in brackets: "[::]:9090".
std::string BindAddress(absl::string_view host, int port) {
  if (absl::StrContains(host, ':') && !absl::StartsWith(host, "[")) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

// prometheus-cpp reports bad names and type clashes by throwing; nothing may throw out of
// common/, so every call into its builders goes through here.
template <typename T, typename Fn>
absl::StatusOr<T> Guarded(absl::string_view what, absl::string_view name, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(what, " \"", name, "\": ", e.what()));
  }
}

// Opens and closes one TCP connection to the endpoint; errors are irrelevant.
void KnockOnce(const std::string& host, int port) {
  // A wildcard bind is reachable on loopback.
  std::string target = host;
  if (target.empty() || target == "0.0.0.0") target = "127.0.0.1";
  if (target == "::" || target == "[::]") target = "::1";
  if (absl::StartsWith(target, "[") && absl::EndsWith(target, "]")) {
    target = target.substr(1, target.size() - 2);
  }
  sockaddr_storage address{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (::inet_pton(AF_INET, target.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, target.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    length = sizeof(sockaddr_in6);
  } else {
    return;  // A host name: not worth resolving for a shutdown nudge.
  }
  const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&address), length);
  ::close(fd);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsRegistry>> MetricsRegistry::Create(const Options& options) {
  if (options.port < -1 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics port: ", options.port, " is outside [-1, 65535]"));
  }
  if (options.num_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics num_threads: ", options.num_threads, " must be >= 1"));
  }
  std::unique_ptr<MetricsRegistry> metrics(new MetricsRegistry());
  metrics->registry_ = std::make_shared<prometheus::Registry>();
  if (options.port < 0) return metrics;

  const std::string address = BindAddress(options.listen_host, options.port);
  try {
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(
        address, static_cast<std::size_t>(options.num_threads));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("metrics endpoint: cannot listen on ", address, ": ", e.what()));
  }
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  const std::vector<int> ports = metrics->exposer_->GetListeningPorts();
  if (ports.empty() || ports.front() <= 0) {
    return absl::UnavailableError(absl::StrCat("metrics endpoint: no port bound for ", address));
  }
  metrics->port_ = ports.front();
  metrics->listen_host_ = options.listen_host;
  return metrics;
}

MetricsRegistry::~MetricsRegistry() { StopEndpoint(); }

void MetricsRegistry::StopEndpoint() {
  if (exposer_ == nullptr) return;
  // civetweb's accept loop polls its listening socket in 2 s slices and only then notices the
  // stop request, so every shutdown would take ~2 s. A connection wakes the poll at once: keep
  // knocking until the exposer is gone.
  std::atomic<bool> stopped{false};
  std::thread knocker([&] {
    while (!stopped.load()) {
      KnockOnce(listen_host_, port_);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  exposer_.reset();
  stopped.store(true);
  knocker.join();
}

absl::StatusOr<prometheus::Family<prometheus::Counter>*> MetricsRegistry::GetCounterFamily(
    absl::string_view name, absl::string_view help) {
  return Guarded<prometheus::Family<prometheus::Counter>*>("counter", name, [&] {
    return &prometheus::BuildCounter()
                .Name(std::string(name))
                .Help(std::string(help))
                .Register(*registry_);
  });
}

absl::StatusOr<prometheus::Family<prometheus::Gauge>*> MetricsRegistry::GetGaugeFamily(
    absl::string_view name, absl::string_view help) {
  return Guarded<prometheus::Family<prometheus::Gauge>*>("gauge", name, [&] {
    return &prometheus::BuildGauge()
                .Name(std::string(name))
                .Help(std::string(help))
                .Register(*registry_);
  });
}

absl::StatusOr<prometheus::Family<prometheus::Histogram>*> MetricsRegistry::GetHistogramFamily(
    absl::string_view name, absl::string_view help) {
  return Guarded<prometheus::Family<prometheus::Histogram>*>("histogram", name, [&] {
    return &prometheus::BuildHistogram()
                .Name(std::string(name))
                .Help(std::string(help))
                .Register(*registry_);
  });
}

absl::StatusOr<prometheus::Counter*> MetricsRegistry::GetCounter(absl::string_view name,
                                                                 absl::string_view help,
                                                                 const prometheus::Labels& labels) {
  auto family = GetCounterFamily(name, help);
  if (!family.ok()) return family.status();
  return Guarded<prometheus::Counter*>("counter", name, [&] { return &(*family)->Add(labels); });
}

absl::StatusOr<prometheus::Gauge*> MetricsRegistry::GetGauge(absl::string_view name,
                                                             absl::string_view help,
                                                             const prometheus::Labels& labels) {
  auto family = GetGaugeFamily(name, help);
  if (!family.ok()) return family.status();
  return Guarded<prometheus::Gauge*>("gauge", name, [&] { return &(*family)->Add(labels); });
}

absl::StatusOr<prometheus::Histogram*> MetricsRegistry::GetHistogram(
    absl::string_view name, absl::string_view help, const prometheus::Labels& labels,
    const std::vector<double>& buckets) {
  for (size_t i = 1; i < buckets.size(); ++i) {
    if (!(buckets[i - 1] < buckets[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram \"", name, "\": buckets must be strictly increasing"));
    }
  }
  auto family = GetHistogramFamily(name, help);
  if (!family.ok()) return family.status();
  return Guarded<prometheus::Histogram*>("histogram", name,
                                         [&] { return &(*family)->Add(labels, buckets); });
}

std::string MetricsRegistry::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

std::vector<double> MetricsRegistry::LatencyBucketsSeconds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0,  10.0};
}

}  // namespace ibgraphrag::common
