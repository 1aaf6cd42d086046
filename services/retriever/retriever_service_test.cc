// RetrieverServer + RetrieverServiceImpl over gRPC on loopback, with the KG in process.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/interned_evidence.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/retriever_server.h"
#include "services/retriever/retriever_service_impl.h"
#include "services/retriever/retriever_test_util.h"

namespace ibgraphrag::retriever {
namespace {

namespace pb = ::ibgraphrag::v1;
namespace kt = kgstore::testing;
using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

RetrieverServer::Options ServerOptions(const std::string& base) {
  RetrieverServer::Options o;
  o.server.listen_host = "127.0.0.1";
  o.server.port = 0;
  o.server.metrics_port = -1;
  o.server.termination_grace_period = absl::ZeroDuration();
  o.base_path = base;
  o.device = "cpu";
  o.embedder = HashNgramEmbedder(32).value();
  return o;
}

void WriteKg(const std::string& base) {
  kgstore::SnapshotManifestInfo info;
  info.version = 1;
  ASSERT_OK(kgstore::KgStore::WriteSnapshot(kt::SmallKg(), info, kgstore::SnapshotDir(base, 1)));
}

// A retriever serving SmallKg and a test model published under `base`.
absl::StatusOr<std::unique_ptr<RetrieverServer>> StartServedSmallKg(const std::string& base) {
  WriteKg(base);
  testing::PublishTestVersion(base, kt::SmallKg());
  return RetrieverServer::BuildAndStart(ServerOptions(base));
}

std::unique_ptr<pb::RetrieverService::Stub> Stub(int port) {
  return pb::RetrieverService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
}

// The question most tests ask: which drug treats type 2 diabetes (DOID:9352), top 5.
pb::RetrieveRequest DiabetesRequest() {
  pb::RetrieveRequest req;
  req.set_question("Which drug treats type 2 diabetes mellitus?");
  req.add_topic_external_ids("DOID:9352");
  req.set_top_k(5);
  return req;
}

void SetDeadline(grpc::ClientContext* ctx, int ms = 10000) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

grpc::health::v1::HealthCheckResponse::ServingStatus Health(int port) {
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(kRetrieverServiceName);
  grpc::health::v1::HealthCheckResponse resp;
  EXPECT_OK(health->Check(&ctx, req, &resp));
  return resp.status();
}

TEST(RetrieverServiceTest, RetrieveAndScoreTriplesOverGrpc) {
  kt::ScratchDir dir;
  auto server = StartServedSmallKg(dir.path());
  ASSERT_OK(server);
  EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::SERVING);
  auto stub = Stub((*server)->port());

  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  const pb::RetrieveRequest req = DiabetesRequest();
  pb::RetrieveResponse resp;
  grpc::Status s = stub->Retrieve(&ctx, req, &resp);
  ASSERT_OK(s);
  ASSERT_EQ(resp.triples_size(), 5);
  EXPECT_FALSE(resp.triples(0).head().name().empty());
  EXPECT_FALSE(resp.triples(0).relation().empty());
  EXPECT_FALSE(resp.triples(0).relation_description().empty());
  EXPECT_EQ(resp.subgraph_triples(), 10u);
  EXPECT_EQ(resp.model_version(), "1");
  EXPECT_EQ(resp.kg_version(), "1");
  EXPECT_EQ(resp.mode(), pb::SCORING_MODE_IBRP);
  EXPECT_EQ(resp.device(), "cpu");
  EXPECT_GT(resp.paths_size(), 0);
  EXPECT_GT(resp.timings_size(), 0);
  EXPECT_EQ(resp.topic_entity_ids(0), kt::kDiabetes);
  for (const pb::EvidenceTriple& e : resp.triples()) {
    ASSERT_EQ(e.sources_size(), 1);  // SmallKg asserts each fact once
    EXPECT_EQ(e.source(), e.sources(0));
    EXPECT_EQ(e.licenses_size(), 1);
    EXPECT_FALSE(e.has_source_score());
  }

