// The alignment service over real gRPC (loopback, OS-picked port) on a bundle built in the test.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/proto_utf8.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "services/alignment/alignment_server.h"
#include "services/alignment/alignment_service_impl.h"
#include "services/alignment/bundle.h"
#include "services/alignment/testing/test_fixtures.h"
#include "services/alignment/trained_encoder.h"

namespace ibgraphrag::alignment {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

AlignmentServer::Options ServerOptions(const std::string& base) {
  AlignmentServer::Options options;
  options.server.listen_host = "127.0.0.1";
  options.server.port = 0;
  options.server.metrics_port = -1;
  options.server.termination_grace_period = absl::ZeroDuration();
  options.base_path = base;
  return options;
}

class AlignmentServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new std::string(common::test_util::MakeTempDir("align-service"));
    HashNgramEncoderOptions hash;
    auto encoder = HashNgramEncoder::Create(hash);
    BundleBuildOptions build;
    build.base_path = *base_;
    auto built = BuildAlignmentBundle(testing::TinyLexicon(), **encoder, build);
    ASSERT_OK(built);
    auto server = AlignmentServer::BuildAndStart(ServerOptions(*base_));
    ASSERT_OK(server);
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = pb::AlignmentService::NewStub(channel_);
  }
  static void Deadline(grpc::ClientContext* ctx) {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  }
  grpc::Status Align(const pb::AlignRequest& request, pb::AlignResponse* response) {
    grpc::ClientContext ctx;
    Deadline(&ctx);
    return stub_->Align(&ctx, request, response);
  }

  static std::string* base_;
  static AlignmentServer* server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::AlignmentService::Stub> stub_;
};

std::string* AlignmentServiceTest::base_ = nullptr;
AlignmentServer* AlignmentServiceTest::server_ = nullptr;

