#include "common/server_runner.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/server_interceptor.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

using grpc::health::v1::HealthCheckResponse;
using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ibgraphrag::common::testdata::EchoRequest;
using ibgraphrag::common::testdata::EchoResponse;
using ibgraphrag::common::testdata::EchoTestService;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

constexpr char kEchoService[] = "ibgraphrag.common.testdata.EchoTestService";

std::chrono::system_clock::time_point In(std::chrono::seconds seconds) {
  return std::chrono::system_clock::now() + seconds;
}

// The value of `key` in a metadata multimap, or "".
std::string MetadataValue(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                          const std::string& key) {
  auto it = metadata.find(key);
  return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
}

// The sample value of the exposition line that starts with `series` (name + labels), or -1.
double SampleValue(const std::string& exposition, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (absl::StartsWith(line, series + " ")) {
      return std::stod(std::string(line.substr(series.size() + 1)));
    }
  }
  return -1;
}

class ServerRunnerTest : public ::testing::Test {
 protected:
  ServerRunner::Options LoopbackOptions() {
    ServerRunner::Options options;
    options.service_name = "ibgr-test";
    options.listen_host = "127.0.0.1";
    options.port = 0;
    options.metrics_port = 0;
    return options;
  }

  void Start(const ServerRunner::Options& options) {
    auto runner = ServerRunner::BuildAndStart(options, {&service_}, {kEchoService});
    ASSERT_OK(runner);
    runner_ = std::move(*runner);
    ASSERT_GT(runner_->port(), 0);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", runner_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = EchoTestService::NewStub(channel_);
  }

  void SetUp() override { Start(LoopbackOptions()); }

  void TearDown() override {
    SetLogSink(nullptr);
    SetMinLogLevel(LogLevel::kInfo);
    if (runner_ != nullptr) runner_->Shutdown();
  }

  grpc::Status Echo(const EchoRequest& request, EchoResponse* response,
                    grpc::ClientContext* context) {
    context->set_deadline(In(std::chrono::seconds(20)));
    return stub_->Echo(context, request, response);
  }

  std::string Scrape() {
    auto body = test_util::HttpGet(runner_->metrics_port(), "/metrics");
    EXPECT_OK(body);
    return body.ok() ? *body : "";
  }

  test_util::EchoTestServiceImpl service_;
  std::unique_ptr<ServerRunner> runner_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<EchoTestService::Stub> stub_;
};