  grpc::ClientContext ctx2;
  SetDeadline(&ctx2);
  pb::ScoreTriplesRequest sreq;
  sreq.set_question("Which drug treats type 2 diabetes mellitus?");
  sreq.add_topic_entity_ids(kt::kDiabetes);
  pb::TripleRef* t = sreq.add_triples();
  t->set_head(kt::kMetformin);
  t->set_relation(kt::kTreats);
  t->set_tail(kt::kDiabetes);
  pb::ScoreTriplesResponse sresp;
  ASSERT_OK(stub->ScoreTriples(&ctx2, sreq, &sresp));
  ASSERT_EQ(sresp.scores_size(), 1);
  EXPECT_GT(sresp.scores(0), 0.0f);
}

TEST(RetrieverServiceTest, BadRequestsGetPreciseCodes) {
  kt::ScratchDir dir;
  auto server = StartServedSmallKg(dir.path());
  ASSERT_OK(server);
  auto stub = Stub((*server)->port());
  auto call = [&](const pb::RetrieveRequest& req) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::RetrieveResponse resp;
    return stub->Retrieve(&ctx, req, &resp);
  };
  pb::RetrieveRequest req;
  req.set_question("q");
  grpc::Status s = call(req);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("topic_entity_ids")));
  req.add_topic_entity_ids(kt::kDiabetes);
  req.set_top_k(5000);
  s = call(req);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("top_k")));
  req.set_top_k(10);
  req.set_max_hops(9);
  s = call(req);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("max_hops")));
  req.set_max_hops(0);
  req.add_topic_entity_ids(4242);
  s = call(req);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::NOT_FOUND, HasSubstr("4242")));
}

TEST(RetrieverServiceTest, RetrieveOnItsArenaEqualsTheDirectCall) {
  // Over gRPC the request and response live on one arena per call (RunTypedUnary); in process
  // (RetrieveDirect, the all-in-one) on the caller's heap. Same response either way, and a
  // question that is not UTF-8 is refused naming the field rather than as INTERNAL.
  kt::ScratchDir dir;
  auto server = StartServedSmallKg(dir.path());
  ASSERT_OK(server);
  auto stub = Stub((*server)->port());
  RetrieverServiceImpl direct(&(*server)->retriever());
  pb::RetrieveRequest req = DiabetesRequest();
  req.set_top_k(10);
  for (int call = 0; call < 3; ++call) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::RetrieveResponse over_grpc;
    ASSERT_OK(stub->Retrieve(&ctx, req, &over_grpc));
    pb::RetrieveResponse in_process;
    ASSERT_OK(direct.RetrieveDirect(common::DirectCall{}, req, &in_process));
    ASSERT_GT(over_grpc.triples_size(), 0);
    over_grpc.clear_timings();
    in_process.clear_timings();
    EXPECT_EQ(over_grpc.SerializeAsString(), in_process.SerializeAsString())
        << over_grpc.DebugString() << "\n---\n"
        << in_process.DebugString();
  }

  req.set_question("Which drug treats \xFF diabetes?");
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::RetrieveResponse resp;
  EXPECT_THAT(stub->Retrieve(&ctx, req, &resp),
              StatusIs(grpc::StatusCode::INVALID_ARGUMENT, "question: not valid UTF-8"));
}

TEST(RetrieverServiceTest, MissingOrCorruptModelStaysNotServing) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  {
    auto server = RetrieverServer::BuildAndStart(ServerOptions(dir.path()));
    ASSERT_OK(server);
    EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
    EXPECT_THAT((*server)->model_error(), HasSubstr("no retriever model"));
  }
  testing::PublishTestVersion(dir.path(), kt::SmallKg());
  std::filesystem::resize_file(RetrieverVersionDir(dir.path(), 1) + "/model.bin", 100);
  auto server = RetrieverServer::BuildAndStart(ServerOptions(dir.path()));
  ASSERT_OK(server);
  EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::RetrieveRequest req;
  req.set_question("q");
  req.add_topic_entity_ids(kt::kDiabetes);
  pb::RetrieveResponse resp;
  grpc::Status s = Stub((*server)->port())->Retrieve(&ctx, req, &resp);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::FAILED_PRECONDITION, HasSubstr("model.bin")));
}

