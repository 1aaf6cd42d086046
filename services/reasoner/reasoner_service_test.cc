// The reasoner gRPC service in process over real gRPC: a ReasonerServer on 127.0.0.1 (OS-picked
// port), a stub on a TCP channel, and the scripted OpenAI-compatible fake server as LLM backend.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/reasoner.grpc.pb.h"
#include "services/reasoner/reasoner_server.h"
#include "services/reasoner/reasoner_service_impl.h"

namespace ibgraphrag::reasoner {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::LogCapture;
using ::ibgraphrag::common::test_util::StatusIs;
using ::ibgraphrag::common::test_util::UnusedLoopbackPort;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kQuestion[] = "Which drug is used to treat myocardial infarction?";

pb::EvidenceTriple* AddTriple(pb::ReasonRequest* request, const std::string& head_id,
                              const std::string& head, const std::string& relation,
                              const std::string& tail_id, const std::string& tail, float score) {
  pb::EvidenceTriple* t = request->add_evidence();
  t->mutable_head()->set_external_id(head_id);
  t->mutable_head()->set_name(head);
  t->set_relation(relation);
  t->set_relation_description("the drug is indicated for the disease");
  t->mutable_tail()->set_external_id(tail_id);
  t->mutable_tail()->set_name(tail);
  t->set_score(score);
  t->set_source("hetionet");
  t->set_hop(1);
  return t;
}

// Three options; only Aspirin is connected to the topic disease by the evidence.
pb::ReasonRequest McqRequest(const std::string& backend = "") {
  pb::ReasonRequest request;
  request.set_task(pb::TASK_MULTIPLE_CHOICE);
  request.set_question(kQuestion);
  request.add_options("Metformin");
  request.add_options("Aspirin");
  request.add_options("Levothyroxine");
  pb::EntityRef* topic = request.add_topic_entities();
  topic->set_external_id("DOID:5844");
  topic->set_name("myocardial infarction");
  AddTriple(&request, "DrugBank:DB00945", "Aspirin", "drug treats disease", "DOID:5844",
            "Myocardial infarction", 0.9f);
  AddTriple(&request, "DrugBank:DB00331", "Metformin", "drug treats disease", "DOID:9352",
            "Type 2 diabetes mellitus", 0.8f);
  request.set_backend(backend);
  return request;
}

class ReasonerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fake = FakeOpenAiServer::Start();
    ASSERT_OK(fake);
    fake_ = *std::move(fake);
    auto down_port = UnusedLoopbackPort();
    ASSERT_OK(down_port);
    down_port_ = *down_port;
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
    fake_->Stop();
  }

  // Backends: "fake" (the scripted server) and "down" (a port nothing listens on).
  ReasonerServer::Options DefaultOptions() {
    ReasonerServer::Options options;
    options.server.service_name = "reasoner";
    options.server.listen_host = "127.0.0.1";
    options.server.port = 0;
    options.server.metrics_port = -1;
    options.server.drain_deadline = absl::Seconds(2);
    LlmBackendConfig fake;
    fake.name = "fake";
    fake.base_url = fake_->base_url();
    fake.model = "fake-model";
    fake.max_retries = 0;
    LlmBackendConfig down;
    down.name = "down";
    down.base_url = absl::StrCat("http://127.0.0.1:", down_port_, "/v1");
    down.model = "down-model";
    down.max_retries = 0;
    options.reasoner.backends = {fake, down};
    options.reasoner.log = logs_.Fn();
    return options;
  }

  void Start(const ReasonerServer::Options& options) {
    auto server = ReasonerServer::BuildAndStart(options);
    ASSERT_OK(server);
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = pb::ReasonerService::NewStub(channel_);
  }
  void Start() { Start(DefaultOptions()); }

  static void SetDeadline(grpc::ClientContext* context,
                          absl::Duration timeout = absl::Seconds(10)) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }

  grpc::Status Reason(const pb::ReasonRequest& request, pb::ReasonResponse* response) {
    grpc::ClientContext context;
    SetDeadline(&context);
    return stub_->Reason(&context, request, response);
  }

  std::unique_ptr<FakeOpenAiServer> fake_;
  int down_port_ = 0;
  LogCapture logs_;
  std::unique_ptr<ReasonerServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::ReasonerService::Stub> stub_;
};

