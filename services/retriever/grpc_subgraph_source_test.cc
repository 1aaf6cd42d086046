// GrpcSubgraphSource against a scripted kgstore: the relation-name cache follows KG swaps.
#include "services/retriever/grpc_subgraph_source.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::retriever {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;

// A kgstore whose KG (version and relation names) the test swaps; ExtractSubgraph refuses
// unknown allow_relations as the real one does (INVALID_ARGUMENT naming the field).
class SwappableKgStore final : public pb::KgStoreService::Service {
 public:
  void Swap(const std::string& version, std::vector<std::string> relations) {
    std::lock_guard<std::mutex> lock(mu_);
    version_ = version;
    relations_ = std::move(relations);
  }
  int stats_calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_calls_;
  }
  std::vector<pb::ExtractSubgraphRequest> extracts() {
    std::lock_guard<std::mutex> lock(mu_);
    return extracts_;
  }

 private:
  grpc::Status Stats(grpc::ServerContext*, const pb::StatsRequest*,
                     pb::StatsResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_calls_;
    response->set_kg_version(version_);
    for (const std::string& r : relations_) (*response->mutable_triples_by_relation())[r] = 1;
    return grpc::Status::OK;
  }
  grpc::Status ExtractSubgraph(grpc::ServerContext*, const pb::ExtractSubgraphRequest* request,
                               pb::ExtractSubgraphResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    extracts_.push_back(*request);
    const absl::flat_hash_set<std::string> known(relations_.begin(), relations_.end());
    for (const std::string& name : request->allow_relations()) {
      if (!known.contains(name)) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            absl::StrCat("allow_relations: unknown relation \"", name, "\""));
      }
    }
    response->set_kg_version(version_);
    return grpc::Status::OK;
  }

  std::mutex mu_;
  std::string version_;
  std::vector<std::string> relations_;
  int stats_calls_ = 0;
  std::vector<pb::ExtractSubgraphRequest> extracts_;
};

class GrpcSubgraphSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kg_.Swap("1", {"disease is a subtype of disease", "phenotype is a subtype of phenotype"});
    grpc::ServerBuilder builder;
    builder.RegisterService(&kg_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    source_ =
        std::make_unique<GrpcSubgraphSource>(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override { server_->Shutdown(); }

  const std::vector<std::string> is_a_ = {"disease is a subtype of disease",
                                          "phenotype is a subtype of phenotype"};
  SwappableKgStore kg_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GrpcSubgraphSource> source_;
};

TEST_F(GrpcSubgraphSourceTest, AnExtractRefusedForARelationLostInASwapRetriesWithTheKnownOnes) {
  auto known = source_->KnownRelations(is_a_, absl::InfiniteFuture());
  ASSERT_OK(known);
  EXPECT_EQ(*known, is_a_);
  // The KG is swapped before any Extract sees the new version: the cache still has both names.
  kg_.Swap("2", {"disease is a subtype of disease"});
  known = source_->KnownRelations(is_a_, absl::InfiniteFuture());
  ASSERT_OK(known);
  SubgraphRequest request;
  request.seed_ids = {0};
  request.max_hops = 1;
  request.max_triples = 10;
  request.allow_relations = *known;
  auto sg = source_->Extract(request);
  ASSERT_OK(sg);
  EXPECT_EQ(sg->kg_version, "2");
  const std::vector<pb::ExtractSubgraphRequest> extracts = kg_.extracts();
  ASSERT_EQ(extracts.size(), 2u);
  EXPECT_THAT(extracts[1].allow_relations(), ElementsAre("disease is a subtype of disease"));
  EXPECT_EQ(kg_.stats_calls(), 2);
  // The refreshed cache answers the next walk with the new version's names.
  known = source_->KnownRelations(is_a_, absl::InfiniteFuture());
  ASSERT_OK(known);
  EXPECT_THAT(*known, ElementsAre("disease is a subtype of disease"));
  EXPECT_EQ(kg_.stats_calls(), 2);
}

TEST_F(GrpcSubgraphSourceTest, ARelationNoVersionHasStaysRefused) {
  SubgraphRequest request;
  request.seed_ids = {0};
  request.max_hops = 1;
  request.max_triples = 10;
  request.allow_relations = {"no such relation"};
  auto sg = source_->Extract(request);
  EXPECT_THAT(sg, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(kg_.extracts().size(), 1u);  // nothing known to retry with
}

TEST_F(GrpcSubgraphSourceTest, ANewVersionSeenByExtractRefreshesTheNames) {
  ASSERT_OK(source_->KnownRelations(is_a_, absl::InfiniteFuture()));
  kg_.Swap("2", {"phenotype is a subtype of phenotype"});
  SubgraphRequest request;
  request.seed_ids = {0};
  request.max_hops = 1;
  request.max_triples = 10;
  ASSERT_OK(source_->Extract(request));
  auto known = source_->KnownRelations(is_a_, absl::InfiniteFuture());
  ASSERT_OK(known);
  EXPECT_THAT(*known, ElementsAre("phenotype is a subtype of phenotype"));
  EXPECT_EQ(kg_.stats_calls(), 2);
}

}  // namespace
}  // namespace ibgraphrag::retriever