TEST(RetrieverServiceTest, ModelFromAnOlderFormatStaysNotServing) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTestVersion(dir.path(), kt::SmallKg());
  testing::RewriteManifestFormat(RetrieverVersionDir(dir.path(), 1), 1);
  auto server = RetrieverServer::BuildAndStart(ServerOptions(dir.path()));
  ASSERT_OK(server);
  EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_THAT((*server)->model_error(), HasSubstr("format_version 1"));
  EXPECT_THAT((*server)->model_error(), HasSubstr("retrain"));
}

// Issue 11: the retriever follows new model versions while it serves. Four clients call
// Retrieve without pause while versions 2 (broken), 3 (good, other hidden width) and 4 are
// published; every call must succeed, the broken version must be skipped, and the server must
// end up answering with version 4.
TEST(RetrieverServiceTest, HotSwapsModelVersionsUnderLoad) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTestVersion(dir.path(), kt::SmallKg(), 32, 16, /*version=*/1);
  RetrieverServer::Options options = ServerOptions(dir.path());
  options.watch_interval = absl::Milliseconds(20);
  auto server = RetrieverServer::BuildAndStart(options);
  ASSERT_OK(server);
  const int port = (*server)->port();

  std::atomic<bool> stop{false};
  std::atomic<int> calls{0}, failures{0};
  std::mutex seen_mu;
  std::set<std::string> versions_seen;
  std::string first_failure;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      auto stub = Stub(port);
      while (!stop.load()) {
        grpc::ClientContext ctx;
        SetDeadline(&ctx);
        pb::RetrieveRequest req;
        req.set_question("Which drug treats type 2 diabetes mellitus?");
        req.add_topic_external_ids("DOID:9352");
        req.set_top_k(3);
        pb::RetrieveResponse resp;
        const grpc::Status s = stub->Retrieve(&ctx, req, &resp);
        calls.fetch_add(1);
        std::lock_guard<std::mutex> lock(seen_mu);
        if (s.ok()) {
          versions_seen.insert(resp.model_version());
        } else if (failures.fetch_add(1) == 0) {
          first_failure = s.error_message();
        }
      }
    });
  }
  auto wait_for_version = [&](const std::string& v) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(seen_mu);
        if (versions_seen.count(v) > 0) return true;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  };
  EXPECT_TRUE(wait_for_version("1"));
  // Version 2 appears already broken (made aside, renamed into place): its model.bin no longer
  // matches the manifest's hash.
  const std::string broken = RetrieverVersionDir(dir.path(), 2) + ".tmp-test";
  std::filesystem::copy(RetrieverVersionDir(dir.path(), 1), broken);
  std::filesystem::resize_file(broken + "/model.bin", 100);
  std::filesystem::rename(broken, RetrieverVersionDir(dir.path(), 2));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_THAT((*server)->model_error(), HasSubstr("model.bin"));
  testing::PublishTestVersion(dir.path(), kt::SmallKg(), 32, 24, /*version=*/3);
  EXPECT_TRUE(wait_for_version("3"));
  auto version_gauge = (*server)->runner().metrics().GetGauge("ibgr_retriever_model_version", "");
  ASSERT_OK(version_gauge);
  // Set by the swap listener right after the swap a request can already see: allow a moment.
  for (int i = 0; i < 200 && (*version_gauge)->Value() != 3.0; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ((*version_gauge)->Value(), 3.0) << "the gauge follows the served version";
  testing::PublishTestVersion(dir.path(), kt::SmallKg(), 32, 8, /*version=*/4);
  EXPECT_TRUE(wait_for_version("4"));
  const int calls_at_four = calls.load();
  absl::SleepFor(absl::Milliseconds(100));
  stop.store(true);
  for (std::thread& t : clients) t.join();

  EXPECT_EQ(failures.load(), 0) << first_failure;
  EXPECT_GT(calls.load(), calls_at_four);  // still serving after the last swap
  EXPECT_EQ(versions_seen.count("2"), 0u);
  EXPECT_EQ((*server)->retriever().model()->version(), "4");
  EXPECT_EQ((*server)->model_error(), "");
  EXPECT_EQ(Health(port), grpc::health::v1::HealthCheckResponse::SERVING);
}