TEST_F(ReasonerServiceTest, HealthIsServingOnceStarted) {
  Start();
  auto health = grpc::health::v1::Health::NewStub(channel_);
  for (const std::string service : {"", "reasoner", kReasonerServiceName}) {
    grpc::ClientContext context;
    SetDeadline(&context);
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_OK(health->Check(&context, request, &response)) << service;
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
}

TEST_F(ReasonerServiceTest, ExtractiveReasonAnswersMultipleChoiceFromEvidence) {
  Start();
  pb::ReasonResponse response;
  grpc::Status status = Reason(McqRequest(), &response);
  ASSERT_OK(status);
  const pb::Answer& answer = response.answer();
  EXPECT_EQ(answer.option_index(), 1);
  EXPECT_EQ(answer.option_letter(), "B");
  EXPECT_THAT(answer.text(), HasSubstr("Aspirin"));
  EXPECT_THAT(answer.text(), HasSubstr("no LLM was used"));
  EXPECT_EQ(answer.backend(), "extractive");
  EXPECT_FALSE(answer.used_llm());
  EXPECT_TRUE(answer.parsed());
  EXPECT_FALSE(answer.insufficient_evidence());
  EXPECT_FALSE(answer.low_confidence());
  EXPECT_GT(answer.confidence(), 0.0f);
  EXPECT_EQ(answer.prompt_version(), "extractive.v1");
  EXPECT_THAT(answer.evidence_used(), ElementsAre(0u));
  EXPECT_EQ(answer.evidence_dropped(), 0u);
  EXPECT_THAT(answer.rationale(), HasSubstr("Aspirin"));
  EXPECT_TRUE(response.degraded().empty());
  ASSERT_FALSE(response.timings().empty());
  EXPECT_EQ(response.timings(0).stage(), "extractive");
  EXPECT_EQ(fake_->request_count(), 0);
}

TEST_F(ReasonerServiceTest, ExtractiveFactVerificationRefutesANegatedStatedRelation) {
  Start();
  pb::ReasonRequest request;
  request.set_task(pb::TASK_FACT_VERIFICATION);
  request.set_question("Aspirin does not treat myocardial infarction");
  AddTriple(&request, "DrugBank:DB00945", "Aspirin", "drug treats disease", "DOID:5844",
            "Myocardial infarction", 1.0f);
  pb::ReasonResponse response;
  grpc::Status status = Reason(request, &response);
  ASSERT_OK(status);
  EXPECT_EQ(response.answer().label(), pb::FACT_LABEL_REFUTED);
  EXPECT_THAT(response.answer().text(), HasSubstr("REFUTED"));
  EXPECT_EQ(response.answer().option_index(), -1);
}

TEST_F(ReasonerServiceTest, LlmBackendAnswersAndIsParsed) {
  Start();
  fake_->Enqueue(
      FakeResponse::Completion("ans: B\nwhy: (Aspirin, drug treats disease, "
                               "Myocardial infarction)"));
  pb::ReasonResponse response;
  grpc::Status status = Reason(McqRequest("fake"), &response);
  ASSERT_OK(status);
  const pb::Answer& answer = response.answer();
  EXPECT_EQ(answer.option_letter(), "B");
  EXPECT_EQ(answer.option_index(), 1);
  EXPECT_THAT(answer.text(), HasSubstr("Aspirin"));
  EXPECT_TRUE(answer.used_llm());
  EXPECT_TRUE(answer.parsed());
  EXPECT_EQ(answer.backend(), "fake");
  EXPECT_THAT(answer.raw_output(), HasSubstr("ans: B"));
  // The served default is IBGraphRAG's reasoning prompt (paper appendix A.3).
  EXPECT_EQ(answer.prompt_version(), "mcq.v2");
  ASSERT_EQ(answer.answers_size(), 1);
  EXPECT_EQ(answer.answers(0), "Aspirin");
  EXPECT_FLOAT_EQ(answer.agreement(), 1.0f);
  EXPECT_EQ(answer.evidence_used_size(), 2);
  EXPECT_EQ(answer.evidence_dropped(), 0u);
  EXPECT_TRUE(response.degraded().empty());
  ASSERT_EQ(fake_->request_count(), 1);
  // The prompt carries the question and the evidence; the model name comes from the config.
  const std::string body = fake_->requests()[0].body;
  EXPECT_THAT(body, HasSubstr("fake-model"));
  EXPECT_THAT(body, HasSubstr("Aspirin, drug treats disease, Myocardial infarction"));
}

TEST_F(ReasonerServiceTest, EmptyBackendUsesTheConfiguredDefault) {
  ReasonerServer::Options options = DefaultOptions();
  options.default_backend = "fake";
  Start(options);
  fake_->Enqueue(FakeResponse::Completion("ans: A"));
  pb::ReasonResponse response;
  ASSERT_OK(Reason(McqRequest(""), &response));
  EXPECT_EQ(response.answer().backend(), "fake");
  EXPECT_EQ(response.answer().option_letter(), "A");
  // "extractive" still selects the extractive backend explicitly.
  pb::ReasonResponse extractive;
  ASSERT_OK(Reason(McqRequest("extractive"), &extractive));
  EXPECT_EQ(extractive.answer().backend(), "extractive");
  EXPECT_EQ(fake_->request_count(), 1);
}

TEST_F(ReasonerServiceTest, UnknownDefaultBackendFailsToStart) {
  ReasonerServer::Options options = DefaultOptions();
  options.default_backend = "nope";
  auto server = ReasonerServer::BuildAndStart(options);
  ASSERT_THAT(server, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("default_backend")));
}