TEST_F(AlignmentServiceTest, HealthIsServingOnceTheBundleIsLoaded) {
  EXPECT_TRUE(server_->serving());
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext ctx;
  Deadline(&ctx);
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(kAlignmentServiceName);
  grpc::health::v1::HealthCheckResponse resp;
  ASSERT_OK(health->Check(&ctx, req, &resp));
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(AlignmentServiceTest, AlignReturnsScoresSettingsAndStageTimings) {
  pb::AlignRequest request;
  request.set_text("Known MI. Possible pneumonia; no heart failure.");
  request.mutable_options()->set_tau(0.0f);
  pb::AlignResponse response;
  ASSERT_OK(Align(request, &response));
  EXPECT_EQ(response.bundle_version(), "1");
  EXPECT_EQ(response.encoder_id(), "hash-ngram-v1-d256");
  EXPECT_FLOAT_EQ(response.lambda(), 0.4f);
  EXPECT_FLOAT_EQ(response.tau(), 0.0f);
  EXPECT_EQ(response.top_k(), 10u);
  EXPECT_TRUE(response.msca_enabled());
  ASSERT_EQ(response.mentions_size(), 3);
  EXPECT_EQ(response.mentions(0).expanded_from(), "MI");
  EXPECT_EQ(response.mentions(0).expansion(), "myocardial infarction");
  EXPECT_EQ(response.mentions(0).expansion_id(), "DOID:5844");
  EXPECT_TRUE(response.mentions(1).uncertain());
  EXPECT_TRUE(response.mentions(2).negated());
  ASSERT_EQ(response.kept_size() + response.rejected_size(), 3);
  std::vector<pb::AlignedEntity> all(response.kept().begin(), response.kept().end());
  all.insert(all.end(), response.rejected().begin(), response.rejected().end());
  for (const pb::AlignedEntity& e : all) {
    EXPECT_EQ(e.consistency() >= 0.0f, std::find_if(response.kept().begin(), response.kept().end(),
                                                    [&](const pb::AlignedEntity& k) {
                                                      return k.entity().id() == e.entity().id();
                                                    }) != response.kept().end());
    EXPECT_NEAR(e.consistency(), 0.6f * e.question_similarity() + 0.4f * e.relatedness(), 1e-5);
    EXPECT_FALSE(e.entity().external_id().empty());
    EXPECT_FALSE(e.mention().text().empty());
    // All three entities are named in the text: calibrated S carries the dictionary evidence.
    EXPECT_TRUE(e.dictionary_match()) << e.entity().external_id();
    EXPECT_FALSE(e.lookalike());
    EXPECT_GE(e.question_similarity(), 0.9f - 1e-6f);
  }
  EXPECT_TRUE(response.calibrated());
  // The paper's raw cosines on request.
  request.mutable_options()->set_calibrated(false);
  pb::AlignResponse raw;
  ASSERT_OK(Align(request, &raw));
  EXPECT_FALSE(raw.calibrated());
  ASSERT_EQ(raw.kept_size(), 3);
  for (const pb::AlignedEntity& e : raw.kept()) {
    EXPECT_EQ(e.question_similarity(), e.raw_question_similarity());
    EXPECT_EQ(e.relatedness(), e.raw_relatedness());
  }
  std::set<std::string> stages;
  for (const pb::StageTiming& t : response.timings()) stages.insert(t.stage());
  EXPECT_THAT(stages, ::testing::IsSupersetOf({"mentions", "candidates", "score"}));
}

TEST_F(AlignmentServiceTest, InvalidRequestsNameTheField) {
  struct Case {
    std::function<void(pb::AlignRequest*)> edit;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](pb::AlignRequest* r) { r->set_text(""); }, "text"},
      {[](pb::AlignRequest* r) { r->set_text(std::string(16 * 1024 + 1, 'a')); }, "16 KiB"},
      {[](pb::AlignRequest* r) { r->mutable_options()->set_lambda(1.5f); }, "lambda"},
      {[](pb::AlignRequest* r) { r->mutable_options()->set_tau(-0.5f); }, "tau"},
      {[](pb::AlignRequest* r) { r->mutable_options()->set_top_k(0); }, "top_k"},
      {[](pb::AlignRequest* r) { r->mutable_options()->set_top_k(1001); }, "top_k"},
  };
  for (const Case& c : cases) {
    pb::AlignRequest request;
    request.set_text("pneumonia");
    c.edit(&request);
    pb::AlignResponse response;
    const grpc::Status status = Align(request, &response);
    EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr(c.field)))
        << c.field;
  }
  pb::LinkRequest link;
  link.set_text("pneumonia");
  link.set_top_k(5000);
  pb::LinkResponse link_response;
  grpc::ClientContext ctx;
  Deadline(&ctx);
  const grpc::Status status = stub_->Link(&ctx, link, &link_response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("top_k")));
}

TEST_F(AlignmentServiceTest, InvalidUtf8IsRejectedNamingTheField) {
  // The client library serialises the bytes as given; the server must answer INVALID_ARGUMENT
  // naming `text` (protobuf's own proto3 parser would fail first and gRPC would say INTERNAL).
  pb::AlignRequest request;
  request.set_text("bad \xFF text");
  request.mutable_options()->set_tau(0.5f);
  pb::AlignResponse response;
  grpc::Status status = Align(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT,
                               ::testing::AllOf(HasSubstr("text"), HasSubstr("UTF-8"))));

  grpc::ClientContext link_ctx;
  Deadline(&link_ctx);
  pb::LinkRequest link;
  link.set_text("\xC3\x28 pneumonia");  // broken two-byte sequence
  pb::LinkResponse link_response;
  status = stub_->Link(&link_ctx, link, &link_response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("text")));

  grpc::ClientContext extract_ctx;
  Deadline(&extract_ctx);
  pb::ExtractMentionsRequest extract;
  extract.set_text("\xED\xA0\x80 surrogate");
  pb::ExtractMentionsResponse extract_response;
  status = stub_->ExtractMentions(&extract_ctx, extract, &extract_response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("text")));

  // Valid non-ASCII text still works, and the other fields of the request are honoured.
  request.set_text("Pneumonia \xC3\xA9t\xC3\xA9 with fever");
  response.Clear();
  status = Align(request, &response);
  ASSERT_OK(status);
  EXPECT_FLOAT_EQ(response.tau(), 0.5f);
  ASSERT_GE(response.mentions_size(), 1);
  EXPECT_EQ(response.mentions(0).text(), "Pneumonia");
}