TEST_F(ServerRunnerTest, HealthIsNotServingUntilSetServingTrue) {
  for (const std::string name : {"", "ibgr-test", kEchoService}) {
    auto status = test_util::CheckHealth(channel_, name);
    ASSERT_OK(status) << name;
    EXPECT_EQ(*status, HealthCheckResponse::NOT_SERVING) << name;
  }
  runner_->SetServing(true);
  for (const std::string name : {"", "ibgr-test", kEchoService}) {
    auto status = test_util::CheckHealth(channel_, name);
    ASSERT_OK(status) << name;
    EXPECT_EQ(*status, HealthCheckResponse::SERVING) << name;
  }
  runner_->SetServing(false);
  EXPECT_EQ(*test_util::CheckHealth(channel_, ""), HealthCheckResponse::NOT_SERVING);
  // Names that were never registered are unknown, not silently healthy.
  EXPECT_THAT(test_util::CheckHealth(channel_, "no.such.Service"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ServerRunnerTest, ReflectionListsTheRegisteredServices) {
  auto services = test_util::ReflectionListServices(channel_);
  ASSERT_OK(services);
  EXPECT_THAT(*services, Contains(kEchoService));
  EXPECT_THAT(*services, Contains("grpc.reflection.v1alpha.ServerReflection"));
  auto files = test_util::ReflectionFilesContainingSymbol(channel_, kEchoService);
  ASSERT_OK(files);
  ASSERT_FALSE(files->empty());
  EXPECT_EQ(files->front(), "common/testdata/echo_test.proto");
}

TEST_F(ServerRunnerTest, CallerRequestIdReachesTheHandlerAndComesBack) {
  grpc::ClientContext context;
  context.AddMetadata(kRequestIdMetadataKey, "req-2f1c9a");
  EchoRequest request;
  request.set_message("hello");
  EchoResponse response;
  ASSERT_OK(Echo(request, &response, &context));
  EXPECT_EQ(response.message(), "hello");
  EXPECT_EQ(response.request_id(), "req-2f1c9a");
  EXPECT_EQ(MetadataValue(context.GetServerInitialMetadata(), kRequestIdMetadataKey), "req-2f1c9a");
}

TEST_F(ServerRunnerTest, MissingRequestIdIsGeneratedAndReturned) {
  grpc::ClientContext context;
  EchoResponse response;
  ASSERT_OK(Echo(EchoRequest(), &response, &context));
  EXPECT_THAT(response.request_id(), MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(MetadataValue(context.GetServerInitialMetadata(), kRequestIdMetadataKey),
            response.request_id());

  grpc::ClientContext second_context;
  EchoResponse second;
  ASSERT_OK(Echo(EchoRequest(), &second, &second_context));
  EXPECT_NE(second.request_id(), response.request_id());
}

TEST_F(ServerRunnerTest, MalformedRequestIdIsReplacedByAGeneratedOne) {
  grpc::ClientContext context;
  context.AddMetadata(kRequestIdMetadataKey, std::string(200, 'a'));
  EchoResponse response;
  ASSERT_OK(Echo(EchoRequest(), &response, &context));
  EXPECT_THAT(response.request_id(), MatchesRegex("[0-9a-f]{32}"));
}

TEST_F(ServerRunnerTest, RequestIdComesBackOnFailedRpcs) {
  grpc::ClientContext context;
  context.AddMetadata(kRequestIdMetadataKey, "req-failing");
  EchoRequest request;
  request.set_fail_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
  EchoResponse response;
  const grpc::Status status = Echo(request, &response, &context);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::NOT_FOUND));
  const std::string in_initial =
      MetadataValue(context.GetServerInitialMetadata(), kRequestIdMetadataKey);
  const std::string in_trailing =
      MetadataValue(context.GetServerTrailingMetadata(), kRequestIdMetadataKey);
  EXPECT_EQ(in_initial.empty() ? in_trailing : in_initial, "req-failing");
}

TEST_F(ServerRunnerTest, MetricsCountRequestsByMethodAndCode) {
  EchoRequest failing;
  failing.set_fail_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext context;
    EchoResponse response;
    EXPECT_THAT(Echo(failing, &response, &context), StatusIs(grpc::StatusCode::NOT_FOUND));
  }
  {
    grpc::ClientContext context;
    EchoResponse response;
    EXPECT_OK(Echo(EchoRequest(), &response, &context));
  }
  const std::string body = Scrape();
  const std::string labels = absl::StrCat("method=\"Echo\",service=\"", kEchoService, "\"");
  EXPECT_EQ(
      SampleValue(body, absl::StrCat("ibgr_grpc_requests_total{code=\"NOT_FOUND\",", labels, "}")),
      2)
      << body;
  EXPECT_EQ(SampleValue(body, absl::StrCat("ibgr_grpc_requests_total{code=\"OK\",", labels, "}")),
            1)
      << body;
  EXPECT_EQ(
      SampleValue(body, absl::StrCat("ibgr_grpc_request_duration_seconds_count{", labels, "}")), 3)
      << body;
  EXPECT_EQ(SampleValue(
                body, absl::StrCat("ibgr_grpc_inflight_requests{service=\"", kEchoService, "\"}")),
            0)
      << body;
}

