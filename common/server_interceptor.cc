#include "common/server_interceptor.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "google/protobuf/descriptor.h"
#include "grpc/health/v1/health.pb.h"

namespace ibgraphrag::common {
namespace {

using grpc::experimental::InterceptionHookPoints;

constexpr size_t kMaxRequestIdLength = 128;
// Caps what a caller-chosen path can put into one log line.
constexpr size_t kMaxLoggedMethodLength = 256;
constexpr int kNumStatusCodes = 17;  // OK .. UNAUTHENTICATED.

// Probes and tooling; their access-log lines are debug-level.
bool IsInfrastructureService(absl::string_view service) {
  return service == "grpc.health.v1.Health" ||
         service == "grpc.reflection.v1alpha.ServerReflection" ||
         service == "grpc.reflection.v1.ServerReflection";
}

LogLevel AccessLogLevel(absl::string_view service, grpc::StatusCode code) {
  if (IsInfrastructureService(service)) return LogLevel::kDebug;
  switch (code) {
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::DATA_LOSS:
      return LogLevel::kError;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return LogLevel::kWarning;
    default:
      return LogLevel::kInfo;
  }
}

// Metric series of one method, created on its first RPC and then read without locks.
struct MethodSeries {
  std::string service;
  std::string method;
  prometheus::Histogram* latency = nullptr;
  prometheus::Gauge* inflight = nullptr;
  // Counters by status code, created on first use; Family::Add is idempotent, so two threads
  // racing to fill a slot store the same pointer.
  std::array<std::atomic<prometheus::Counter*>, kNumStatusCodes> requests{};
};

}  // namespace

// Shared by the factory and every interceptor it creates (held by shared_ptr so in-flight
// interceptors stay valid whatever the destruction order inside grpc::Server).
class RpcObserverState {
 public:
  RpcObserverState(std::string server_name, prometheus::Family<prometheus::Counter>* requests,
                   prometheus::Family<prometheus::Histogram>* durations,
                   prometheus::Family<prometheus::Gauge>* inflight)
      : server_name_(std::move(server_name)),
        requests_(requests),
        durations_(durations),
        inflight_(inflight) {
    unknown_ = MakeSeries("unknown", "unknown");
  }

  const std::string& server_name() const { return server_name_; }

  // The series for a full method path "/pkg.Service/Method".
  MethodSeries* SeriesFor(absl::string_view path) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = by_path_.find(path);
      if (it != by_path_.end()) return it->second.get();
    }
    const size_t slash = path.rfind('/');
    if (path.size() < 4 || path[0] != '/' || slash == 0 || slash == absl::string_view::npos ||
        slash + 1 == path.size()) {
      return unknown_.get();
    }
    const absl::string_view service = path.substr(1, slash - 1);
    const absl::string_view method = path.substr(slash + 1);
    // Only methods that a linked-in proto defines get their own series; anything else a caller
    // made up shares the "unknown" series, which keeps the label set bounded.
    if (google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(
            absl::StrCat(service, ".", method)) == nullptr) {
      return unknown_.get();
    }
    absl::WriterMutexLock lock(&mu_);
    auto& slot = by_path_[path];
    if (slot == nullptr) slot = MakeSeries(service, method);
    return slot.get();
  }

  void CountRequest(MethodSeries* series, grpc::StatusCode code) {
    int index = static_cast<int>(code);
    if (index < 0 || index >= kNumStatusCodes) index = static_cast<int>(grpc::StatusCode::UNKNOWN);
    prometheus::Counter* counter = series->requests[index].load(std::memory_order_acquire);
    if (counter == nullptr) {
      try {
        counter = &requests_->Add(
            {{"service", series->service},
             {"method", series->method},
             {"code", std::string(GrpcStatusCodeName(static_cast<grpc::StatusCode>(index)))}});
      } catch (const std::exception&) {
        return;  // Label values are validated by construction; never let metrics fail an RPC.
      }
      series->requests[index].store(counter, std::memory_order_release);
    }
    counter->Increment();
  }

 private:
  std::unique_ptr<MethodSeries> MakeSeries(absl::string_view service, absl::string_view method) {
    auto series = std::make_unique<MethodSeries>();
    series->service = std::string(service);
    series->method = std::string(method);
    try {
      series->latency = &durations_->Add({{"service", series->service}, {"method", series->method}},
                                         MetricsRegistry::LatencyBucketsSeconds());
      series->inflight = &inflight_->Add({{"service", series->service}});
    } catch (const std::exception&) {
      series->latency = nullptr;
      series->inflight = nullptr;
    }
    return series;
  }

  const std::string server_name_;
  prometheus::Family<prometheus::Counter>* const requests_;
  prometheus::Family<prometheus::Histogram>* const durations_;
  prometheus::Family<prometheus::Gauge>* const inflight_;
  std::unique_ptr<MethodSeries> unknown_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<MethodSeries>> by_path_ ABSL_GUARDED_BY(mu_);
};

