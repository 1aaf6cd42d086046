// Integration test: builds the embedded KG from the real data with `ibgr kg build`, starts the real
// kgstore binary on loopback and talks to it over gRPC.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util/kgstore_client.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {
namespace {

using ::ibgraphrag::common::test_util::MakeTempDir;

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

class KgStoreIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(MakeTempDir("kgstore-it"));
    auto rc = RunToCompletion(
        {BinDir() + "/ibgr", "kg", "build", "--base=" + *dir_ + "/art", "--data_dir=" + DataDir()},
        *dir_ + "/build.log", absl::Seconds(240));
    ASSERT_OK(rc);
    ASSERT_EQ(*rc, 0) << "ibgr kg build failed; see " << *dir_ << "/build.log";
    auto p = Subprocess::Start({BinDir() + "/kgstore", "--base=" + *dir_ + "/art",
                                "--host=127.0.0.1", "--port=0", "--metrics_port=0"},
                               *dir_ + "/kgstore.log");
    ASSERT_OK(p);
    server_ = new Subprocess(std::move(*p));
    auto line = server_->WaitForLogLine("\"msg\":\"kgstore: ready\"", absl::Seconds(60));
    ASSERT_OK(line);
    auto j = nlohmann::json::parse(*line);
    port_ = j["port"].get<int>();
    metrics_port_ = j["metrics_port"].get<int>();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    stub_ = KgStub(port_);
  }

  pb::StatsResponse Stats() {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::StatsResponse stats;
    EXPECT_OK(stub_->Stats(&ctx, pb::StatsRequest(), &stats));
    return stats;
  }

  static std::string* dir_;
  static Subprocess* server_;
  static int port_;
  static int metrics_port_;
  std::unique_ptr<pb::KgStoreService::Stub> stub_;
};

std::string* KgStoreIntegrationTest::dir_ = nullptr;
Subprocess* KgStoreIntegrationTest::server_ = nullptr;
int KgStoreIntegrationTest::port_ = 0;
int KgStoreIntegrationTest::metrics_port_ = 0;

TEST_F(KgStoreIntegrationTest, HealthReportsServingForServerAndService) {
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials()));
  for (const std::string service : {"", "ibgraphrag.v1.KgStoreService"}) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_OK(health->Check(&ctx, req, &resp));
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
}

TEST_F(KgStoreIntegrationTest, GetEntitiesResolvesCanonicalIdsAndXrefAliases) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::GetEntitiesRequest req;
  req.add_external_ids("DOID:9352");
  req.add_external_ids("UMLS:C0011860");  // DO's UMLS xref of type 2 diabetes mellitus
  pb::GetEntitiesResponse resp;
  ASSERT_OK(stub_->GetEntities(&ctx, req, &resp));
  ASSERT_EQ(resp.entities_size(), 2);
  EXPECT_EQ(resp.entities(0).name(), "type 2 diabetes mellitus");
  EXPECT_EQ(resp.entities(0).type(), "disease");
  EXPECT_EQ(resp.entities(1).id(), resp.entities(0).id());
  EXPECT_THAT(resp.entities(0).xrefs(), ::testing::Contains("UMLS:C0011860"));
  EXPECT_FALSE(resp.kg_version().empty());
}

TEST_F(KgStoreIntegrationTest, GetEntitiesUnknownIdsAreNotFoundAndListed) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::GetEntitiesRequest req;
  req.add_external_ids("DOID:0000000000");
  pb::GetEntitiesResponse resp;
  grpc::Status s = stub_->GetEntities(&ctx, req, &resp);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::NOT_FOUND, HasSubstr("DOID:0000000000")));
}

TEST_F(KgStoreIntegrationTest, NeighborsPagesCoverEveryEdgeOnce) {
  std::string token;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
  uint64_t total = 0;
  int pages = 0;
  do {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::NeighborsRequest req;
    req.set_external_id("DOID:9352");
    req.set_limit(7);
    req.set_page_token(token);
    pb::NeighborsResponse resp;
    ASSERT_OK(stub_->Neighbors(&ctx, req, &resp));
    total = resp.total();
    for (int i = 0; i < resp.triples().head_size(); ++i) {
      EXPECT_TRUE(
          seen.emplace(resp.triples().head(i), resp.triples().relation(i), resp.triples().tail(i))
              .second)
          << "edge returned twice";
    }
    EXPECT_FALSE(resp.relations().empty());
    token = resp.next_page_token();
    ++pages;
  } while (!token.empty() && pages < 1000);
  EXPECT_GT(total, 7u);
  EXPECT_EQ(seen.size(), total);
}