// Without --kgstore the retriever reads its own read-only KG replica (here under a base of its
// own, as `ibgr-ops sync-kg` keeps one on Kubernetes) and follows it to newer snapshots.
TEST(RetrieverServiceTest, KgReplicaServesItsNewestSnapshotAndSwapsToNewerOnes) {
  kt::ScratchDir dir, replica;
  testing::PublishTestVersion(dir.path(), kt::SmallKg());
  kgstore::SnapshotManifestInfo info;
  info.version = 1;
  ASSERT_OK(kgstore::KgStore::WriteSnapshot(kt::SmallKg(), info,
                                            kgstore::SnapshotDir(replica.path(), 1)));
  RetrieverServer::Options options = ServerOptions(dir.path());
  options.kg_base_path = replica.path();
  auto server = RetrieverServer::BuildAndStart(options);
  ASSERT_OK(server);
  auto retrieve_from = [](int port) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pb::RetrieveResponse resp;
    EXPECT_OK(Stub(port)->Retrieve(&ctx, DiabetesRequest(), &resp));
    return resp;
  };
  pb::RetrieveResponse first = retrieve_from((*server)->port());
  EXPECT_EQ(first.kg_version(), "1");
  EXPECT_EQ(first.subgraph_triples(), 10u);
  EXPECT_THAT((*server)->ReloadKgIfNewer(), IsOk());
  EXPECT_FALSE(*(*server)->ReloadKgIfNewer());

  info.version = 2;
  ASSERT_OK(kgstore::KgStore::WriteSnapshot(kt::SmallKg(), info,
                                            kgstore::SnapshotDir(replica.path(), 2)));
  auto swapped = (*server)->ReloadKgIfNewer();
  ASSERT_OK(swapped);
  EXPECT_TRUE(*swapped);
  pb::RetrieveResponse second = retrieve_from((*server)->port());
  EXPECT_EQ(second.kg_version(), "2");
  // Rolled back: a replica pinned to version 1 serves it though 2 is newer.
  RetrieverServer::Options pinned = options;
  pinned.kg_pinned_version = 1;
  auto pinned_server = RetrieverServer::BuildAndStart(pinned);
  ASSERT_OK(pinned_server);
  EXPECT_EQ(retrieve_from((*pinned_server)->port()).kg_version(), "1");
  EXPECT_FALSE(*(*pinned_server)->ReloadKgIfNewer());
  ASSERT_EQ(second.triples_size(), first.triples_size());
  for (int i = 0; i < first.triples_size(); ++i) {
    EXPECT_EQ(second.triples(i).head().id(), first.triples(i).head().id());
    EXPECT_EQ(second.triples(i).score(), first.triples(i).score());
  }
}

// The CPU build (no scoring backend) refuses a GPU at start, naming the binary that has one.
TEST(RetrieverServiceTest, CudaDeviceWithoutABackendFailsToStartNamingRetrieverTorch) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTestVersion(dir.path(), kt::SmallKg());
  RetrieverServer::Options options = ServerOptions(dir.path());
  options.device = "cuda:0";
  EXPECT_THAT(RetrieverServer::BuildAndStart(options),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("retriever_torch")));
}

TEST(RetrieverServiceTest, KgReplicaWithoutASnapshotFailsToStartNamingIt) {
  kt::ScratchDir dir, replica;
  testing::PublishTestVersion(dir.path(), kt::SmallKg());
  RetrieverServer::Options options = ServerOptions(dir.path());
  options.kg_base_path = replica.path();
  EXPECT_THAT(RetrieverServer::BuildAndStart(options),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(replica.path())));
}

