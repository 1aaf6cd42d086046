#include "services/reasoner/reasoner.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::reasoner {
namespace {

using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::LogCapture;
using ::ibgraphrag::common::test_util::RecordedRequest;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kQuestion[] = "Which drug is used to treat myocardial infarction?";

EvidenceTriple Triple(std::string head_id, std::string head, std::string relation,
                      std::string tail_id, std::string tail, double score) {
  EvidenceTriple t;
  t.head = {std::move(head_id), std::move(head)};
  t.relation = std::move(relation);
  t.relation_description = "a relation";
  t.tail = {std::move(tail_id), std::move(tail)};
  t.score = score;
  return t;
}

ReasonRequest McqRequest(std::string backend) {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = kQuestion;
  request.options = {"Metformin", "Aspirin", "Levothyroxine"};
  request.topic_entities = {{"DOID:5844", "myocardial infarction"}};
  request.evidence = {
      Triple("DB:aspirin", "Aspirin", "treats", "DOID:5844", "Myocardial infarction", 0.9),
      Triple("DB:metformin", "Metformin", "treats", "DOID:9352", "Type 2 diabetes", 0.8),
  };
  request.backend = std::move(backend);
  request.request_id = "req-1";
  return request;
}

double TemperatureOf(const RecordedRequest& request) {
  return nlohmann::json::parse(request.body)["temperature"].get<double>();
}

class ReasonerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = FakeOpenAiServer::Start();
    ASSERT_OK(server);
    server_ = *std::move(server);
    LlmBackendConfig backend;
    backend.name = "fake";
    backend.base_url = server_->base_url();
    backend.model = "fake-model";
    backend.max_retries = 1;
    backend.initial_backoff = absl::Milliseconds(5);
    backend.max_backoff = absl::Milliseconds(10);
    options_.backends = {backend};
    options_.log = logs_.Fn();
  }

  std::unique_ptr<Reasoner> MakeReasoner() {
    auto reasoner = Reasoner::Create(options_);
    EXPECT_OK(reasoner);
    return reasoner.ok() ? *std::move(reasoner) : nullptr;
  }

  static absl::Time Deadline(absl::Duration in = absl::Seconds(10)) { return absl::Now() + in; }

  static bool HasTiming(const ReasonResult& result, absl::string_view stage) {
    for (const StageTiming& timing : result.timings) {
      if (timing.stage == stage) return true;
    }
    return false;
  }

  std::unique_ptr<FakeOpenAiServer> server_;
  ReasonerOptions options_;
  LogCapture logs_;
};

struct ValidationCase {
  std::string name;
  std::function<void(ReasonRequest*)> mutate;
  std::vector<std::string> message_parts;
};

class ValidationTest : public ReasonerTest, public ::testing::WithParamInterface<ValidationCase> {};