TEST_F(ReasonerServiceTest, ReasonStreamDeliversTokensInOrderThenTheResultLast) {
  Start();
  const std::vector<std::string> tokens = {"ans", ": ", "B", "\nwhy: ", "aspirin treats it"};
  fake_->Enqueue(FakeResponse::Stream(tokens));
  grpc::ClientContext context;
  SetDeadline(&context);
  pb::ReasonStreamRequest request;
  *request.mutable_request() = McqRequest("fake");
  auto reader = stub_->ReasonStream(&context, request);
  std::vector<std::string> received;
  std::vector<pb::ReasonResponse> results;
  pb::ReasonStreamResponse message;
  while (reader->Read(&message)) {
    if (message.has_result()) {
      results.push_back(message.result());
    } else {
      ASSERT_TRUE(results.empty()) << "a token arrived after the result";
      received.push_back(message.token());
    }
  }
  grpc::Status status = reader->Finish();
  ASSERT_OK(status);
  EXPECT_EQ(received, tokens);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].answer().option_letter(), "B");
  EXPECT_TRUE(results[0].answer().used_llm());
  EXPECT_EQ(results[0].answer().raw_output(), "ans: B\nwhy: aspirin treats it");
}

TEST_F(ReasonerServiceTest, ReasonStreamWithExtractiveBackendSendsOnlyTheResult) {
  Start();
  grpc::ClientContext context;
  SetDeadline(&context);
  pb::ReasonStreamRequest request;
  *request.mutable_request() = McqRequest();
  auto reader = stub_->ReasonStream(&context, request);
  std::vector<pb::ReasonStreamResponse> messages;
  pb::ReasonStreamResponse message;
  while (reader->Read(&message)) messages.push_back(message);
  ASSERT_OK(reader->Finish());
  ASSERT_EQ(messages.size(), 1u);
  ASSERT_TRUE(messages[0].has_result());
  EXPECT_EQ(messages[0].result().answer().option_letter(), "B");
}