TEST(RetrieverServiceTest, KgStoreDownGivesUnavailableWithinTheDeadline) {
  kt::ScratchDir dir;
  testing::PublishTestVersion(dir.path(), kt::SmallKg());
  RetrieverServer::Options options = ServerOptions(dir.path());
  options.kgstore_address = "127.0.0.1:1";  // nothing listens on port 1
  auto server = RetrieverServer::BuildAndStart(options);
  ASSERT_OK(server);
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 3000);
  pb::RetrieveRequest req;
  req.set_question("q");
  req.add_topic_entity_ids(kt::kDiabetes);
  pb::RetrieveResponse resp;
  grpc::Status s = Stub((*server)->port())->Retrieve(&ctx, req, &resp);
  EXPECT_THAT(s, StatusIs(grpc::StatusCode::UNAVAILABLE, HasSubstr("kgstore")));
}

// Issue 13: one version can hold the residual scorer and the paper's plain MLP; a request picks
// one (UNSPECIFIED = the version's default), and the response says which ranked.
pb::RetrieveRequest DiabetesRequest(pb::ScorerVariant variant) {
  pb::RetrieveRequest req;
  req.set_question("Which drug treats type 2 diabetes mellitus?");
  req.add_topic_external_ids("DOID:9352");
  req.set_top_k(10);
  req.set_scorer_variant(variant);
  return req;
}

absl::StatusOr<pb::RetrieveResponse> CallRetrieve(pb::RetrieverService::Stub& stub,
                                                  const pb::RetrieveRequest& req) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  pb::RetrieveResponse resp;
  const grpc::Status s = stub.Retrieve(&ctx, req, &resp);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }
  return resp;
}

std::vector<float> Scores(const pb::RetrieveResponse& resp) {
  std::vector<float> out;
  for (const pb::EvidenceTriple& t : resp.triples()) out.push_back(t.score());
  return out;
}

TEST(RetrieverServiceTest, InternedEvidenceExpandsToTheSameTriples) {
  // EVIDENCE_LAYOUT_INTERNED (what the gateway asks for over the network) carries each entity,
  // relation and source once; expanded, it is exactly the default layout's evidence.
  kt::ScratchDir dir;
  auto server = StartServedSmallKg(dir.path());
  ASSERT_OK(server);
  auto stub = Stub((*server)->port());
  pb::RetrieveRequest req = DiabetesRequest();
  req.set_top_k(20);
  auto full = CallRetrieve(*stub, req);
  req.set_evidence_layout(pb::EVIDENCE_LAYOUT_INTERNED);
  auto interned = CallRetrieve(*stub, req);
  ASSERT_OK(full);
  ASSERT_OK(interned);
  ASSERT_GT(full->triples_size(), 5);
  EXPECT_FALSE(full->has_interned_evidence());
  EXPECT_EQ(interned->triples_size(), 0);
  const pb::InternedEvidence& evidence = interned->interned_evidence();
  ASSERT_EQ(evidence.triples_size(), full->triples_size());
  // Every entity once: fewer than the two slots per triple (the topic is in many of them).
  EXPECT_LT(evidence.entities_size(), 2 * evidence.triples_size());
  EXPECT_LT(evidence.relations_size(), evidence.triples_size());
  EXPECT_GT(evidence.sources_size(), 0);

  pb::RetrieveResponse expanded = *interned;
  ASSERT_OK(common::ExpandInternedEvidence(evidence, expanded.mutable_triples()));
  expanded.clear_interned_evidence();
  expanded.clear_timings();
  full->clear_timings();
  EXPECT_EQ(expanded.SerializeAsString(), full->SerializeAsString())
      << expanded.DebugString() << "\n---\n"
      << full->DebugString();
}