TEST_P(ValidationTest, RejectsWithInvalidArgumentNamingTheFieldAndLimit) {
  auto reasoner = MakeReasoner();
  ReasonRequest request = McqRequest("");
  GetParam().mutate(&request);
  auto result = reasoner->Reason(request, Deadline());
  ASSERT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument));
  for (const std::string& part : GetParam().message_parts) {
    EXPECT_THAT(result.status().message(), HasSubstr(part));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, ValidationTest,
    ::testing::Values(
        ValidationCase{
            "EmptyQuestion", [](ReasonRequest* r) { r->question.clear(); }, {"question is empty"}},
        ValidationCase{"TopicMentionsNotOnePerTopicEntity",
                       [](ReasonRequest* r) {
                         r->topic_mentions = {0, 1};
                       },
                       {"topic_mentions has 2 entries and topic_entities 1"}},
        ValidationCase{"BlankQuestion",
                       [](ReasonRequest* r) { r->question = " \n\t"; },
                       {"question is blank"}},
        ValidationCase{"SamplesAndTemperaturesDisagree",
                       [](ReasonRequest* r) {
                         r->self_consistency.samples = 1;
                         r->self_consistency.temperatures = {0.0, 0.3};
                       },
                       {"self_consistency.temperatures", "one per sample"}},
        ValidationCase{"LongQuestion",
                       [](ReasonRequest* r) { r->question = std::string(16 * 1024 + 1, 'x'); },
                       {"question", "16384"}},
        ValidationCase{"TooManyOptions",
                       [](ReasonRequest* r) { r->options.assign(27, "option"); },
                       {"options", "27", "26"}},
        ValidationCase{"LongOption",
                       [](ReasonRequest* r) { r->options[1] = std::string(1025, 'o'); },
                       {"options[1]", "1024"}},
        ValidationCase{
            "OneOption", [](ReasonRequest* r) { r->options.resize(1); }, {"options", "at least 2"}},
        ValidationCase{"TooMuchEvidence",
                       [](ReasonRequest* r) { r->evidence.resize(1001, r->evidence[0]); },
                       {"evidence", "1001", "1000"}},
        ValidationCase{"UnknownBackend",
                       [](ReasonRequest* r) { r->backend = "gpt-nope"; },
                       {"backend 'gpt-nope'", "extractive", "fake"}},
        ValidationCase{"NegativeTemperature",
                       [](ReasonRequest* r) {
                         r->self_consistency.temperatures = {0.0, -0.1};
                       },
                       {"self_consistency.temperatures[1]", "[0, 2]"}},
        ValidationCase{"HotTemperature",
                       [](ReasonRequest* r) { r->self_consistency.temperatures = {2.5}; },
                       {"self_consistency.temperatures[0]"}},
        ValidationCase{"TemperatureCountMismatch",
                       [](ReasonRequest* r) {
                         r->self_consistency.samples = 3;
                         r->self_consistency.temperatures = {0.0, 0.3};
                       },
                       {"self_consistency.temperatures", "one per sample"}},
        ValidationCase{"TooManySamples",
                       [](ReasonRequest* r) { r->self_consistency.samples = 17; },
                       {"self_consistency.samples", "16"}},
        ValidationCase{"PathOutOfRange",
                       [](ReasonRequest* r) {
                         r->paths = {{{0, 5}, 0.5}};
                       },
                       {"paths[0].triple_indices[1]", "5"}},
        ValidationCase{"NegativeBudget",
                       [](ReasonRequest* r) { r->evidence_token_budget = -1; },
                       {"evidence_token_budget"}}),
    [](const ::testing::TestParamInfo<ValidationCase>& param_info) {
      return param_info.param.name;
    });

TEST_F(ReasonerTest, CallerPromptsAreBoundedAndCanBeSwitchedOff) {
  ReasonRequest request = McqRequest("fake");
  request.caller_prompt = {"mode.v1", "", std::string(4 * 1000 + 1, 'x')};  // ~1001 tokens
  options_.max_caller_prompt_tokens = 1000;
  auto too_long = MakeReasoner()->Reason(request, Deadline());
  EXPECT_THAT(too_long,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("caller_prompt"),
                                        HasSubstr("max_caller_prompt_tokens"), HasSubstr("1000"))));

  request.caller_prompt.user = std::string(4 * 1000, 'x');
  options_.accept_caller_prompts = false;
  auto refused = MakeReasoner()->Reason(request, Deadline());
  EXPECT_THAT(refused,
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("accept_caller_prompts")));
  EXPECT_TRUE(server_->requests().empty());  // nothing was relayed to the LLM

  request.caller_prompt = {};  // the reasoner's own prompt is still served
  request.backend = "";
  EXPECT_OK(MakeReasoner()->Reason(request, Deadline()));
}

TEST_F(ReasonerTest, AnswersExtractivelyByDefault) {
  auto reasoner = MakeReasoner();
  auto result = reasoner->Reason(McqRequest(""), Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->option_index, 1);
  EXPECT_EQ(result->backend, "extractive");
  EXPECT_FALSE(result->used_llm);
  EXPECT_TRUE(HasTiming(*result, "extractive"));
  EXPECT_EQ(server_->request_count(), 0);
}

TEST_F(ReasonerTest, EmptyEvidenceStillAnswersFlaggedInsufficient) {
  server_->SetDefault(FakeResponse::Completion("ans: B) Aspirin"));
  auto reasoner = MakeReasoner();
  for (const std::string backend : {"extractive", "fake"}) {
    ReasonRequest request = McqRequest(backend);
    request.evidence.clear();
    auto result = reasoner->Reason(request, Deadline());
    ASSERT_OK(result) << backend;
    EXPECT_TRUE(result->insufficient_evidence) << backend;
  }
}