TEST_F(KgStoreIntegrationTest, ExtractSubgraphKeepsNearerHopsFirstWithinTheCap) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::ExtractSubgraphRequest req;
  req.add_seed_external_ids("DOID:9352");
  req.add_seed_external_ids("DrugBank:DB00331");
  req.set_max_hops(2);
  req.set_max_triples(500);
  req.set_entity_detail(pb::ENTITY_DETAIL_REFS);
  pb::ExtractSubgraphResponse resp;
  ASSERT_OK(stub_->ExtractSubgraph(&ctx, req, &resp));
  const auto& t = resp.triples();
  ASSERT_EQ(t.head_size(), 500);
  EXPECT_TRUE(resp.truncated());
  ASSERT_EQ(t.hop_size(), t.head_size());
  for (int i = 1; i < t.hop_size(); ++i) EXPECT_LE(t.hop(i - 1), t.hop(i)) << i;
  EXPECT_EQ(t.hop(0), 1u);
  EXPECT_EQ(t.hop(t.hop_size() - 1), 2u);
  EXPECT_EQ(resp.resolved_seed_ids_size(), 2);
  EXPECT_EQ(resp.entities_size(), resp.entity_hops_size());
  EXPECT_EQ(resp.entities(0).external_id(), "DOID:9352");
}

TEST_F(KgStoreIntegrationTest, ExtractSubgraphRejectsOutOfRangeArgumentsNamingTheField) {
  struct Case {
    std::function<void(pb::ExtractSubgraphRequest*)> mutate;
    grpc::StatusCode code;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](auto* r) { r->set_max_hops(5); }, grpc::StatusCode::INVALID_ARGUMENT, "max_hops"},
      {[](auto* r) { r->set_max_triples(100001); }, grpc::StatusCode::INVALID_ARGUMENT,
       "max_triples"},
      {[](auto* r) { r->add_allow_relations("no such relation"); },
       grpc::StatusCode::INVALID_ARGUMENT, "allow_relations"},
      {[](auto* r) { r->add_seed_ids(999999999); }, grpc::StatusCode::NOT_FOUND, "seed_ids"},
      {[](auto* r) { r->clear_seed_external_ids(); }, grpc::StatusCode::INVALID_ARGUMENT, "seeds"},
  };
  for (const Case& c : cases) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::ExtractSubgraphRequest req;
    req.add_seed_external_ids("DOID:9352");
    c.mutate(&req);
    pb::ExtractSubgraphResponse resp;
    grpc::Status s = stub_->ExtractSubgraph(&ctx, req, &resp);
    EXPECT_THAT(s, StatusIs(c.code, HasSubstr(c.field))) << c.field;
  }
}

TEST_F(KgStoreIntegrationTest, ShortestPathsLinksMetforminToType2Diabetes) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::ShortestPathsRequest req;
  req.add_source_external_ids("DrugBank:DB00331");
  req.add_target_external_ids("DOID:9352");
  pb::ShortestPathsResponse resp;
  ASSERT_OK(stub_->ShortestPaths(&ctx, req, &resp));
  ASSERT_GE(resp.paths_size(), 1);
  ASSERT_EQ(resp.paths(0).steps_size(), 1);
  const auto& step = resp.paths(0).steps(0);
  std::string relation;
  for (const auto& r : resp.relations()) {
    if (r.id() == step.relation()) relation = r.name();
  }
  EXPECT_EQ(relation, "drug treats disease");
  EXPECT_FALSE(step.reversed());
}

TEST_F(KgStoreIntegrationTest, IngestIsAtomicAndIdempotentOnBatchId) {
  const uint64_t before = Stats().triples();
  pb::IngestRequest batch;
  batch.set_batch_id("it-batch-1");
  pb::Entity* e = batch.add_entities();
  e->set_external_id("TEST:drug-x");
  e->set_type("compound");
  e->set_name("drug x");
  pb::IngestTriple* t = batch.add_triples();
  t->set_head_external_id("TEST:drug-x");
  t->set_relation("drug treats disease");
  t->set_tail_external_id("DOID:9352");
  t->set_source("integration-test");
  pb::IngestResponse first;
  ASSERT_OK(IngestOne(stub_.get(), batch, &first));
  EXPECT_EQ(first.batches_applied(), 1u);
  EXPECT_EQ(first.triples_added(), 1u);
  EXPECT_EQ(Stats().triples(), before + 1);

  pb::IngestResponse again;
  ASSERT_OK(IngestOne(stub_.get(), batch, &again));
  EXPECT_EQ(again.batches_already_applied(), 1u);
  EXPECT_EQ(again.triples_added(), 0u);
  EXPECT_EQ(Stats().triples(), before + 1);

  // A batch with one bad triple writes nothing at all.
  pb::IngestRequest bad;
  bad.set_batch_id("it-batch-2");
  *bad.add_triples() = *t;
  bad.mutable_triples(0)->set_tail_external_id("DOID:9351");
  pb::IngestTriple* broken = bad.add_triples();
  broken->set_head_external_id("TEST:drug-x");
  broken->set_relation("drug treats disease");
  broken->set_tail_external_id("NOPE:unknown");
  pb::IngestResponse rejected;
  grpc::Status s = IngestOne(stub_.get(), bad, &rejected);
  EXPECT_THAT(s, Not(IsOk()));
  EXPECT_THAT(s.error_message(), HasSubstr("NOPE:unknown"));
  EXPECT_EQ(Stats().triples(), before + 1);
}