TEST(RetrieverServiceTest, ServesEitherScorerVariantPerRequest) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTwoVariantTestVersion(dir.path(), kt::SmallKg());
  auto server = RetrieverServer::BuildAndStart(ServerOptions(dir.path()));
  ASSERT_OK(server);
  EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::SERVING);
  auto stub = Stub((*server)->port());

  auto by_default = CallRetrieve(*stub, DiabetesRequest(pb::SCORER_VARIANT_UNSPECIFIED));
  auto residual = CallRetrieve(*stub, DiabetesRequest(pb::SCORER_VARIANT_RESIDUAL));
  auto plain = CallRetrieve(*stub, DiabetesRequest(pb::SCORER_VARIANT_PLAIN));
  ASSERT_OK(by_default);
  ASSERT_OK(residual);
  ASSERT_OK(plain);
  EXPECT_EQ(by_default->scorer_variant(), pb::SCORER_VARIANT_RESIDUAL);
  EXPECT_EQ(residual->scorer_variant(), pb::SCORER_VARIANT_RESIDUAL);
  EXPECT_EQ(plain->scorer_variant(), pb::SCORER_VARIANT_PLAIN);
  EXPECT_EQ(Scores(*by_default), Scores(*residual));
  EXPECT_NE(Scores(*plain), Scores(*residual)) << "the plain MLP is another scorer";

  pb::RetrieveRequest sp = DiabetesRequest(pb::SCORER_VARIANT_PLAIN);
  sp.set_mode(pb::SCORING_MODE_SHORTEST_PATH);  // the variant only matters to IBRP
  auto shortest = CallRetrieve(*stub, sp);
  ASSERT_OK(shortest);
  EXPECT_EQ(shortest->scorer_variant(), pb::SCORER_VARIANT_UNSPECIFIED);

  auto counter = (*server)->runner().metrics().GetCounter("ibgr_retriever_ibrp_requests_total", "",
                                                          {{"variant", "plain"}});
  ASSERT_OK(counter);
  EXPECT_EQ((*counter)->Value(), 1.0);
}

TEST(RetrieverServiceTest, MissingOrUnknownScorerVariantGetsPreciseCodes) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTestVersion(dir.path(), kt::SmallKg(), 32, 16, 1, /*residual=*/true);
  auto server = RetrieverServer::BuildAndStart(ServerOptions(dir.path()));
  ASSERT_OK(server);
  auto stub = Stub((*server)->port());
  auto plain = CallRetrieve(*stub, DiabetesRequest(pb::SCORER_VARIANT_PLAIN));
  EXPECT_THAT(plain,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::AllOf(HasSubstr("scorer_variant"), HasSubstr("no plain scorer"),
                                        HasSubstr("holds residual"))));
  auto unknown = CallRetrieve(*stub, DiabetesRequest(static_cast<pb::ScorerVariant>(7)));
  EXPECT_THAT(unknown, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("scorer_variant: unknown value 7")));
}

TEST(RetrieverServiceTest, ScorerFlagSetsTheDefaultVariantAndRefusesVersionsWithoutIt) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTestVersion(dir.path(), kt::SmallKg(), 32, 16, 1, /*residual=*/true);
  RetrieverServer::Options options = ServerOptions(dir.path());
  options.default_variant = ScorerVariant::kPlain;
  {
    auto server = RetrieverServer::BuildAndStart(options);
    ASSERT_OK(server);
    EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
    EXPECT_THAT((*server)->model_error(), HasSubstr("no plain scorer"));
    EXPECT_THAT((*server)->model_error(), HasSubstr("FAILED_PRECONDITION"));
  }
  // Hot swap: a version holding both variants is picked up and requests get the plain one.
  options.watch_interval = absl::Milliseconds(20);
  auto server = RetrieverServer::BuildAndStart(options);
  ASSERT_OK(server);
  testing::PublishTwoVariantTestVersion(dir.path(), kt::SmallKg(), /*version=*/2);
  for (int i = 0; i < 500 && !(*server)->model_error().empty(); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::SERVING);
  auto resp =
      CallRetrieve(*Stub((*server)->port()), DiabetesRequest(pb::SCORER_VARIANT_UNSPECIFIED));
  ASSERT_OK(resp);
  EXPECT_EQ(resp->model_version(), "2");
  EXPECT_EQ(resp->scorer_variant(), pb::SCORER_VARIANT_PLAIN);
}

