#include "common/server_runner.h"

#include <fcntl.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/channel_arguments.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/blocking_reactor.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/server_interceptor.h"
#include "common/status_macros.h"
#include "common/tls_certificate.h"

namespace ibgraphrag::common {

void UseServingMutexSettings() {
  const char* keep = std::getenv("IBGR_MUTEX_DEADLOCK_DETECTION");
  if (keep != nullptr && std::string_view(keep) == "1") return;  // Abseil's default (abort)
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

namespace {

// ---- Signal handling: the handler only writes the signal number to a self-pipe. ----

volatile sig_atomic_t g_signal_write_fd = -1;
int g_signal_read_fd = -1;
std::mutex g_signal_mu;
bool g_handlers_installed = false;  // Guarded by g_signal_mu.
struct sigaction g_previous_term;   // Guarded by g_signal_mu.
struct sigaction g_previous_int;    // Guarded by g_signal_mu.

extern "C" void HandleTerminationSignal(int signo) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(signo);
  // A full pipe drops the byte, which is fine: one pending signal is all that matters.
  ssize_t ignored = ::write(g_signal_write_fd, &byte, 1);
  (void)ignored;
  errno = saved_errno;
}

void RestoreSignalHandlers() {
  std::lock_guard<std::mutex> lock(g_signal_mu);
  if (!g_handlers_installed) return;
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGINT, &g_previous_int, nullptr);
  g_handlers_installed = false;
  // Drop signals already handled so a later WaitForTermination does not see them again.
  unsigned char buffer[64];
  while (::read(g_signal_read_fd, buffer, sizeof(buffer)) > 0) {
  }
}

// Reads one pending signal number from the pipe; 0 when none.
int ReadPendingSignal() {
  unsigned char byte = 0;
  const ssize_t n = ::read(g_signal_read_fd, &byte, 1);
  return n == 1 ? byte : 0;
}

// Waits until one of `fds` is readable or `timeout` passes; returns the index that is readable
// or -1 on timeout/error. Retries on EINTR with the remaining time.
int PollReadable(int fd0, int fd1, absl::Duration timeout) {
  const absl::Time deadline =
      timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + timeout;
  for (;;) {
    pollfd fds[2] = {{fd0, POLLIN, 0}, {fd1, POLLIN, 0}};
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return -1;
      timeout_ms =
          static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))));
    }
    const int ready = ::poll(fds, 2, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (ready == 0) return -1;
    if (fds[0].revents != 0) return 0;
    if (fds[1].revents != 0) return 1;
  }
}

// ---- Options ----

