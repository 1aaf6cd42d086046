// Integration test: the real `kgstore` and `retriever` binaries on loopback. The test writes a
// small KG snapshot and a model version (hashed n-gram encoder, 256 dims: the binary's default)
// under one artifact base, starts kgstore on it, then retriever pointed at kgstore.
#include <signal.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/grpc_subgraph_source.h"
#include "services/retriever/retriever_test_util.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::retriever {
namespace {

namespace pb = ::ibgraphrag::v1;
namespace kt = kgstore::testing;
using ::ibgraphrag::common::test_util::MakeTempDir;
using ::ibgraphrag::common::test_util::StatusIs;
using ::ibgraphrag::testing::BinDir;
using ::ibgraphrag::testing::Subprocess;
using ::testing::HasSubstr;

void SetDeadline(grpc::ClientContext* ctx, int ms = 10000) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

class RetrieverIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(MakeTempDir("retriever-it"));
    const std::string base = *dir_ + "/art";
    kgstore::SnapshotManifestInfo info;
    info.version = 1;
    ASSERT_OK(kgstore::KgStore::WriteSnapshot(kt::SmallKg(), info, kgstore::SnapshotDir(base, 1)));
    testing::PublishTestVersion(base, kt::SmallKg(), /*text_dim=*/256, /*hidden=*/32);
    auto kg = Subprocess::Start({BinDir() + "/kgstore", "--base=" + base, "--host=127.0.0.1",
                                 "--port=0", "--metrics_port=-1", "--read_only"},
                                *dir_ + "/kgstore.log");
    ASSERT_OK(kg);
    kgstore_ = new Subprocess(std::move(*kg));
    auto kg_port = kgstore_->WaitForReadyPort("kgstore", absl::Seconds(30));
    ASSERT_OK(kg_port);
    kgstore_port_ = *kg_port;
    // The metrics endpoint is on: with OpenBLAS loaded (the projections' sgemm) it needs the
    // thread-stack floor (common/thread_stack_floor.cc) that the binary links.
    auto r = Subprocess::Start(
        {BinDir() + "/retriever", "--base=" + base, "--host=127.0.0.1", "--port=0",
         "--metrics_port=0", "--device=cpu", absl::StrCat("--kgstore=127.0.0.1:", *kg_port)},
        *dir_ + "/retriever.log");
    ASSERT_OK(r);
    retriever_ = new Subprocess(std::move(*r));
    auto line = retriever_->WaitForLogLine("\"msg\":\"retriever: ready\"", absl::Seconds(30));
    ASSERT_OK(line);
    const auto j = nlohmann::json::parse(*line);
    port_ = j["port"].get<int>();
  }
  static void TearDownTestSuite() {
    delete retriever_;
    delete kgstore_;
    retriever_ = kgstore_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(retriever_, nullptr);
    stub_ = pb::RetrieverService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials()));
  }

  static std::string* dir_;
  static Subprocess* kgstore_;
  static Subprocess* retriever_;
  static int port_;
  static int kgstore_port_;
  std::unique_ptr<pb::RetrieverService::Stub> stub_;
};

std::string* RetrieverIntegrationTest::dir_ = nullptr;
Subprocess* RetrieverIntegrationTest::kgstore_ = nullptr;
Subprocess* RetrieverIntegrationTest::retriever_ = nullptr;
int RetrieverIntegrationTest::port_ = 0;
int RetrieverIntegrationTest::kgstore_port_ = 0;

// The retriever's gRPC source reads kgstore's `missing` list into TripleSources.found (the
// topic-link probe's answer): the real kgstore, a triple it holds and two it does not.
TEST_F(RetrieverIntegrationTest, GrpcDescribeTriplesSaysWhichTriplesTheKgHolds) {
  GrpcSubgraphSource source(grpc::CreateChannel(absl::StrCat("127.0.0.1:", kgstore_port_),
                                                grpc::InsecureChannelCredentials()));
  auto got = source.DescribeTriples(
      {kt::kMetformin, kt::kDiabetes, kt::kDiabetes}, {kt::kTreats, kt::kTreats, kt::kPresents},
      {kt::kDiabetes, kt::kMetformin, kt::kPolyuria}, absl::Now() + absl::Seconds(10));
  ASSERT_OK(got);
  ASSERT_EQ(got->size(), 3u);
  EXPECT_TRUE((*got)[0].found);
  EXPECT_EQ((*got)[0].sources, std::vector<std::string>{"hetionet"});
  EXPECT_FALSE((*got)[1].found);
  EXPECT_TRUE((*got)[1].sources.empty());
  EXPECT_TRUE((*got)[2].found);
  EXPECT_EQ((*got)[2].sources, std::vector<std::string>{"doid"});
}

TEST_F(RetrieverIntegrationTest, HealthIsServing) {
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials()));
  for (const std::string service : {"", "ibgraphrag.v1.RetrieverService"}) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_OK(health->Check(&ctx, req, &resp));
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
}

TEST_F(RetrieverIntegrationTest, RetrieveThroughKgStoreEveryMode) {
  for (pb::ScoringMode mode :
       {pb::SCORING_MODE_IBRP, pb::SCORING_MODE_COSINE, pb::SCORING_MODE_SHORTEST_PATH}) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::RetrieveRequest req;
    req.set_question("Which drug treats type 2 diabetes mellitus?");
    req.add_topic_external_ids("DOID:9352");
    req.add_topic_entity_ids(kt::kPparg);
    req.set_top_k(4);
    req.set_mode(mode);
    pb::RetrieveResponse resp;
    grpc::Status s = stub_->Retrieve(&ctx, req, &resp);
    ASSERT_OK(s);
    EXPECT_EQ(resp.triples_size(), 4);
    EXPECT_EQ(resp.mode(), mode);
    EXPECT_EQ(resp.kg_version(), "1");
    EXPECT_FALSE(resp.triples(0).head().name().empty());
    EXPECT_GT(resp.paths_size(), 0);
  }
}

TEST_F(RetrieverIntegrationTest, UnknownTopicIsNotFoundListingIt) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::RetrieveRequest req;
  req.set_question("q");
  req.add_topic_entity_ids(31337);
  pb::RetrieveResponse resp;
  grpc::Status s = stub_->Retrieve(&ctx, req, &resp);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::NOT_FOUND, HasSubstr("31337")));
}

TEST_F(RetrieverIntegrationTest, KgStoreGoneIsUnavailableNotAHang) {
  ASSERT_OK(kgstore_->Stop(SIGKILL, absl::Seconds(10)));
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 5000);
  pb::RetrieveRequest req;
  req.set_question("q");
  req.add_topic_entity_ids(kt::kDiabetes);
  pb::RetrieveResponse resp;
  grpc::Status s = stub_->Retrieve(&ctx, req, &resp);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::UNAVAILABLE));
}

}  // namespace
}  // namespace ibgraphrag::retriever