TEST_F(ServerRunnerTest, RunnerMetricsEndpointPassesPromtool) {
  ASSERT_TRUE(test_util::ProgramInstalled("promtool", "prometheus"));
  auto extra = runner_->metrics().GetGauge("ibgr_kgstore_triples", "Triples loaded.");
  ASSERT_OK(extra);
  (*extra)->Set(42);
  grpc::ClientContext context;
  EchoResponse response;
  ASSERT_OK(Echo(EchoRequest(), &response, &context));
  ASSERT_OK(test_util::CheckHealth(channel_, ""));
  const std::string body = Scrape();
  EXPECT_THAT(body, HasSubstr("ibgr_kgstore_triples 42"));
  EXPECT_THAT(body, HasSubstr("service=\"grpc.health.v1.Health\""));
  const std::string path = test_util::MakeTempDir() + "/metrics.txt";
  test_util::WriteFileOrDie(path, body);
  int exit_code = -1;
  auto output = test_util::RunCommand("promtool check metrics < " + path, &exit_code);
  ASSERT_OK(output);
  EXPECT_EQ(exit_code, 0) << *output << "\n" << body;
}

TEST_F(ServerRunnerTest, UnknownMethodsShareOneBoundedSeries) {
  for (int i = 0; i < 3; ++i) {
    const std::string path = absl::StrCat("/made.up.Service", i, "/Method", i);
    grpc::internal::RpcMethod method(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC);
    grpc::ClientContext context;
    context.set_deadline(In(std::chrono::seconds(20)));
    EchoRequest request;
    EchoResponse response;
    const grpc::Status status = grpc::internal::BlockingUnaryCall<EchoRequest, EchoResponse>(
        channel_.get(), method, &context, request, &response);
    EXPECT_THAT(status, StatusIs(grpc::StatusCode::UNIMPLEMENTED));
  }
  const std::string body = Scrape();
  EXPECT_THAT(body, Not(HasSubstr("made.up.Service")));
  EXPECT_EQ(SampleValue(body,
                        "ibgr_grpc_requests_total{code=\"UNIMPLEMENTED\",method=\"unknown\","
                        "service=\"unknown\"}"),
            3)
      << body;
}

TEST_F(ServerRunnerTest, AccessLogHasOneStructuredLinePerRpcAndNoPayload) {
  absl::Mutex mu;
  std::vector<std::string> lines;
  SetLogSink([&](absl::string_view line) {
    absl::MutexLock lock(&mu);
    lines.emplace_back(line);
  });
  const std::string patient_text = "PATIENT 54F: crushing chest pain radiating to the left arm";
  grpc::ClientContext context;
  context.AddMetadata(kRequestIdMetadataKey, "req-access-log");
  EchoRequest request;
  request.set_message(patient_text);
  EchoResponse response;
  ASSERT_OK(Echo(request, &response, &context));
  ASSERT_EQ(response.message(), patient_text);  // The payload did reach the server.
  SetLogSink(nullptr);

  absl::MutexLock lock(&mu);
  int rpc_lines = 0;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, Not(HasSubstr("chest pain")));
    const nlohmann::json json = nlohmann::json::parse(line);
    if (json["msg"] != "rpc") continue;
    ++rpc_lines;
    for (const char* field : {"ts", "level", "server", "service", "method", "request_id", "code",
                              "latency_ms", "peer"}) {
      EXPECT_TRUE(json.contains(field)) << field << " missing in " << line;
    }
    EXPECT_EQ(json["server"], "ibgr-test");
    EXPECT_EQ(json["service"], kEchoService);
    EXPECT_EQ(json["method"], "Echo");
    EXPECT_EQ(json["request_id"], "req-access-log");
    EXPECT_EQ(json["code"], "OK");
    EXPECT_EQ(json["level"], "info");
    EXPECT_GE(json["latency_ms"].get<double>(), 0.0);
    EXPECT_THAT(json["peer"].get<std::string>(), HasSubstr("127.0.0.1"));
  }
  EXPECT_EQ(rpc_lines, 1);
}