namespace {

class RpcObservabilityInterceptor : public grpc::experimental::Interceptor {
 public:
  RpcObservabilityInterceptor(grpc::experimental::ServerRpcInfo* info,
                              std::shared_ptr<RpcObserverState> state)
      : state_(std::move(state)),
        path_(info->method() != nullptr ? info->method() : ""),
        series_(state_->SeriesFor(path_)),
        start_(std::chrono::steady_clock::now()) {
    if (series_->inflight != nullptr) series_->inflight->Increment();
    context_ = info->server_context();
  }

  ~RpcObservabilityInterceptor() override {
    // No status was sent (the call was torn down first): count it as cancelled. The server
    // context is being destroyed here, so nothing may touch it.
    if (!finished_) Finish(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      AdoptRequestId(methods->GetRecvInitialMetadata());
      if (context_ != nullptr) peer_ = context_->peer();
    }
    // A status-only response (initial metadata, no message, status in one batch: the usual
    // unary failure) must keep its initial metadata empty: only then does gRPC send it as
    // Trailers-Only, and clients retry only Trailers-Only responses. Such responses carry the
    // request id in trailing metadata instead.
    const bool status_only =
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA) &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        !methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE);
    if (!status_only &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      auto* metadata = methods->GetSendInitialMetadata();
      if (metadata != nullptr) {
        metadata->emplace(kRequestIdMetadataKey, RequestId());
        request_id_sent_ = true;
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      if (!request_id_sent_) {
        auto* trailing = methods->GetSendTrailingMetadata();
        if (trailing != nullptr) trailing->emplace(kRequestIdMetadataKey, RequestId());
      }
      grpc::StatusCode code = methods->GetSendStatus().error_code();
      // The caller gave up (deadline, cancel, broken connection) before seeing this status; count
      // what the caller saw. IsCancelled is safe here for sync and callback services.
      if (code == grpc::StatusCode::OK && context_ != nullptr && context_->IsCancelled()) {
        code = grpc::StatusCode::CANCELLED;
      }
      if (!finished_) Finish(code);
    }
    methods->Proceed();
  }

 private:
  const std::string& RequestId() {
    if (request_id_.empty()) request_id_ = GenerateRequestId();
    return request_id_;
  }

  // Picks the id and writes it back into the client metadata map, which is the map that
  // ServerContext::client_metadata() returns, so handlers read it through RequestIdOf. The map
  // holds string_refs: they point at request_id_, which lives in this interceptor, and the
  // interceptor is destroyed only with the server context.
  void AdoptRequestId(std::multimap<grpc::string_ref, grpc::string_ref>* metadata) {
    if (metadata == nullptr) {
      RequestId();
      return;
    }
    auto [begin, end] = metadata->equal_range(kRequestIdMetadataKey);
    if (begin != end) {
      const absl::string_view supplied(begin->second.data(), begin->second.size());
      if (IsValidRequestId(supplied)) request_id_ = std::string(supplied);
    }
    metadata->erase(begin, end);
    metadata->emplace(grpc::string_ref(kRequestIdMetadataKey), grpc::string_ref(RequestId()));
  }

