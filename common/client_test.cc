#include "common/client.h"

#include <grpcpp/server_context.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/server_interceptor.h"
#include "common/server_runner.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ibgraphrag::common::testdata::EchoRequest;
using ibgraphrag::common::testdata::EchoResponse;
using ibgraphrag::common::testdata::EchoTestService;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Gt;
using ::testing::HasSubstr;
using ::testing::Le;

std::unique_ptr<ServerRunner> StartEchoServer(test_util::EchoTestServiceImpl* service,
                                              const std::string& name) {
  ServerRunner::Options options;
  options.service_name = name;
  options.listen_host = "127.0.0.1";
  auto runner = ServerRunner::BuildAndStart(options, {service}, {});
  EXPECT_OK(runner);
  if (!runner.ok()) return nullptr;
  (*runner)->SetServing(true);
  return std::move(*runner);
}

std::shared_ptr<grpc::Channel> ChannelTo(const std::string& target) {
  ChannelOptions options;
  options.target = target;
  // Short backoff keeps the retry tests quick; the policy is what is under test.
  options.initial_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(50);
  auto channel = MakeChannel(options);
  EXPECT_OK(channel);
  return channel.ok() ? *channel : nullptr;
}

grpc::Status CallEcho(EchoTestService::Stub* stub, const EchoRequest& request,
                      EchoResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return stub->Echo(&context, request, response);
}

TEST(ServiceConfigTest, RoundRobinAndRetriesOnlyOnUnavailable) {
  ChannelOptions options;
  options.target = "dns:///kgstore-headless:50052";
  auto json_text = ServiceConfigJson(options);
  ASSERT_OK(json_text);
  const nlohmann::json config = nlohmann::json::parse(*json_text);
  EXPECT_TRUE(config["loadBalancingConfig"][0].contains("round_robin"));
  const nlohmann::json& retry = config["methodConfig"][0]["retryPolicy"];
  EXPECT_EQ(retry["maxAttempts"], 3);
  EXPECT_EQ(retry["initialBackoff"], "0.100000s");
  EXPECT_EQ(retry["backoffMultiplier"], 2.0);
  EXPECT_THAT(retry["retryableStatusCodes"].get<std::vector<std::string>>(),
              ElementsAre("UNAVAILABLE"));

  options.round_robin = false;
  options.retry_unavailable = false;
  const nlohmann::json plain = nlohmann::json::parse(*ServiceConfigJson(options));
  EXPECT_TRUE(plain["loadBalancingConfig"][0].contains("pick_first"));
  EXPECT_FALSE(plain.contains("methodConfig"));
}

TEST(MakeChannelTest, InvalidOptionsNameTheField) {
  ChannelOptions options;
  EXPECT_THAT(std::string(MakeChannel(options).status().message()), HasSubstr("target"));
  options.target = "127.0.0.1:1";
  options.max_attempts = 9;
  EXPECT_THAT(std::string(MakeChannel(options).status().message()), HasSubstr("max_attempts"));
  options.max_attempts = 3;
  options.max_reconnect_backoff = absl::Seconds(600);
  EXPECT_THAT(std::string(MakeChannel(options).status().message()),
              HasSubstr("max_reconnect_backoff"));
  options.max_reconnect_backoff = absl::Seconds(1);
  options.tls.enabled = true;
  options.tls.cert_path = "/x.pem";
  EXPECT_THAT(std::string(MakeChannel(options).status().message()), HasSubstr("tls.key_path"));
  options.tls.key_path = "/x.key";
  EXPECT_THAT(std::string(MakeChannel(options).status().message()), HasSubstr("tls.cert_path"));
  options.tls = ClientTlsOptions();
  options.tls.ca_cert_path = "/ca.pem";
  EXPECT_THAT(std::string(MakeChannel(options).status().message()), HasSubstr("tls.enabled"));
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runner_ = StartEchoServer(&service_, "ibgr-client-test");
    ASSERT_NE(runner_, nullptr);
    stub_ = EchoTestService::NewStub(ChannelTo(absl::StrCat("127.0.0.1:", runner_->port())));
  }

  test_util::EchoTestServiceImpl service_;
  std::unique_ptr<ServerRunner> runner_;
  std::unique_ptr<EchoTestService::Stub> stub_;
};

TEST_F(ClientTest, UnavailableIsRetriedUntilItSucceeds) {
  EchoRequest request;
  request.set_key("flaky");
  request.set_fail_code(static_cast<int>(grpc::StatusCode::UNAVAILABLE));
  request.set_fail_first_n(2);
  EchoResponse response;
  const grpc::Status status = CallEcho(stub_.get(), request, &response);
  ASSERT_OK(status);
  EXPECT_EQ(response.attempts(), 3);
}

TEST_F(ClientTest, RetriesStopAtMaxAttempts) {
  EchoRequest request;
  request.set_key("down");
  request.set_fail_code(static_cast<int>(grpc::StatusCode::UNAVAILABLE));
  EchoResponse response;
  EXPECT_THAT(CallEcho(stub_.get(), request, &response), StatusIs(grpc::StatusCode::UNAVAILABLE));
  EXPECT_EQ(service_.Attempts("down"), 3);
}

TEST_F(ClientTest, OtherErrorsAreNotRetried) {
  for (grpc::StatusCode code : {grpc::StatusCode::INTERNAL, grpc::StatusCode::DEADLINE_EXCEEDED,
                                grpc::StatusCode::RESOURCE_EXHAUSTED}) {
    const std::string key = absl::StrCat("code-", static_cast<int>(code));
    EchoRequest request;
    request.set_key(key);
    request.set_fail_code(static_cast<int>(code));
    request.set_fail_first_n(1);
    EchoResponse response;
    EXPECT_THAT(CallEcho(stub_.get(), request, &response), StatusIs(code));
    EXPECT_EQ(service_.Attempts(key), 1) << key;
  }
}