std::string HostPort(absl::string_view host, int port) {
  if (absl::StrContains(host, ':') && !absl::StartsWith(host, "[")) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

absl::Status ValidateOptions(const ServerRunner::Options& options) {
  if (options.service_name.empty()) {
    return absl::InvalidArgumentError("service_name: must not be empty");
  }
  if (options.listen_host.empty()) {
    return absl::InvalidArgumentError("listen_host: must not be empty");
  }
  if ((options.port < 0 && options.port != ServerRunner::kInProcessOnly) || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port: ", options.port, " is outside [0, 65535] (or -1 for in-process only)"));
  }
  if (options.metrics_registry != nullptr && options.metrics_port != -1) {
    return absl::InvalidArgumentError(
        "metrics_port: must be -1 when metrics_registry is given (its owner serves /metrics)");
  }
  if (options.metrics_port < -1 || options.metrics_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics_port: ", options.metrics_port, " is outside [-1, 65535]"));
  }
  const ServerRunner::TlsOptions& tls = options.tls;
  if (tls.cert_path.empty() != tls.key_path.empty()) {
    return absl::InvalidArgumentError(tls.cert_path.empty()
                                          ? "tls.cert_path: required when tls.key_path is set"
                                          : "tls.key_path: required when tls.cert_path is set");
  }
  if (tls.require_client_cert && tls.client_ca_path.empty()) {
    return absl::InvalidArgumentError(
        "tls.client_ca_path: required when tls.require_client_cert is true");
  }
  if (!tls.client_ca_path.empty() && tls.cert_path.empty()) {
    return absl::InvalidArgumentError(
        "tls.cert_path: required when tls.client_ca_path is set (client certificates are "
        "verified only over TLS)");
  }
  if (options.max_receive_message_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_receive_message_bytes: ", options.max_receive_message_bytes, " must be > 0"));
  }
  if (options.max_send_message_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_send_message_bytes: ", options.max_send_message_bytes, " must be > 0"));
  }
  if (options.drain_deadline < absl::ZeroDuration() ||
      options.drain_deadline == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError("drain_deadline: must be finite and >= 0");
  }
  if (options.termination_grace_period < absl::ZeroDuration() ||
      options.termination_grace_period == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError("termination_grace_period: must be finite and >= 0");
  }
  if (options.num_completion_queues < 0) {
    return absl::InvalidArgumentError("num_completion_queues: must be >= 0");
  }
  if (options.max_threads < 0) {
    return absl::InvalidArgumentError("max_threads: must be >= 0");
  }
  if (options.max_connection_age <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("max_connection_age: must be > 0 (infinite = never)");
  }
  return absl::OkStatus();
}

// The port's credentials, and the served certificate's dates when TLS is on.
struct ServerTls {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::optional<CertificateValidity> certificate;
};

absl::StatusOr<ServerTls> MakeServerCredentials(const ServerRunner::TlsOptions& tls) {
  if (tls.cert_path.empty()) return ServerTls{grpc::InsecureServerCredentials(), std::nullopt};
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  IBGR_ASSIGN_OR_RETURN(pair.cert_chain, ReadFileNamedByField("tls.cert_path", tls.cert_path));
  const std::string field = absl::StrCat("tls.cert_path ", tls.cert_path);
  IBGR_ASSIGN_OR_RETURN(const CertificateValidity validity,
                        ReadCertificateValidity(pair.cert_chain, field));
  IBGR_RETURN_IF_ERROR(CheckCertificateDates(validity, absl::Now(), field));
  IBGR_ASSIGN_OR_RETURN(pair.private_key, ReadFileNamedByField("tls.key_path", tls.key_path));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!tls.client_ca_path.empty()) {
    IBGR_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                          ReadFileNamedByField("tls.client_ca_path", tls.client_ca_path));
    ssl.client_certificate_request =
        tls.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  } else {
    ssl.client_certificate_request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  }
  return ServerTls{grpc::SslServerCredentials(ssl), validity};
}

// Within this of expiry a start logs a warning (the gauge below is what alerts should use).
// Shorter than cert-manager's renewBefore (15 days in deploy/k8s/overlays/prod), so a restart
// before a renewal that is still on schedule does not warn.
constexpr absl::Duration kCertificateExpiryWarning = absl::Hours(24 * 14);

// Exports the served certificate's expiry and warns when it is near.
absl::Status ReportCertificate(const ServerTls& tls, const std::string& service,
                               MetricsRegistry* metrics) {
  if (!tls.certificate.has_value()) return absl::OkStatus();
  const absl::Time not_after = tls.certificate->not_after;
  IBGR_ASSIGN_OR_RETURN(
      prometheus::Gauge * gauge,
      metrics->GetGauge("ibgr_tls_certificate_not_after_seconds",
                        "Unix time at which the served TLS certificate expires (alert well "
                        "before it: clients refuse an expired certificate).",
                        {{"server", service}}));
  gauge->Set(static_cast<double>(absl::ToUnixSeconds(not_after)));
  if (not_after - absl::Now() < kCertificateExpiryWarning) {
    LogWarning("TLS certificate expires soon: renew it",
               {{"server", service}, {"not_after", FormatCertificateTime(not_after)}});
  }
  return absl::OkStatus();
}

absl::string_view TlsMode(const ServerRunner::TlsOptions& tls) {
  if (tls.cert_path.empty()) return "plaintext";
  return tls.require_client_cert ? "mtls" : "tls";
}

std::chrono::system_clock::time_point ToChronoDeadline(absl::Duration from_now) {
  return std::chrono::system_clock::now() + absl::ToChronoMilliseconds(from_now);
}

}  // namespace

