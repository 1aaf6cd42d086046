// ShortestPathEvidence against a real kgstore server (in-process channel) on the small
// hand-checked graph of kg_store_test_util.h.
#include "services/gateway/shortest_path_evidence.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "absl/time/clock.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/kgstore/kgstore_server.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::StatusIs;
using ::ibgraphrag::kgstore::testing::kDiabetes;
using ::ibgraphrag::kgstore::testing::kMetformin;
using ::ibgraphrag::kgstore::testing::kPioglitazone;
using ::testing::ElementsAre;
using ::testing::FloatNear;

class ShortestPathEvidenceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new kgstore::testing::ScratchDir("shortest_path_evidence");
    kgstore::SnapshotManifestInfo info;
    info.version = 1;
    info.created_by = "shortest_path_evidence_test";
    const std::string dir = kgstore::SnapshotDir(scratch_->path(), 1);
    ASSERT_OK(kgstore::KgStore::WriteSnapshot(kgstore::testing::SmallKg(), info, dir));
    kgstore::KgStoreServer::Options options;
    options.server.listen_host = "127.0.0.1";
    options.server.port = 0;
    options.server.metrics_port = -1;
    options.snapshot_dir = dir;
    options.store.read_only = true;
    auto server = kgstore::KgStoreServer::BuildAndStart(options);
    ASSERT_OK(server);
    server_ = server->release();
  }

  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete scratch_;
    scratch_ = nullptr;
  }

  // Fetches evidence for `topics` with the given top_k (max_hops 2, max_paths 10).
  static absl::Status Fetch(std::initializer_list<uint32_t> topics, uint32_t top_k,
                            pb::RetrieveResponse* response) {
    ShortestPathEvidence evidence(server_->InProcessChannel());
    pb::RetrieveRequest request;
    for (uint32_t t : topics) request.add_topic_entity_ids(t);
    request.set_top_k(top_k);
    request.set_max_hops(2);
    request.set_max_paths(10);
    grpc::ServerContext parent;
    return evidence.Fetch(parent, absl::Now() + absl::Seconds(10), request, response);
  }

  static kgstore::testing::ScratchDir* scratch_;
  static kgstore::KgStoreServer* server_;
};

kgstore::testing::ScratchDir* ShortestPathEvidenceTest::scratch_ = nullptr;
kgstore::KgStoreServer* ShortestPathEvidenceTest::server_ = nullptr;

TEST_F(ShortestPathEvidenceTest, PathTriplesComeFirstThenTheNeighbourhood) {
  ASSERT_NE(server_, nullptr);
  pb::RetrieveResponse response;
  ASSERT_OK(Fetch({kMetformin, kPioglitazone}, 100, &response));
  ASSERT_GE(response.triples_size(), 3);
  // metformin -treats-> diabetes <-treats- pioglitazone: the one shortest path (length 2).
  const pb::EvidenceTriple& first = response.triples(0);
  EXPECT_EQ(first.head().name(), "Metformin");
  EXPECT_EQ(first.head().external_id(), "DrugBank:DB00331");
  EXPECT_EQ(first.relation(), "treats");
  EXPECT_EQ(first.relation_description(), "the drug is indicated for the disease");
  EXPECT_EQ(first.tail().name(), "type 2 diabetes mellitus");
  EXPECT_THAT(first.score(), FloatNear(0.98f, 1e-6));
  EXPECT_EQ(first.hop(), 1u);
  EXPECT_EQ(response.triples(1).head().name(), "Pioglitazone");
  EXPECT_EQ(response.triples(1).tail().id(), static_cast<uint32_t>(kDiabetes));
  // The rest is the neighbourhood, scored 0.5 / hop, nearest hop first.
  bool binds = false;
  for (int i = 2; i < response.triples_size(); ++i) {
    const pb::EvidenceTriple& t = response.triples(i);
    EXPECT_THAT(t.score(), FloatNear(0.5f / static_cast<float>(t.hop()), 1e-6));
    if (i > 2) EXPECT_GE(t.hop(), response.triples(i - 1).hop());
    binds |= t.head().name() == "Pioglitazone" && t.relation() == "binds";
  }
  EXPECT_TRUE(binds);
  EXPECT_EQ(response.kg_version(), "1");
}

TEST_F(ShortestPathEvidenceTest, EachTripleAndPathOnceWhicheverWayItWasWalked) {
  ASSERT_NE(server_, nullptr);
  pb::RetrieveResponse response;
  ASSERT_OK(Fetch({kMetformin, kPioglitazone}, 100, &response));
  std::set<std::tuple<uint32_t, std::string, uint32_t>> seen;
  for (const pb::EvidenceTriple& t : response.triples()) {
    EXPECT_TRUE(seen.emplace(t.head().id(), t.relation(), t.tail().id()).second) << t.DebugString();
  }
  ASSERT_EQ(response.paths_size(), 1);
  const pb::ReasoningPath& path = response.paths(0);
  EXPECT_THAT(path.triple_indices(), ElementsAre(0u, 1u));
  EXPECT_THAT(path.reversed(), ElementsAre(false, true));
  EXPECT_THAT(path.score(), FloatNear(0.98f, 1e-6));
  EXPECT_EQ(path.text(), "Metformin -[treats]-> type 2 diabetes mellitus <-[treats]- Pioglitazone");
}

TEST_F(ShortestPathEvidenceTest, TopKCapsTheEvidence) {
  ASSERT_NE(server_, nullptr);
  pb::RetrieveResponse response;
  ASSERT_OK(Fetch({kMetformin, kPioglitazone}, 1, &response));
  ASSERT_EQ(response.triples_size(), 1);
  EXPECT_EQ(response.triples(0).head().name(), "Metformin");
  EXPECT_EQ(response.paths_size(), 0);  // the path's second triple did not fit
}

TEST_F(ShortestPathEvidenceTest, OneTopicGetsItsNeighbourhoodOnly) {
  ASSERT_NE(server_, nullptr);
  pb::RetrieveResponse response;
  ASSERT_OK(Fetch({kDiabetes}, 100, &response));
  ASSERT_GT(response.triples_size(), 0);
  EXPECT_EQ(response.paths_size(), 0);
  EXPECT_EQ(response.triples(0).hop(), 1u);
  EXPECT_THAT(response.triples(0).score(), FloatNear(0.5f, 1e-6));
}

TEST_F(ShortestPathEvidenceTest, UnknownTopicIsNotFound) {
  ASSERT_NE(server_, nullptr);
  pb::RetrieveResponse response;
  const absl::Status status = Fetch({kMetformin, 99999}, 100, &response);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ShortestPathEvidenceTest, KgStoreDownIsUnavailable) {
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  ShortestPathEvidence evidence(
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  pb::RetrieveRequest request;
  request.add_topic_entity_ids(kMetformin);
  request.add_topic_entity_ids(kPioglitazone);
  grpc::ServerContext parent;
  pb::RetrieveResponse response;
  const absl::Status status =
      evidence.Fetch(parent, absl::Now() + absl::Seconds(5), request, &response);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace ibgraphrag::gateway