TEST_F(KgStoreIntegrationTest, StatsReportsCountsByTypeRelationAndSource) {
  pb::StatsResponse stats = Stats();
  EXPECT_GT(stats.entities(), 50000u);
  EXPECT_GT(stats.triples(), 500000u);
  EXPECT_GT(stats.entities_by_type().at("disease"), 10000u);
  EXPECT_GT(stats.triples_by_relation().at("drug treats disease"), 500u);
  EXPECT_GE(stats.sources_size(), 10);
  for (const auto& source : stats.sources()) EXPECT_EQ(source.sha256().size(), 64u);
}

TEST_F(KgStoreIntegrationTest, StatsCountTriplesBySourceAndLicence) {
  pb::StatsResponse stats = Stats();
  EXPECT_GT(stats.triples_by_source().at("hetionet"), 50000u);
  EXPECT_GT(stats.triples_by_license().at("CC0"), 50000u);
  EXPECT_GT(stats.triples_by_license().at("ODbL 1.0"), 1000u);  // DisGeNET
  uint64_t by_source = 0;
  for (const auto& [name, n] : stats.triples_by_source()) by_source += n;
  EXPECT_GE(by_source, stats.triples());  // every triple has at least one source
  bool hetionet_cc0 = false;
  for (const pb::SourceRef& s : stats.source_refs()) {
    hetionet_cc0 |= s.name() == "hetionet" && s.license() == "CC0";
  }
  EXPECT_TRUE(hetionet_cc0);
  EXPECT_EQ(stats.license_filter(), "");
}

TEST_F(KgStoreIntegrationTest, SubgraphTriplesCarryProvenanceAndTripleProvenanceAgrees) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::ExtractSubgraphRequest req;
  req.add_seed_external_ids("DOID:9352");
  req.set_max_hops(1);
  req.set_max_triples(200);
  req.set_include_sources(true);
  req.set_include_annotations(true);
  pb::ExtractSubgraphResponse resp;
  ASSERT_OK(stub_->ExtractSubgraph(&ctx, req, &resp));
  const pb::TripleColumns& t = resp.triples();
  const int n = t.head_size();
  ASSERT_GT(n, 0);
  ASSERT_EQ(t.provenance_size(), n);
  ASSERT_EQ(t.source_size(), n);
  ASSERT_EQ(t.score_size(), n);
  ASSERT_EQ(t.note_size(), n);
  ASSERT_EQ(resp.source_refs_size(), resp.sources_size());
  for (int i = 0; i < n; ++i) {
    ASSERT_LT(t.provenance(i), static_cast<uint32_t>(resp.provenance_size()));
    const pb::ProvenanceGroup& group = resp.provenance(t.provenance(i));
    ASSERT_GT(group.sources_size(), 0);
    EXPECT_EQ(t.source(i), group.sources(0));
    for (uint32_t s : group.sources()) EXPECT_LT(s, static_cast<uint32_t>(resp.sources_size()));
  }

  // The same triples looked up one by one, plus one the KG does not have.
  grpc::ClientContext ctx2;
  SetDeadline(&ctx2);
  pb::GetTripleProvenanceRequest preq;
  *preq.mutable_triples()->mutable_head() = t.head();
  *preq.mutable_triples()->mutable_relation() = t.relation();
  *preq.mutable_triples()->mutable_tail() = t.tail();
  preq.mutable_triples()->add_head(t.head(0));
  preq.mutable_triples()->add_relation(t.relation(0));
  preq.mutable_triples()->add_tail(t.head(0));  // a self-loop is never stored
  pb::GetTripleProvenanceResponse presp;
  ASSERT_OK(stub_->GetTripleProvenance(&ctx2, preq, &presp));
  ASSERT_EQ(presp.triples().provenance_size(), n + 1);
  EXPECT_THAT(presp.missing(), ::testing::ElementsAre(static_cast<uint32_t>(n)));
  for (int i = 0; i < n; ++i) {
    auto names = [](const auto& response, uint32_t group) {
      std::set<std::string> out;
      for (uint32_t s : response.provenance(group).sources()) out.insert(response.sources(s));
      return out;
    };
    EXPECT_EQ(names(presp, presp.triples().provenance(i)), names(resp, t.provenance(i))) << i;
    EXPECT_EQ(presp.triples().note(i), t.note(i));
  }
  // The missing triple claims no source (it used to inherit group 0's).
  EXPECT_EQ(presp.provenance(presp.triples().provenance(n)).sources_size(), 0);
  EXPECT_EQ(presp.triples().note(n), "");
}