TEST_F(ReasonerTest, AnswersWithTheLlmAndParsesItsOutput) {
  server_->Enqueue(FakeResponse::Completion("ans: B) Aspirin\nwhy: (Aspirin, treats, MI)"));
  auto reasoner = MakeReasoner();
  auto result = reasoner->Reason(McqRequest("fake"), Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->option_index, 1);
  EXPECT_EQ(result->option_letter, "B");
  EXPECT_EQ(result->answer, "B) Aspirin");
  EXPECT_EQ(result->rationale, "(Aspirin, treats, MI)");
  EXPECT_EQ(result->raw_output, "ans: B) Aspirin\nwhy: (Aspirin, treats, MI)");
  EXPECT_EQ(result->parse_status, ParseStatus::kOk);
  EXPECT_EQ(result->backend, "fake");
  EXPECT_TRUE(result->used_llm);
  EXPECT_FALSE(result->degraded());
  // The served default is IBGraphRAG's reasoning prompt (paper appendix A.3).
  EXPECT_EQ(result->prompt_version, "mcq.v2");
  EXPECT_EQ(result->answers, std::vector<std::string>{"Aspirin"});
  EXPECT_EQ(result->agreement, 1.0);
  EXPECT_TRUE(result->votes.empty());
  EXPECT_EQ(result->evidence_used, (std::vector<int>{0, 1}));
  EXPECT_TRUE(HasTiming(*result, "prompt_build"));
  EXPECT_TRUE(HasTiming(*result, "llm"));
  EXPECT_TRUE(HasTiming(*result, "parse"));

  const nlohmann::json body = nlohmann::json::parse(server_->requests()[0].body);
  const std::string user = body["messages"].back()["content"];
  EXPECT_THAT(user, HasSubstr(kQuestion));
  EXPECT_THAT(user, HasSubstr("(Aspirin, treats, Myocardial infarction)"));
  EXPECT_THAT(user, HasSubstr("B) Aspirin"));
  EXPECT_EQ(body["temperature"], 0.0);
  EXPECT_EQ(body["seed"], 0);
}

TEST_F(ReasonerTest, ReturnsUnparseableOutputRawAndFlagged) {
  server_->Enqueue(FakeResponse::Completion("I cannot help with that."));
  auto reasoner = MakeReasoner();
  auto result = reasoner->Reason(McqRequest("fake"), Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->parse_status, ParseStatus::kUnparseable);
  EXPECT_EQ(result->option_index, -1);
  EXPECT_EQ(result->option_letter, "");
  EXPECT_EQ(result->answer, "I cannot help with that.");
  EXPECT_EQ(result->raw_output, "I cannot help with that.");
}

TEST_F(ReasonerTest, KeepsEveryAnsLineOfAnOpenAnswerAndVotesOnTheSet) {
  // Two samples list the same answers in a different order: they agree.
  server_->Enqueue(FakeResponse::Completion(
      "To answer the question, we have to find its symptoms. Therefore, the answers are:\n"
      "ans: Photophobia\nans: Nausea"));
  server_->Enqueue(FakeResponse::Completion("ans: nausea\nans: photophobia"));
  auto reasoner = MakeReasoner();
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "Which symptoms does migraine present with?";
  request.backend = "fake";
  request.self_consistency.samples = 2;
  request.self_consistency.temperatures = {0.0, 0.7};
  auto result = reasoner->Reason(request, Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->prompt_version, "open.v2");
  EXPECT_EQ(result->answers.size(), 2u);
  EXPECT_EQ(result->agreement, 1.0);
}

TEST_F(ReasonerTest, VerifiesFactsWithTheLlm) {
  server_->Enqueue(FakeResponse::Completion("ans: REFUTED\nwhy: evidence says otherwise"));
  auto reasoner = MakeReasoner();
  ReasonRequest request;
  request.task = Task::kFactVerification;
  request.question = "KLEEFSTRA SYNDROME 1 is not associated with Gene EHMT1";
  request.backend = "fake";
  auto result = reasoner->Reason(request, Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->fact_label, FactLabel::kRefuted);
  EXPECT_EQ(result->prompt_version, "fact.v2");
}