  void Finish(grpc::StatusCode code) {
    finished_ = true;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (series_->inflight != nullptr) series_->inflight->Decrement();
    if (series_->latency != nullptr) series_->latency->Observe(seconds);
    state_->CountRequest(series_, code);

    const LogLevel level = AccessLogLevel(series_->service, code);
    if (!LogLevelEnabled(level)) return;
    const size_t slash = path_.rfind('/');
    const bool split = !path_.empty() && path_[0] == '/' && slash != std::string::npos && slash > 0;
    std::string service = split ? path_.substr(1, slash - 1) : std::string("unknown");
    std::string method = split ? path_.substr(slash + 1) : path_;
    if (service.size() > kMaxLoggedMethodLength) service.resize(kMaxLoggedMethodLength);
    if (method.size() > kMaxLoggedMethodLength) method.resize(kMaxLoggedMethodLength);
    Log(level, "rpc",
        {{"server", state_->server_name()},
         {"service", service},
         {"method", method},
         {"request_id", RequestId()},
         {"code", GrpcStatusCodeName(code)},
         {"latency_ms", seconds * 1e3},
         {"peer", peer_}});
  }

  const std::shared_ptr<RpcObserverState> state_;
  const std::string path_;
  MethodSeries* const series_;
  const std::chrono::steady_clock::time_point start_;
  grpc::ServerContextBase* context_ = nullptr;
  std::string request_id_;
  std::string peer_;
  bool request_id_sent_ = false;
  bool finished_ = false;
};

}  // namespace

std::string GenerateRequestId() {
  // absl::BitGen is seeded from OS entropy and is not thread-safe: one per thread.
  thread_local absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen), absl::Uniform<uint64_t>(gen));
}

bool IsValidRequestId(absl::string_view id) {
  if (id.empty() || id.size() > kMaxRequestIdLength) return false;
  for (const char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

std::string RequestIdOf(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kRequestIdMetadataKey);
  if (it == metadata.end()) return "";
  return std::string(it->second.data(), it->second.size());
}

absl::string_view GrpcStatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

absl::StatusOr<std::unique_ptr<RpcObservabilityInterceptorFactory>>
RpcObservabilityInterceptorFactory::Create(std::string server_name, MetricsRegistry* metrics) {
  if (metrics == nullptr) return absl::InvalidArgumentError("metrics: must not be null");
  // Links the health proto's descriptors in, so health RPCs get their own series (the default
  // health service is not built from our generated code).
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  auto requests = metrics->GetCounterFamily("ibgr_grpc_requests_total",
                                            "gRPC requests handled, by service, method and code.");
  if (!requests.ok()) return requests.status();
  auto durations =
      metrics->GetHistogramFamily("ibgr_grpc_request_duration_seconds",
                                  "Time from receiving an RPC to sending its status, in seconds.");
  if (!durations.ok()) return durations.status();
  auto inflight = metrics->GetGaugeFamily("ibgr_grpc_inflight_requests", "RPCs being handled now.");
  if (!inflight.ok()) return inflight.status();
  return std::unique_ptr<RpcObservabilityInterceptorFactory>(
      new RpcObservabilityInterceptorFactory(std::make_shared<RpcObserverState>(
          std::move(server_name), *requests, *durations, *inflight)));
}

RpcObservabilityInterceptorFactory::RpcObservabilityInterceptorFactory(
    std::shared_ptr<RpcObserverState> state)
    : state_(std::move(state)) {}

grpc::experimental::Interceptor* RpcObservabilityInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RpcObservabilityInterceptor(info, state_);
}

}  // namespace ibgraphrag::common