TEST_F(ServerRunnerTest, HealthProbesAreLoggedOnlyAtDebugLevel) {
  absl::Mutex mu;
  std::vector<std::string> lines;
  SetLogSink([&](absl::string_view line) {
    absl::MutexLock lock(&mu);
    lines.emplace_back(line);
  });
  ASSERT_OK(test_util::CheckHealth(channel_, ""));
  SetMinLogLevel(LogLevel::kDebug);
  ASSERT_OK(test_util::CheckHealth(channel_, ""));
  SetLogSink(nullptr);
  absl::MutexLock lock(&mu);
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::json json = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(json["level"], "debug");
  EXPECT_EQ(json["service"], "grpc.health.v1.Health");
  EXPECT_EQ(json["method"], "Check");
}

TEST_F(ServerRunnerTest, ShutdownLetsInFlightRpcsFinish) {
  EchoRequest request;
  request.set_hold(true);
  request.set_message("slow");
  grpc::Status held_status;
  EchoResponse held_response;
  std::thread caller([&] {
    grpc::ClientContext context;
    held_status = Echo(request, &held_response, &context);
  });
  ASSERT_TRUE(service_.WaitForHeldCalls(1, absl::Seconds(10)));

  std::thread shutdown([&] { runner_->Shutdown(); });
  // The listener closes as soon as draining begins: wait until a fresh connection is refused,
  // so the release below certainly happens during the drain.
  for (int i = 0; i < 2000; ++i) {
    auto fresh = grpc::CreateChannel(absl::StrCat("127.0.0.1:", runner_->port()),
                                     grpc::InsecureChannelCredentials());
    if (!test_util::CheckHealth(fresh, "").ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  service_.ReleaseHeldCalls();
  shutdown.join();
  caller.join();
  EXPECT_OK(held_status);
  EXPECT_EQ(held_response.message(), "slow");
}

TEST_F(ServerRunnerTest, ShutdownCancelsRpcsStillRunningAtTheDrainDeadline) {
  runner_->Shutdown();
  ServerRunner::Options options = LoopbackOptions();
  options.drain_deadline = absl::Milliseconds(100);
  Start(options);

  EchoRequest request;
  request.set_hold(true);
  grpc::Status held_status;
  std::thread caller([&] {
    grpc::ClientContext context;
    EchoResponse response;
    held_status = Echo(request, &response, &context);
  });
  ASSERT_TRUE(service_.WaitForHeldCalls(1, absl::Seconds(10)));
  runner_->Shutdown();  // Returns only after the held handler has returned.
  caller.join();
  EXPECT_THAT(held_status, Not(IsOk()));
  EXPECT_TRUE(service_.WaitForObservedCancellation(absl::Seconds(10)));
}

TEST_F(ServerRunnerTest, ShutdownIsIdempotentAndRefusesNewRpcs) {
  runner_->Shutdown();
  runner_->Shutdown();
  runner_->Wait();
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(5)));
  EchoResponse response;
  EXPECT_THAT(stub_->Echo(&context, EchoRequest(), &response),
              StatusIs(grpc::StatusCode::UNAVAILABLE));
  EXPECT_THAT(test_util::HttpGet(runner_->metrics_port(), "/metrics"), Not(IsOk()));
}