TEST_F(ReasonerServiceTest, ReasonStreamValidationErrorIsInvalidArgument) {
  Start();
  grpc::ClientContext context;
  SetDeadline(&context);
  pb::ReasonStreamRequest request;  // no question
  auto reader = stub_->ReasonStream(&context, request);
  pb::ReasonStreamResponse message;
  EXPECT_FALSE(reader->Read(&message));
  grpc::Status status = reader->Finish();
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("question")));
}

struct ValidationCase {
  std::string name;
  std::function<void(pb::ReasonRequest*)> mutate;
  std::vector<std::string> message_parts;
};

TEST_F(ReasonerServiceTest, InvalidRequestsAreInvalidArgumentNamingTheField) {
  Start();
  const std::vector<ValidationCase> cases = {
      {"27 options",
       [](pb::ReasonRequest* r) {
         r->clear_options();
         for (int i = 0; i < 27; ++i) r->add_options(absl::StrCat("option ", i));
       },
       {"options", "27", "26"}},
      {"option over 1 KiB",
       [](pb::ReasonRequest* r) { r->set_options(1, std::string(1025, 'x')); },
       {"options[1]", "1025", "1024"}},
      {"1001 triples",
       [](pb::ReasonRequest* r) {
         while (r->evidence_size() < 1001) {
           AddTriple(r, "A:1", "a", "rel", "B:2", "b", 0.5f);
         }
       },
       {"evidence", "1001", "1000"}},
      {"empty question", [](pb::ReasonRequest* r) { r->clear_question(); }, {"question", "empty"}},
      {"unknown backend",
       [](pb::ReasonRequest* r) { r->set_backend("gpt-17"); },
       {"backend", "gpt-17", "extractive", "fake", "down"}},
      {"unknown task",
       [](pb::ReasonRequest* r) { r->set_task(static_cast<pb::Task>(9)); },
       {"task", "9"}},
      {"path index out of range",
       [](pb::ReasonRequest* r) { r->add_paths()->add_triple_indices(7); },
       {"paths[0].triple_indices[0]"}},
      {"too many samples",
       [](pb::ReasonRequest* r) { r->mutable_self_consistency()->set_samples(4000000000u); },
       {"self_consistency.samples"}},
  };
  for (const ValidationCase& c : cases) {
    pb::ReasonRequest request = McqRequest();
    c.mutate(&request);
    pb::ReasonResponse response;
    grpc::Status status = Reason(request, &response);
    EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT)) << c.name;
    for (const std::string& part : c.message_parts) {
      EXPECT_THAT(status.error_message(), HasSubstr(part)) << c.name;
    }
  }
  EXPECT_EQ(fake_->request_count(), 0);
}

TEST_F(ReasonerServiceTest, LlmDownFallsBackToExtractiveFlaggedDegraded) {
  Start();
  pb::ReasonResponse response;
  grpc::Status status = Reason(McqRequest("down"), &response);
  ASSERT_OK(status);
  EXPECT_EQ(response.answer().backend(), "extractive");
  EXPECT_FALSE(response.answer().used_llm());
  EXPECT_EQ(response.answer().option_letter(), "B");
  ASSERT_EQ(response.degraded_size(), 1);
  EXPECT_EQ(response.degraded(0).component(), "llm");
  EXPECT_THAT(response.degraded(0).reason(), HasSubstr("down"));
  EXPECT_THAT(response.degraded(0).reason(), HasSubstr("UNAVAILABLE"));
  const std::string metrics = server_->runner().metrics().Serialize();
  EXPECT_THAT(metrics,
              HasSubstr("ibgr_reasoner_answers_total{backend=\"down\",degraded=\"true\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("ibgr_reasoner_llm_seconds_count{backend=\"down\"} 1"));
}

TEST_F(ReasonerServiceTest, LlmDownWithReturnErrorPolicyIsUnavailable) {
  ReasonerServer::Options options = DefaultOptions();
  options.reasoner.on_llm_failure = LlmFailurePolicy::kReturnError;
  Start(options);
  pb::ReasonResponse response;
  grpc::Status status = Reason(McqRequest("down"), &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::UNAVAILABLE, HasSubstr("down")));
}

