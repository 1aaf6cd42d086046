// A gtest fixture base for tests that run the small test suite as real processes on loopback:
// the small artifacts (services/gateway/testing/small_suite.h) published in a fresh temp dir,
// the scripted fake LLM behind the reasoner, and the five services (distributed_suite.h), shared
// by every test of the derived fixture. Header-only: its users already link the gateway,
// retriever and fake-LLM test libraries.
#ifndef IBGRAPHRAG_TESTS_TEST_UTIL_SMALL_SUITE_FIXTURE_H_
#define IBGRAPHRAG_TESTS_TEST_UTIL_SMALL_SUITE_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/test_util/fake_openai_server.h"
#include "common/test_util/test_util.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/distributed_suite.h"

namespace ibgraphrag::testing {

class SmallSuiteOnLoopback : public ::testing::Test {
 protected:
  // Extra gateway flags; may write files (API keys, ...) under the scratch dir it is given.
  using GatewayFlags = std::function<std::vector<std::string>(const std::string& dir)>;

  // Call from the derived fixture's SetUpTestSuite. The fake LLM answers option A with a `why`
  // line until a test scripts it otherwise.
  static void StartSuite(const std::string& name, const GatewayFlags& gateway_flags = nullptr) {
    dir_ = new std::string(common::test_util::MakeTempDir(name));
    gateway::testing::PublishSmallSuite(*dir_ + "/art");
    if (::testing::Test::HasFatalFailure()) return;
    auto fake = common::test_util::FakeOpenAiServer::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = fake->release();
    fake_->SetDefault(common::test_util::FakeResponse::Completion(
        "ans: A\nwhy: (Metformin, drug treats disease, type 2 diabetes mellitus)"));
    DistributedSuite::Options options;
    options.dir = *dir_;
    options.base = *dir_ + "/art";
    options.reasoner_config = *dir_ + "/reasoner.textproto";
    common::test_util::WriteFileOrDie(
        options.reasoner_config, gateway::testing::SmallSuiteReasonerConfig(fake_->base_url()));
    if (gateway_flags) options.gateway_flags = gateway_flags(*dir_);
    auto suite = DistributedSuite::Start(options);
    ASSERT_TRUE(suite.ok()) << suite.status();
    suite_ = suite->release();
  }

  // Call from the derived fixture's TearDownTestSuite.
  static void StopSuite() {
    delete suite_;
    suite_ = nullptr;
    if (fake_ != nullptr) fake_->Stop();
    delete fake_;
    fake_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(suite_, nullptr);
    stub_ = v1::GatewayService::NewStub(
        grpc::CreateChannel(suite_->target("gateway"), grpc::InsecureChannelCredentials()));
  }

  inline static std::string* dir_ = nullptr;  // scratch dir: art/, logs, configs
  inline static common::test_util::FakeOpenAiServer* fake_ = nullptr;
  inline static DistributedSuite* suite_ = nullptr;
  std::unique_ptr<v1::GatewayService::Stub> stub_;
};

}  // namespace ibgraphrag::testing

#endif  // IBGRAPHRAG_TESTS_TEST_UTIL_SMALL_SUITE_FIXTURE_H_