absl::Status ServerRunner::InstallTerminationSignalHandlers() {
  std::lock_guard<std::mutex> lock(g_signal_mu);
  if (g_handlers_installed) return absl::OkStatus();
  if (g_signal_read_fd < 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      return absl::InternalError(absl::StrCat("signal pipe: ", std::strerror(errno)));
    }
    g_signal_read_fd = fds[0];
    g_signal_write_fd = fds[1];
  }
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = HandleTerminationSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGTERM, &action, &g_previous_term) != 0 ||
      sigaction(SIGINT, &action, &g_previous_int) != 0) {
    return absl::InternalError(absl::StrCat("sigaction: ", std::strerror(errno)));
  }
  g_handlers_installed = true;
  return absl::OkStatus();
}

ServerRunner::ServerRunner(const Options& options) : options_(options) {}

absl::StatusOr<std::unique_ptr<ServerRunner>> ServerRunner::BuildAndStart(
    const Options& options, std::vector<grpc::Service*> services,
    std::vector<std::string> health_service_names) {
  IBGR_RETURN_IF_ERROR(ValidateOptions(options));
  for (size_t i = 0; i < services.size(); ++i) {
    if (services[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("services[", i, "]: must not be null"));
    }
  }
  IBGR_ASSIGN_OR_RETURN(const ServerTls tls, MakeServerCredentials(options.tls));

  std::unique_ptr<ServerRunner> runner(new ServerRunner(options));
  if (::pipe2(runner->wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::InternalError(absl::StrCat("wake pipe: ", std::strerror(errno)));
  }
  {
    absl::flat_hash_set<std::string> seen;
    for (std::string name : {std::string(), options.service_name}) {
      if (seen.insert(name).second) runner->health_names_.push_back(std::move(name));
    }
    for (std::string& name : health_service_names) {
      if (seen.insert(name).second) runner->health_names_.push_back(std::move(name));
    }
  }

  if (options.metrics_registry != nullptr) {
    runner->metrics_ = options.metrics_registry;
    runner->owns_metrics_endpoint_ = false;
  } else {
    MetricsRegistry::Options metrics_options;
    metrics_options.listen_host = options.listen_host;
    metrics_options.port = options.metrics_port;
    IBGR_ASSIGN_OR_RETURN(runner->metrics_, MetricsRegistry::Create(metrics_options));
  }
  IBGR_RETURN_IF_ERROR(ReportCertificate(tls, options.service_name, runner->metrics_.get()));
  IBGR_ASSIGN_OR_RETURN(
      std::unique_ptr<RpcObservabilityInterceptorFactory> interceptor_factory,
      RpcObservabilityInterceptorFactory::Create(options.service_name, runner->metrics_.get()));

  // Both are process-wide switches read when a builder is created/started.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  const bool in_process_only = options.port == kInProcessOnly;
  const std::string address =
      in_process_only ? std::string("in-process") : HostPort(options.listen_host, options.port);
  int selected_port = 0;
  if (!in_process_only) builder.AddListeningPort(address, tls.credentials, &selected_port);
  for (grpc::Service* service : services) builder.RegisterService(service);
  // Without this a second instance could bind the same port (SO_REUSEPORT) and silently take
  // half the connections; a busy port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  builder.SetMaxSendMessageSize(options.max_send_message_bytes);
  if (options.num_completion_queues > 0) {
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS,
                                options.num_completion_queues);
  }
  if (options.max_pollers > 0) {
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                                options.max_pollers);
  }
  if (options.max_threads > 0) {
    // Callback-API handlers (gateway, alignment) run on BlockingCallPool threads, which the
    // resource quota does not see: the pool gets the same bound.
    BlockingCallPool::Default().AddServerThreadBudget(options.max_threads);
    grpc::ResourceQuota quota(absl::StrCat("ibgr-", options.service_name));
    quota.SetMaxThreads(options.max_threads);
    builder.SetResourceQuota(quota);
  }
  if (options.max_connection_age != absl::InfiniteDuration()) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_MS,
        static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(options.max_connection_age),
                                           std::numeric_limits<int>::max())));
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::move(interceptor_factory));
  builder.experimental().SetInterceptorCreators(std::move(creators));

  runner->server_ = builder.BuildAndStart();
  if (runner->server_ == nullptr || (!in_process_only && selected_port == 0)) {
    if (runner->server_ != nullptr) runner->server_->Shutdown();
    runner->server_.reset();
    return absl::UnavailableError(
        absl::StrCat("port: cannot listen on ", address,
                     " (in use, not permitted, or a service registered twice; see gRPC's log)"));
  }
  runner->port_ = in_process_only ? kInProcessOnly : selected_port;
  // The default health service starts with "" SERVING; flip everything to NOT_SERVING before
  // the caller loads its data. (A probe in the microseconds between start and here could still
  // see SERVING for ""; kubelet's first probe comes much later.)
  runner->SetHealth(false);

  if (options.log_payloads) {
    SetLogPayloads(true);
    LogWarning("payload logging is ON: request payloads (patient data) will be logged",
               {{"server", options.service_name}});
  }
  LogInfo("server started",
          {{"server", options.service_name},
           {"address", in_process_only ? address : HostPort(options.listen_host, selected_port)},
           {"port", selected_port},
           {"metrics_port", runner->metrics_->port()},
           {"tls", TlsMode(options.tls)}});
  return runner;
}