TEST_F(ReasonerTest, PersistentServerErrorIsUnavailableWhenConfiguredToFail) {
  options_.on_llm_failure = LlmFailurePolicy::kReturnError;
  server_->SetDefault(FakeResponse::Error(500, "boom"));
  auto reasoner = MakeReasoner();
  auto result = reasoner->Reason(McqRequest("fake"), Deadline());
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(server_->request_count(), 2);  // max_retries = 1
}

TEST_F(ReasonerTest, PersistentServerErrorFallsBackToADegradedExtractiveAnswer) {
  server_->SetDefault(FakeResponse::Error(503, "overloaded"));
  auto reasoner = MakeReasoner();
  auto result = reasoner->Reason(McqRequest("fake"), Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->option_index, 1);
  EXPECT_EQ(result->backend, "extractive");
  EXPECT_FALSE(result->used_llm);
  ASSERT_TRUE(result->degraded());
  EXPECT_EQ(result->degradations[0].component, "llm");
  EXPECT_THAT(result->degradations[0].reason, HasSubstr("backend 'fake' UNAVAILABLE"));
  EXPECT_THAT(result->degradations[0].reason, HasSubstr("extractive"));
  EXPECT_TRUE(HasTiming(*result, "llm"));
  EXPECT_TRUE(HasTiming(*result, "extractive"));
}

TEST_F(ReasonerTest, MalformedJsonFallsBackWithAClearReason) {
  server_->SetDefault(FakeResponse::Raw(200, "<html>gateway</html>"));
  auto reasoner = MakeReasoner();
  auto result = reasoner->Reason(McqRequest("fake"), Deadline());
  ASSERT_OK(result);
  ASSERT_TRUE(result->degraded());
  EXPECT_THAT(result->degradations[0].reason, HasSubstr("INTERNAL"));
  EXPECT_THAT(result->degradations[0].reason, HasSubstr("malformed JSON"));
}