TEST_F(ClientTest, RoundRobinSpreadsCallsOverEveryAddress) {
  test_util::EchoTestServiceImpl second_service;
  auto second = StartEchoServer(&second_service, "ibgr-client-test-2");
  ASSERT_NE(second, nullptr);
  auto stub = EchoTestService::NewStub(
      ChannelTo(absl::StrCat("ipv4:127.0.0.1:", runner_->port(), ",127.0.0.1:", second->port())));
  // Round-robin only uses connected backends; keep calling until both have served one (the
  // bound is generous so that a slow connection does not fail the test).
  for (int i = 0; i < 500 && (service_.TotalCalls() == 0 || second_service.TotalCalls() == 0);
       ++i) {
    EchoResponse response;
    ASSERT_OK(CallEcho(stub.get(), EchoRequest(), &response));
  }
  EXPECT_GT(service_.TotalCalls(), 0);
  EXPECT_GT(second_service.TotalCalls(), 0);
  second->Shutdown();
}

class ForwardingTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    upstream_ = StartEchoServer(&upstream_service_, "ibgr-forwarder");
    ASSERT_NE(upstream_, nullptr);
    upstream_service_.SetDownstream(ChannelTo(absl::StrCat("127.0.0.1:", runner_->port())));
    upstream_stub_ =
        EchoTestService::NewStub(ChannelTo(absl::StrCat("127.0.0.1:", upstream_->port())));
  }

  test_util::EchoTestServiceImpl upstream_service_;
  std::unique_ptr<ServerRunner> upstream_;
  std::unique_ptr<EchoTestService::Stub> upstream_stub_;
};

TEST_F(ForwardingTest, RequestIdPropagatesToTheNextHop) {
  grpc::ClientContext context;
  context.AddMetadata(kRequestIdMetadataKey, "trace-42");
  EchoRequest request;
  request.set_budget_ms(5000);
  EchoResponse response;
  ASSERT_OK(upstream_stub_->Forward(&context, request, &response));
  EXPECT_EQ(response.request_id(), "trace-42");
}

TEST_F(ForwardingTest, GeneratedRequestIdPropagatesToTheNextHop) {
  grpc::ClientContext context;
  EchoRequest request;
  request.set_budget_ms(5000);
  EchoResponse response;
  ASSERT_OK(upstream_stub_->Forward(&context, request, &response));
  EXPECT_THAT(response.request_id(), ::testing::MatchesRegex("[0-9a-f]{32}"));
}

TEST_F(ForwardingTest, ChildDeadlineIsTheCallersWhenItIsSooner) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  EchoRequest request;
  request.set_budget_ms(3'600'000);  // An hour: the caller's 20 s must win.
  EchoResponse response;
  ASSERT_OK(upstream_stub_->Forward(&context, request, &response));
  // The wire format rounds timeouts up slightly, hence the margin; the 1 h budget did not win.
  EXPECT_THAT(response.deadline_remaining_ms(), AllOf(Gt(0), Le(25'000)));
}

TEST_F(ForwardingTest, ChildDeadlineIsTheBudgetWhenItIsSooner) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  EchoRequest request;
  request.set_budget_ms(10'000);
  EchoResponse response;
  ASSERT_OK(upstream_stub_->Forward(&context, request, &response));
  // Margin for the wire format's rounding, as above.
  EXPECT_THAT(response.deadline_remaining_ms(), AllOf(Gt(0), Le(12'500)));
}

TEST_F(ForwardingTest, CallerWithoutDeadlineGetsTheBudget) {
  grpc::ClientContext context;
  EchoRequest request;
  request.set_budget_ms(10'000);
  EchoResponse response;
  ASSERT_OK(upstream_stub_->Forward(&context, request, &response));
  // Margin for the wire format's rounding, as above.
  EXPECT_THAT(response.deadline_remaining_ms(), AllOf(Gt(0), Le(12'500)));
}

TEST_F(ForwardingTest, CallerCancellationReachesTheNextHop) {
  grpc::ClientContext context;
  EchoRequest request;
  request.set_budget_ms(60'000);
  request.set_hold(true);
  grpc::Status status;
  std::thread caller([&] {
    EchoResponse response;
    status = upstream_stub_->Forward(&context, request, &response);
  });
  ASSERT_TRUE(service_.WaitForHeldCalls(1, absl::Seconds(10)));
  context.TryCancel();
  caller.join();
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::CANCELLED));
  // The downstream handler sees the cancellation although only the first hop was cancelled.
  EXPECT_TRUE(service_.WaitForObservedCancellation(absl::Seconds(10)));
}

TEST(MakeChildContextTest, WithoutALiveParentUsesTheBudgetAndNoRequestId) {
  grpc::ServerContext parent;
  const auto before = std::chrono::system_clock::now();
  auto child = MakeChildContext(parent, absl::Seconds(5));
  EXPECT_LE(child->deadline(), before + std::chrono::seconds(6));
  EXPECT_GT(child->deadline(), before);
  auto unbounded = MakeChildContext(parent, absl::InfiniteDuration());
  EXPECT_EQ(unbounded->deadline(), std::chrono::system_clock::time_point::max());
}

}  // namespace
}  // namespace ibgraphrag::common