TEST_F(ServerRunnerTest, SigtermReportsNotServingDuringGraceThenDrains) {
  runner_->Shutdown();
  ServerRunner::Options options = LoopbackOptions();
  // Long enough that only the second signal below can end it.
  options.termination_grace_period = absl::Seconds(60);
  Start(options);
  runner_->SetServing(true);
  ASSERT_EQ(*test_util::CheckHealth(channel_, ""), HealthCheckResponse::SERVING);

  ASSERT_OK(ServerRunner::InstallTerminationSignalHandlers());
  std::thread waiter([&] { runner_->WaitForTermination(); });
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);

  // During the grace period the server still answers, but reports NOT_SERVING, and a late
  // SetServing(true) (e.g. a reload finishing) cannot flip it back.
  bool saw_not_serving = false;
  for (int i = 0; i < 2000 && !saw_not_serving; ++i) {
    auto status = test_util::CheckHealth(channel_, "");
    ASSERT_OK(status);
    saw_not_serving = *status == HealthCheckResponse::NOT_SERVING;
    if (!saw_not_serving) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(saw_not_serving);
  runner_->SetServing(true);
  EXPECT_EQ(*test_util::CheckHealth(channel_, kEchoService), HealthCheckResponse::NOT_SERVING);
  {
    grpc::ClientContext context;
    EchoResponse response;
    EXPECT_OK(Echo(EchoRequest(), &response, &context));
  }

  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);  // Skips the rest of the grace period.
  waiter.join();
  EXPECT_THAT(test_util::CheckHealth(channel_, ""), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(ServerRunnerTest, WaitForTerminationReturnsWhenShutdownIsCalledElsewhere) {
  std::thread waiter([&] { runner_->WaitForTermination(); });
  runner_->Shutdown();
  waiter.join();  // a hang here fails the test by its ctest timeout
  // ... and the server is down, not merely the waiter released.
  EXPECT_THAT(test_util::CheckHealth(channel_, ""), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(ServerRunnerTest, InProcessChannelReachesTheServicesThroughTheInterceptor) {
  auto stub = EchoTestService::NewStub(runner_->InProcessChannel());
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(20)));
  EchoRequest request;
  request.set_message("in-process");
  EchoResponse response;
  ASSERT_OK(stub->Echo(&context, request, &response));
  EXPECT_EQ(response.message(), "in-process");
  EXPECT_THAT(response.request_id(), MatchesRegex("[0-9a-f]{32}"));
}

TEST_F(ServerRunnerTest, DisabledMetricsEndpointHasNoPort) {
  runner_->Shutdown();
  ServerRunner::Options options = LoopbackOptions();
  options.metrics_port = -1;
  Start(options);
  EXPECT_EQ(runner_->metrics_port(), -1);
}

TEST_F(ServerRunnerTest, BusyPortIsUnavailable) {
  ServerRunner::Options options = LoopbackOptions();
  options.port = runner_->port();
  test_util::EchoTestServiceImpl other;
  auto second = ServerRunner::BuildAndStart(options, {&other}, {});
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kUnavailable));
}

TEST(ServerRunnerOptionsTest, InvalidOptionsAreRejectedNamingTheField) {
  struct Case {
    std::function<void(ServerRunner::Options*)> mutate;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](ServerRunner::Options* o) { o->service_name.clear(); }, "service_name"},
      {[](ServerRunner::Options* o) { o->port = 70000; }, "port"},
      {[](ServerRunner::Options* o) { o->metrics_port = -5; }, "metrics_port"},
      {[](ServerRunner::Options* o) { o->tls.cert_path = "/x.pem"; }, "tls.key_path"},
      {[](ServerRunner::Options* o) { o->tls.key_path = "/x.key"; }, "tls.cert_path"},
      {[](ServerRunner::Options* o) {
         o->tls.cert_path = "/x.pem";
         o->tls.key_path = "/x.key";
         o->tls.require_client_cert = true;
       },
       "tls.client_ca_path"},
      {[](ServerRunner::Options* o) {
         o->tls.cert_path = "/nonexistent/server.pem";
         o->tls.key_path = "/nonexistent/server.key";
       },
       "tls.cert_path"},
      {[](ServerRunner::Options* o) { o->max_receive_message_bytes = 0; },
       "max_receive_message_bytes"},
      {[](ServerRunner::Options* o) { o->drain_deadline = -absl::Seconds(1); }, "drain_deadline"},
      {[](ServerRunner::Options* o) { o->max_threads = -1; }, "max_threads"},
  };
  for (const Case& test_case : cases) {
    ServerRunner::Options options;
    options.service_name = "ibgr-test";
    options.listen_host = "127.0.0.1";
    test_case.mutate(&options);
    auto runner = ServerRunner::BuildAndStart(options, {}, {});
    EXPECT_THAT(runner, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(test_case.field)))
        << test_case.field;
  }
}

}  // namespace
}  // namespace ibgraphrag::common