// max_candidates 0 means the cap the model was trained with, so serving sees what training saw.
TEST(RetrieverServiceTest, ZeroMaxCandidatesUsesTheModelsTrainedCap) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTwoVariantTestVersion(dir.path(), kt::SmallKg(), 1, /*max_candidates=*/4);
  auto server = RetrieverServer::BuildAndStart(ServerOptions(dir.path()));
  ASSERT_OK(server);
  auto stub = Stub((*server)->port());
  auto capped = CallRetrieve(*stub, DiabetesRequest(pb::SCORER_VARIANT_UNSPECIFIED));
  ASSERT_OK(capped);
  EXPECT_EQ(capped->max_candidates(), 4u);
  EXPECT_LE(capped->subgraph_triples(), 4u);
  pb::RetrieveRequest wide = DiabetesRequest(pb::SCORER_VARIANT_UNSPECIFIED);
  wide.set_max_candidates(100);
  auto explicit_cap = CallRetrieve(*stub, wide);
  ASSERT_OK(explicit_cap);
  EXPECT_EQ(explicit_cap->max_candidates(), 100u);
  EXPECT_EQ(explicit_cap->subgraph_triples(), 10u);
}

TEST(RetrieverServiceTest, ShortestPathWithoutAModelUsesTheDefaultCap) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  auto server = RetrieverServer::BuildAndStart(ServerOptions(dir.path()));
  ASSERT_OK(server);
  pb::RetrieveRequest req = DiabetesRequest(pb::SCORER_VARIANT_UNSPECIFIED);
  req.set_mode(pb::SCORING_MODE_SHORTEST_PATH);
  auto resp = CallRetrieve(*Stub((*server)->port()), req);
  ASSERT_OK(resp);
  EXPECT_EQ(resp->max_candidates(), static_cast<uint32_t>(kDefaultMaxCandidates));
}

// A server given an encoder (--encoder) refuses a model built with another, naming both ids.
TEST(RetrieverServiceTest, EncoderMismatchIsFailedPreconditionNamingBothIds) {
  kt::ScratchDir dir;
  WriteKg(dir.path());
  testing::PublishTestVersion(dir.path(), kt::SmallKg());  // hash-ngram-v1-d32
  RetrieverServer::Options options = ServerOptions(dir.path());
  options.embedder = EmbedderForSpelling(dir.path(), "hash-ngram", "--encoder").value();
  auto server = RetrieverServer::BuildAndStart(options);
  ASSERT_OK(server);
  EXPECT_EQ(Health((*server)->port()), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  const std::string error = (*server)->model_error();
  EXPECT_THAT(error, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(error, HasSubstr("hash-ngram-v1-d32"));
  EXPECT_THAT(error, HasSubstr("hash-ngram-v1-d256"));
  auto resp =
      CallRetrieve(*Stub((*server)->port()), DiabetesRequest(pb::SCORER_VARIANT_UNSPECIFIED));
  EXPECT_THAT(resp,
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("hash-ngram-v1-d32")));
}

TEST(RetrieverServiceTest, EncoderFlagSpellingsAreCheckedNamingTheFlag) {
  kt::ScratchDir dir;
  auto unknown = EmbedderForSpelling(dir.path(), "word2vec-42", "--encoder");
  EXPECT_THAT(unknown, Not(IsOk()));
  EXPECT_THAT(unknown.status().message(), HasSubstr("--encoder"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("word2vec-42"));
  auto trained = EmbedderForSpelling(dir.path(), "trained", "--encoder");
  EXPECT_THAT(trained, StatusIs(absl::StatusCode::kNotFound, HasSubstr("--encoder")));
  auto by_id = EmbedderForSpelling(dir.path(), "hash-ngram-v1-d64", "--encoder");
  ASSERT_OK(by_id);
  EXPECT_EQ(by_id->id, "hash-ngram-v1-d64");
  EXPECT_THAT(EmbedderForSpelling(dir.path(), "", "--encoder"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace ibgraphrag::retriever