TEST(ParseRequestBytesTest, NamesTheTextFieldAndRejectsMalformedBytes) {
  // The service parses requests with common::ParseRequestBytes; this is the byte-level view of
  // what InvalidUtf8IsRejectedNamingTheField checks through gRPC.
  pb::AlignRequest request;
  request.set_text("ok");
  request.mutable_options()->set_top_k(7);
  std::string wire = request.SerializeAsString();
  auto bytes = [](const std::string& w) {
    grpc::Slice slice(w);
    return grpc::ByteBuffer(&slice, 1);
  };
  pb::AlignRequest parsed;
  ASSERT_OK(common::ParseRequestBytes(bytes(wire), &parsed));
  EXPECT_EQ(parsed.text(), "ok");
  EXPECT_EQ(parsed.options().top_k(), 7u);
  // Replace the text bytes "ok" with invalid UTF-8 of the same length.
  const size_t at = wire.find("ok");
  ASSERT_NE(at, std::string::npos);
  wire[at] = '\xFF';
  wire[at + 1] = '\xFE';
  absl::Status status = common::ParseRequestBytes(bytes(wire), &parsed);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(status.message(), "text: not valid UTF-8");
  status = common::ParseRequestBytes(bytes(wire.substr(0, wire.size() - 1)), &parsed);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(status.message(), "request: not a valid serialized message");
}

TEST_F(AlignmentServiceTest, ExtractMentionsAndLink) {
  grpc::ClientContext ctx;
  Deadline(&ctx);
  pb::ExtractMentionsRequest request;
  request.set_text("Denies heart attacks.");
  pb::ExtractMentionsResponse response;
  ASSERT_OK(stub_->ExtractMentions(&ctx, request, &response));
  ASSERT_EQ(response.mentions_size(), 1);
  EXPECT_EQ(response.mentions(0).begin(), 7u);
  EXPECT_EQ(response.mentions(0).end(), 20u);
  EXPECT_TRUE(response.mentions(0).negated());

  grpc::ClientContext link_ctx;
  Deadline(&link_ctx);
  pb::LinkRequest link;
  link.set_text("heart attack");
  link.set_top_k(2);
  pb::LinkResponse link_response;
  ASSERT_OK(stub_->Link(&link_ctx, link, &link_response));
  ASSERT_EQ(link_response.mentions_size(), 1);
  ASSERT_EQ(link_response.mentions(0).candidates_size(), 2);
  EXPECT_EQ(link_response.mentions(0).candidates(0).entity().external_id(), "DOID:5844");
  EXPECT_EQ(link_response.mentions(0).candidates(0).matched_name(), "heart attack");
  EXPECT_EQ(link_response.bundle_version(), "1");
}

TEST(AlignmentServerTest, BundleFromAnotherEncoderStaysNotServing) {
  const std::string base = common::test_util::MakeTempDir("align-service-mismatch");
  testing::KeywordEncoder keyword;
  BundleBuildOptions build;
  build.base_path = base;
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), keyword, build));
  auto server = AlignmentServer::BuildAndStart(ServerOptions(base));
  ASSERT_OK(server);
  EXPECT_FALSE((*server)->serving());
  EXPECT_THAT((*server)->load_status().message(), HasSubstr("keyword-test-d3"));
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->port()),
                                     grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  ASSERT_OK(health->Check(&ctx, req, &resp));
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  grpc::ClientContext align_ctx;
  pb::AlignRequest request;
  request.set_text("pneumonia");
  pb::AlignResponse response;
  EXPECT_THAT(pb::AlignmentService::NewStub(channel)->Align(&align_ctx, request, &response),
              StatusIs(grpc::StatusCode::UNAVAILABLE));
}