TEST_F(ReasonerServiceTest, CallersShortDeadlineIsDeadlineExceededAndTheServerStaysUp) {
  Start();
  FakeResponse slow = FakeResponse::Completion("ans: B");
  slow.delay = absl::Seconds(30);
  fake_->Enqueue(slow);
  {
    grpc::ClientContext context;
    SetDeadline(&context, absl::Milliseconds(300));
    pb::ReasonResponse response;
    grpc::Status status = stub_->Reason(&context, McqRequest("fake"), &response);
    EXPECT_THAT(status, StatusIs(grpc::StatusCode::DEADLINE_EXCEEDED));
  }
  // The handler gave up at the deadline instead of waiting for the model: the next call is
  // answered.
  pb::ReasonResponse response;
  grpc::Status status = Reason(McqRequest(), &response);
  ASSERT_OK(status);
  EXPECT_EQ(response.answer().option_letter(), "B");
}

TEST_F(ReasonerServiceTest, RequestIdReachesTheCoreAndQuestionTextIsNotLogged) {
  Start();
  grpc::ClientContext context;
  SetDeadline(&context);
  context.AddMetadata("x-request-id", "req-service-test-42");
  pb::ReasonResponse response;
  ASSERT_OK(stub_->Reason(&context, McqRequest(), &response));
  const std::string logs = logs_.All();
  EXPECT_THAT(logs, HasSubstr("request_id=req-service-test-42"));
  EXPECT_THAT(logs, Not(HasSubstr("myocardial")));
  EXPECT_THAT(logs, Not(HasSubstr("Aspirin")));
}