TEST_F(KgStoreIntegrationTest, GetTripleProvenanceRejectsRaggedAndOversizedRequests) {
  auto call = [&](const pb::GetTripleProvenanceRequest& req) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::GetTripleProvenanceResponse resp;
    return stub_->GetTripleProvenance(&ctx, req, &resp);
  };
  pb::GetTripleProvenanceRequest ragged;
  ragged.mutable_triples()->add_head(0);
  ragged.mutable_triples()->add_relation(0);
  grpc::Status status = call(ragged);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("lengths differ")));
  pb::GetTripleProvenanceRequest oversized;
  for (int i = 0; i <= 10'000; ++i) {
    oversized.mutable_triples()->add_head(0);
    oversized.mutable_triples()->add_relation(0);
    oversized.mutable_triples()->add_tail(1);
  }
  status = call(oversized);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("at most 10000")));
}

TEST_F(KgStoreIntegrationTest, MetricsEndpointPassesPromtool) {
  // One failing call so an error code label exists.
  {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::GetEntitiesRequest req;
    pb::GetEntitiesResponse resp;
    (void)stub_->GetEntities(&ctx, req, &resp);
  }
  const std::string body =
      ibgraphrag::common::test_util::HttpGet(metrics_port_, "/metrics").value_or("");
  EXPECT_THAT(body, HasSubstr("ibgr_kgstore_triples"));
  EXPECT_THAT(body, HasSubstr("code=\"INVALID_ARGUMENT\""));
  EXPECT_THAT(body, HasSubstr("ibgr_grpc_request_duration_seconds_bucket"));
  ASSERT_TRUE(common::test_util::ProgramInstalled("promtool", "prometheus"));
  const std::string path = *dir_ + "/metrics.txt";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fwrite(body.data(), 1, body.size(), f);
  fclose(f);
  EXPECT_EQ(
      system(("promtool check metrics < " + path + " > " + *dir_ + "/promtool.out 2>&1").c_str()),
      0)
      << "promtool rejected /metrics; see " << *dir_ << "/promtool.out";
}

TEST_F(KgStoreIntegrationTest, ReadOnlyReplicaServesTheSameSnapshotAndRefusesIngest) {
  // Also exercises --config: a short grace period keeps the SIGTERM check quick.
  const std::string config = *dir_ + "/replica.textproto";
  FILE* f = fopen(config.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("service_name: \"kgstore-replica\"\ntermination_grace_seconds: 0.2\n", f);
  fclose(f);
  auto p =
      Subprocess::Start({BinDir() + "/kgstore", "--base=" + *dir_ + "/art", "--read_only",
                         "--config=" + config, "--host=127.0.0.1", "--port=0", "--metrics_port=-1"},
                        *dir_ + "/replica.log");
  ASSERT_OK(p);
  auto port = p->WaitForReadyPort("kgstore", absl::Seconds(60));
  ASSERT_OK(port);
  auto replica = KgStub(*port);
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::StatsResponse stats;
  ASSERT_OK(replica->Stats(&ctx, pb::StatsRequest(), &stats));
  EXPECT_TRUE(stats.read_only());
  EXPECT_GT(stats.triples(), 500000u);
  pb::IngestRequest batch;
  batch.set_batch_id("replica-batch");
  pb::IngestResponse resp;
  EXPECT_THAT(IngestOne(replica.get(), batch, &resp),
              StatusIs(grpc::StatusCode::FAILED_PRECONDITION));
  // SIGTERM drains and exits cleanly.
  auto status = p->Stop(SIGTERM, absl::Seconds(30));
  ASSERT_OK(status);
  EXPECT_EQ(p->exit_code(), 0) << p->ReadLog();
}

TEST_F(KgStoreIntegrationTest, MissingSnapshotExitsNonZeroWithAClearMessage) {
  const std::string empty = MakeTempDir("kgstore-empty");
  auto p = Subprocess::Start({BinDir() + "/kgstore", "--base=" + empty, "--host=127.0.0.1",
                              "--port=0", "--metrics_port=-1"},
                             empty + "/kgstore.log");
  ASSERT_OK(p);
  for (int i = 0; i < 500 && p->Running(); ++i) usleep(20000);
  EXPECT_FALSE(p->Running());
  EXPECT_EQ(p->exit_code(), 1);
  EXPECT_THAT(p->ReadLog(), HasSubstr("NOT_FOUND"));
}

}  // namespace
}  // namespace ibgraphrag::testing