ServerRunner::~ServerRunner() {
  if (server_ != nullptr) Shutdown();
  for (int& fd : wake_fds_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void ServerRunner::SetHealth(bool serving) {
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  if (health == nullptr) return;  // A custom health service was registered instead.
  for (const std::string& name : health_names_) health->SetServingStatus(name, serving);
}

void ServerRunner::SetServing(bool serving) {
  std::lock_guard<std::mutex> lock(mu_);
  if (health_frozen_) return;
  SetHealth(serving);
  LogInfo(serving ? "serving" : "not serving", {{"server", options_.service_name}});
}

void ServerRunner::Shutdown() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (shutting_down_) {
      shut_down_cv_.wait(lock, [this] { return shut_down_; });
      return;
    }
    shutting_down_ = true;
    health_frozen_ = true;
    SetHealth(false);
  }
  LogInfo("draining", {{"server", options_.service_name},
                       {"drain_deadline_ms", absl::ToInt64Milliseconds(options_.drain_deadline)}});
  // Stops accepting RPCs, lets in-flight ones finish until the deadline, then cancels them and
  // waits for their handlers to return.
  server_->Shutdown(ToChronoDeadline(options_.drain_deadline));
  server_->Wait();
  if (owns_metrics_endpoint_) metrics_->StopEndpoint();
  LogInfo("server stopped", {{"server", options_.service_name}});
  {
    std::lock_guard<std::mutex> lock(mu_);
    shut_down_ = true;
  }
  shut_down_cv_.notify_all();
  const unsigned char byte = 1;
  ssize_t ignored = ::write(wake_fds_[1], &byte, 1);
  (void)ignored;
}

void ServerRunner::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  shut_down_cv_.wait(lock, [this] { return shut_down_; });
}

void ServerRunner::WaitForTermination() {
  const absl::Status installed = InstallTerminationSignalHandlers();
  if (!installed.ok()) {
    LogError("cannot install signal handlers; waiting for Shutdown()",
             {{"server", options_.service_name}, {"error", installed.ToString()}});
    Wait();
    return;
  }
  int signo = 0;
  for (;;) {
    const int ready = PollReadable(g_signal_read_fd, wake_fds_[0], absl::InfiniteDuration());
    if (ready == 0) {
      signo = ReadPendingSignal();
      if (signo != 0) break;
      continue;  // Spurious wakeup (another waiter took the byte).
    }
    // Shutdown() was called elsewhere (or poll failed): wait for it to complete.
    Wait();
    RestoreSignalHandlers();
    return;
  }

  {
    std::lock_guard<std::mutex> lock(mu_);
    health_frozen_ = true;
    if (!shutting_down_) SetHealth(false);
  }
  LogInfo("termination signal received; NOT_SERVING during the grace period",
          {{"server", options_.service_name},
           {"signal", signo},
           {"grace_ms", absl::ToInt64Milliseconds(options_.termination_grace_period)}});
  if (PollReadable(g_signal_read_fd, wake_fds_[0], options_.termination_grace_period) == 0 &&
      ReadPendingSignal() != 0) {
    LogInfo("second signal: skipping the rest of the grace period",
            {{"server", options_.service_name}});
  }
  Shutdown();
  RestoreSignalHandlers();
}

std::shared_ptr<grpc::Channel> ServerRunner::InProcessChannel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  args.SetMaxSendMessageSize(options_.max_send_message_bytes);
  return server_->InProcessChannel(args);
}

}  // namespace ibgraphrag::common