TEST(AlignmentServerTest, WatcherSwapsToANewerBundle) {
  const std::string base = common::test_util::MakeTempDir("align-service-watch");
  std::shared_ptr<const TextEncoder> encoder = *HashNgramEncoder::Create(HashNgramEncoderOptions());
  BundleBuildOptions build;
  build.base_path = base;
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), *encoder, build));
  AlignmentServer::Options options = ServerOptions(base);
  options.watch_interval = absl::Milliseconds(50);
  auto server = AlignmentServer::BuildAndStart(options);
  ASSERT_OK(server);
  auto stub = pb::AlignmentService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", (*server)->port()), grpc::InsecureChannelCredentials()));
  auto version = [&stub]() {
    grpc::ClientContext ctx;
    pb::LinkRequest request;
    request.set_text("pneumonia");
    pb::LinkResponse response;
    return stub->Link(&ctx, request, &response).ok() ? response.bundle_version() : "";
  };
  EXPECT_EQ(version(), "1");
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), *encoder, build));
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (version() != "2" && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(version(), "2");
}

TEST(AlignmentServerTest, ServesABundleOfATrainedEncoderOpenedByItsId) {
  const std::string base = common::test_util::MakeTempDir("align-service-trained");
  TrainedEncoderWeights w;
  w.features.buckets = 1024;
  w.dim = 8;
  for (int i = 0; i < w.features.buckets * w.dim; ++i) w.embedding.push_back(((i * 37) % 11) - 5);
  const std::string encoder_dir = *PublishTrainedEncoder(base, w, TrainedEncoderArtifactInfo());
  std::unique_ptr<TrainedNameEncoder> encoder = *TrainedNameEncoder::Open(encoder_dir);
  BundleBuildOptions build;
  build.base_path = base;
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), *encoder, build));
  auto server = AlignmentServer::BuildAndStart(ServerOptions(base));  // no encoder configured
  ASSERT_OK(server);
  EXPECT_TRUE((*server)->serving()) << (*server)->load_status();
  auto stub = pb::AlignmentService::NewStub((*server)->InProcessChannel());
  grpc::ClientContext ctx;
  pb::LinkRequest request;
  request.set_text("pneumonia");
  pb::LinkResponse response;
  ASSERT_OK(stub->Link(&ctx, request, &response));
  EXPECT_EQ(response.encoder_id(), encoder->id());
}

TEST(AlignmentServerTest, MissingBaseIsAnError) {
  AlignmentServer::Options options = ServerOptions("");
  EXPECT_THAT(AlignmentServer::BuildAndStart(options),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(AlignmentServiceTest, TheLlmStepIsEchoedAndAnUnknownOneIsRefusedByName) {
  pb::AlignRequest request;
  request.set_text("pneumonia");
  pb::AlignResponse response;
  ASSERT_OK(Align(request, &response));
  EXPECT_EQ(response.llm_step(), pb::LLM_STEP_BEFORE_FILTER);  // the paper's order by default
  request.mutable_options()->set_llm_step(pb::LLM_STEP_RESCUE_REJECTED);
  response.Clear();
  ASSERT_OK(Align(request, &response));
  EXPECT_EQ(response.llm_step(), pb::LLM_STEP_RESCUE_REJECTED);
  request.mutable_options()->set_llm_step(static_cast<pb::LlmStep>(7));
  EXPECT_THAT(Align(request, &response),
              StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("options.llm_step: 7")));
}

}  // namespace
}  // namespace ibgraphrag::alignment