TEST_F(ReasonerServiceTest, AnswersAreCountedByBackendAndDegradation) {
  Start();
  fake_->Enqueue(FakeResponse::Completion("ans: B"));
  pb::ReasonResponse response;
  ASSERT_OK(Reason(McqRequest(), &response));
  ASSERT_OK(Reason(McqRequest(), &response));
  ASSERT_OK(Reason(McqRequest("fake"), &response));
  const std::string metrics = server_->runner().metrics().Serialize();
  EXPECT_THAT(
      metrics,
      HasSubstr("ibgr_reasoner_answers_total{backend=\"extractive\",degraded=\"false\"} 2"));
  EXPECT_THAT(metrics,
              HasSubstr("ibgr_reasoner_answers_total{backend=\"fake\",degraded=\"false\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("ibgr_reasoner_llm_seconds_count{backend=\"fake\"} 1"));
}

TEST(ReasonerProtoMappingTest, FromProtoCopiesEveryField) {
  pb::ReasonRequest request = McqRequest("fake");
  request.set_task(pb::TASK_FACT_VERIFICATION);
  pb::ReasoningPath* path = request.add_paths();
  path->add_triple_indices(1);
  path->add_triple_indices(0);
  path->set_score(0.25f);
  request.mutable_self_consistency()->set_samples(2);
  request.mutable_self_consistency()->add_temperatures(0.0f);
  request.mutable_self_consistency()->add_temperatures(0.5f);
  request.set_evidence_token_budget(123);
  auto core = FromProto(request);
  ASSERT_OK(core);
  EXPECT_EQ(core->task, Task::kFactVerification);
  EXPECT_EQ(core->question, kQuestion);
  EXPECT_THAT(core->options, ElementsAre("Metformin", "Aspirin", "Levothyroxine"));
  ASSERT_EQ(core->evidence.size(), 2u);
  const EvidenceTriple& t = core->evidence[0];
  EXPECT_EQ(t.head.id, "DrugBank:DB00945");
  EXPECT_EQ(t.head.name, "Aspirin");
  EXPECT_EQ(t.relation, "drug treats disease");
  EXPECT_EQ(t.relation_description, "the drug is indicated for the disease");
  EXPECT_EQ(t.tail.id, "DOID:5844");
  EXPECT_EQ(t.tail.name, "Myocardial infarction");
  EXPECT_FLOAT_EQ(static_cast<float>(t.score), 0.9f);
  EXPECT_EQ(t.source, "hetionet");
  EXPECT_EQ(t.hop, 1);
  ASSERT_EQ(core->paths.size(), 1u);
  EXPECT_THAT(core->paths[0].triple_indices, ElementsAre(1, 0));
  EXPECT_DOUBLE_EQ(core->paths[0].score, 0.25);
  ASSERT_EQ(core->topic_entities.size(), 1u);
  EXPECT_EQ(core->topic_entities[0].id, "DOID:5844");
  EXPECT_EQ(core->backend, "fake");
  EXPECT_EQ(core->self_consistency.samples, 2);
  EXPECT_THAT(core->self_consistency.temperatures, ElementsAre(0.0, 0.5));
  EXPECT_EQ(core->evidence_token_budget, 123);
}

TEST(ReasonerProtoMappingTest, ToProtoCopiesEveryField) {
  ReasonResult result;
  result.answer = "SUPPORTED";
  result.option_index = -1;
  result.fact_label = FactLabel::kSupported;
  result.rationale = "why";
  result.raw_output = "ans: SUPPORTED";
  result.parse_status = ParseStatus::kOk;
  result.backend = "fake";
  result.used_llm = true;
  result.insufficient_evidence = false;
  result.low_confidence = true;
  result.confidence = 0.5;
  result.agreement = 0.5;
  result.votes = {{0.0, "SUPPORTED"}, {0.7, "REFUTED"}};
  result.prompt_version = "fact.v1";
  result.evidence_used = {3, 1};
  result.evidence_dropped = 4;
  result.degradations = {{"llm", "1 of 2 samples failed"}};
  result.timings = {{"prompt_build", 0.1}, {"llm", 12.5}, {"parse", 0.01}};
  pb::ReasonResponse response;
  ToProto(result, &response);
  const pb::Answer& a = response.answer();
  EXPECT_EQ(a.text(), "SUPPORTED");
  EXPECT_EQ(a.option_index(), -1);
  EXPECT_EQ(a.option_letter(), "");
  EXPECT_EQ(a.label(), pb::FACT_LABEL_SUPPORTED);
  EXPECT_EQ(a.rationale(), "why");
  EXPECT_EQ(a.raw_output(), "ans: SUPPORTED");
  EXPECT_TRUE(a.parsed());
  EXPECT_EQ(a.backend(), "fake");
  EXPECT_TRUE(a.used_llm());
  EXPECT_TRUE(a.low_confidence());
  EXPECT_FLOAT_EQ(a.confidence(), 0.5f);
  EXPECT_FLOAT_EQ(a.agreement(), 0.5f);
  ASSERT_EQ(a.votes_size(), 2);
  EXPECT_FLOAT_EQ(a.votes(1).temperature(), 0.7f);
  EXPECT_EQ(a.votes(1).answer(), "REFUTED");
  EXPECT_EQ(a.prompt_version(), "fact.v1");
  EXPECT_THAT(a.evidence_used(), ElementsAre(3u, 1u));
  EXPECT_EQ(a.evidence_dropped(), 4u);
  ASSERT_EQ(response.degraded_size(), 1);
  EXPECT_EQ(response.degraded(0).component(), "llm");
  ASSERT_EQ(response.timings_size(), 3);
  EXPECT_EQ(response.timings(1).stage(), "llm");
  EXPECT_DOUBLE_EQ(response.timings(1).duration_ms(), 12.5);

  result.parse_status = ParseStatus::kUnparseable;
  pb::ReasonResponse unparsed;
  ToProto(result, &unparsed);
  EXPECT_FALSE(unparsed.answer().parsed());
}

}  // namespace
}  // namespace ibgraphrag::reasoner