TEST_F(ReasonerTest, SlowLlmPastTheDeadlineIsDeadlineExceeded) {
  options_.on_llm_failure = LlmFailurePolicy::kReturnError;
  FakeResponse slow = FakeResponse::Completion("ans: A");
  slow.delay = absl::Seconds(8);
  server_->SetDefault(slow);
  auto reasoner = MakeReasoner();
  auto result = reasoner->Reason(McqRequest("fake"), Deadline(absl::Milliseconds(300)));
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_F(ReasonerTest, SelfConsistencyVotesAndReportsAgreement) {
  server_->SetHandler([](const RecordedRequest& request) {
    return FakeResponse::Completion(TemperatureOf(request) == 0.0 ? "ans: B" : "ans: C");
  });
  auto reasoner = MakeReasoner();
  ReasonRequest request = McqRequest("fake");
  request.self_consistency.samples = 3;
  request.self_consistency.temperatures = {0.0, 0.3, 0.5};
  auto result = reasoner->Reason(request, Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->option_letter, "C");
  EXPECT_DOUBLE_EQ(result->agreement, 2.0 / 3.0);
  ASSERT_EQ(result->votes.size(), 3u);
  EXPECT_EQ(result->votes[0].temperature, 0.0);
  EXPECT_EQ(result->votes[0].answer, "B");
  EXPECT_EQ(result->votes[1].answer, "C");
  EXPECT_EQ(result->votes[2].answer, "C");
  EXPECT_EQ(result->raw_output, "ans: C");

  std::vector<int> seeds;
  for (const RecordedRequest& recorded : server_->requests()) {
    seeds.push_back(nlohmann::json::parse(recorded.body)["seed"].get<int>());
  }
  std::sort(seeds.begin(), seeds.end());
  EXPECT_THAT(seeds, ElementsAre(0, 1, 2));
}

TEST_F(ReasonerTest, SelfConsistencyTieGoesToTheLowestTemperature) {
  server_->SetHandler([](const RecordedRequest& request) {
    const double t = TemperatureOf(request);
    return FakeResponse::Completion(t == 0.5 || t == 0.7 ? "ans: A" : "ans: C");
  });
  auto reasoner = MakeReasoner();
  ReasonRequest request = McqRequest("fake");
  request.self_consistency.temperatures = {0.7, 0.5, 0.3, 0.0};  // samples = 4
  auto result = reasoner->Reason(request, Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->option_letter, "C");  // 0.0 voted C
  EXPECT_DOUBLE_EQ(result->agreement, 0.5);
  EXPECT_FALSE(result->low_confidence);
}

TEST_F(ReasonerTest, SelfConsistencyVotesOverTheSamplesThatAnswered) {
  server_->SetHandler([](const RecordedRequest& request) {
    return TemperatureOf(request) == 0.5 ? FakeResponse::Error(500, "sample crashed")
                                         : FakeResponse::Completion("ans: B");
  });
  auto reasoner = MakeReasoner();
  ReasonRequest request = McqRequest("fake");
  request.self_consistency.samples = 3;  // default schedule 0, 0.3, 0.5
  auto result = reasoner->Reason(request, Deadline());
  ASSERT_OK(result);
  EXPECT_EQ(result->option_letter, "B");
  EXPECT_EQ(result->votes.size(), 2u);
  EXPECT_DOUBLE_EQ(result->agreement, 1.0);
  ASSERT_TRUE(result->degraded());
  EXPECT_THAT(result->degradations[0].reason, HasSubstr("1 of 3"));
}

TEST_F(ReasonerTest, StreamDeliversTokensInOrderThenTheParsedAnswer) {
  FakeResponse stream = FakeResponse::Stream({"ans", ": ", "B", ") Asp", "irin"});
  stream.event_interval = absl::Milliseconds(2);
  server_->Enqueue(stream);
  auto reasoner = MakeReasoner();
  std::vector<std::string> tokens;
  auto result = reasoner->ReasonStream(McqRequest("fake"), Deadline(),
                                       [&tokens](absl::string_view t) { tokens.emplace_back(t); });
  ASSERT_OK(result);
  EXPECT_THAT(tokens, ElementsAre("ans", ": ", "B", ") Asp", "irin"));
  EXPECT_EQ(result->option_letter, "B");
  EXPECT_EQ(result->raw_output, "ans: B) Aspirin");
}

TEST_F(ReasonerTest, StreamOnTheExtractiveBackendReturnsTheResultWithoutTokens) {
  auto reasoner = MakeReasoner();
  int tokens = 0;
  auto result = reasoner->ReasonStream(McqRequest(""), Deadline(),
                                       [&tokens](absl::string_view) { ++tokens; });
  ASSERT_OK(result);
  EXPECT_EQ(tokens, 0);
  EXPECT_EQ(result->option_index, 1);
}

TEST_F(ReasonerTest, NeverLogsQuestionOrModelOutputByDefault) {
  server_->Enqueue(FakeResponse::Completion("ans: B) Aspirin SECRET-OUTPUT"));
  auto reasoner = MakeReasoner();
  ASSERT_OK(reasoner->Reason(McqRequest("fake"), Deadline()));
  const std::string logs = logs_.All();
  EXPECT_THAT(logs, HasSubstr("request_id=req-1"));
  EXPECT_THAT(logs, Not(HasSubstr("myocardial")));
  EXPECT_THAT(logs, Not(HasSubstr("SECRET-OUTPUT")));
  EXPECT_THAT(logs, Not(HasSubstr("Aspirin")));
}

TEST_F(ReasonerTest, LogsPatientTextOnlyWhenTheDebugOptionIsSet) {
  options_.log_patient_text = true;
  server_->Enqueue(FakeResponse::Completion("ans: B) Aspirin SECRET-OUTPUT"));
  auto reasoner = MakeReasoner();
  ASSERT_OK(reasoner->Reason(McqRequest("fake"), Deadline()));
  EXPECT_THAT(logs_.All(), HasSubstr(kQuestion));
  EXPECT_THAT(logs_.All(), HasSubstr("SECRET-OUTPUT"));
}

TEST_F(ReasonerTest, CreateRejectsDuplicateBackendNames) {
  options_.backends.push_back(options_.backends[0]);
  auto reasoner = Reasoner::Create(options_);
  EXPECT_THAT(reasoner, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
}

TEST_F(ReasonerTest, ListsBackendNamesInConfigOrder) {
  LlmBackendConfig second = options_.backends[0];
  second.name = "another";
  options_.backends.push_back(second);
  auto reasoner = MakeReasoner();
  EXPECT_THAT(reasoner->BackendNames(), ElementsAre("fake", "another"));
}

}  // namespace
}  // namespace ibgraphrag::reasoner
