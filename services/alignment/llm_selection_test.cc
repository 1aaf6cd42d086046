#include "services/alignment/llm_selection.h"

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/openai_client.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/alignment/aligner.h"
#include "services/alignment/bundle.h"
#include "services/alignment/testing/test_fixtures.h"

namespace ibgraphrag::alignment {
namespace {

using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::RecordedRequest;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

// ---------------------------------------------------------------------------------------------
// The answer parser.

const std::vector<SelectionCandidate>& Candidates() {
  static const auto* candidates = new std::vector<SelectionCandidate>{
      {"DOID:6000", "heart failure"}, {"DOID:5844", "myocardial infarction"}, {"7157", "TP53"}};
  return *candidates;
}

std::optional<size_t> Parse(const std::string& answer) {
  auto parsed = ParseLlmSelection(answer, Candidates());
  EXPECT_OK(parsed) << answer;
  return parsed.ok() ? *parsed : std::optional<size_t>(999);
}

void ExpectUnparsable(const std::string& answer) {
  auto parsed = ParseLlmSelection(answer, Candidates());
  EXPECT_THAT(parsed, Not(IsOk())) << answer;
  if (!parsed.ok()) {
    EXPECT_THAT(parsed, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("LLM selection")));
  }
}

TEST(ParseLlmSelectionTest, ThePapersJsonWithAnIntegerIndex) {
  EXPECT_EQ(Parse(R"({"selected_entity": {"name": "myocardial infarction", "id": 1,
                      "reason": "the question names a heart attack"}})"),
            1u);
  EXPECT_EQ(Parse("```json\n{\"selected_entity\": {\"name\": \"heart failure\", \"id\": 0, "
                  "\"reason\": \"r\"}}\n```"),
            0u);
  EXPECT_EQ(Parse(R"(Sure, here it is: {"selected_entity": {"id": 2}} Hope this helps.)"), 2u);
  EXPECT_EQ(Parse(R"({"selected_entity": {"id": 1.0}})"), 1u);
  EXPECT_EQ(Parse(R"({"selected_entity": 0})"), 0u);
  EXPECT_EQ(Parse(R"({"id": 1, "name": "myocardial infarction"})"), 1u);
}

TEST(ParseLlmSelectionTest, JsonWithAnEntityIdOrDigitsOrOnlyAName) {
  EXPECT_EQ(Parse(R"({"selected_entity": {"name": "a", "id": "DOID:5844", "reason": "r"}})"), 1u);
  EXPECT_EQ(Parse(R"({"selected_entity": {"id": "DOID:6000"}})"), 0u);
  EXPECT_EQ(Parse(R"({"selected_entity": {"id": "1"}})"), 1u);
  // An all-digit entity id wins over the index reading of the same digits.
  EXPECT_EQ(Parse(R"({"selected_entity": {"id": "7157"}})"), 2u);
  EXPECT_EQ(Parse(R"({"selected_entity": {"name": "Heart Failure", "reason": "r"}})"), 0u);
  EXPECT_EQ(Parse(R"({"selected_entity": "DOID:5844"})"), 1u);
}

TEST(ParseLlmSelectionTest, NoneInEveryForm) {
  for (const std::string answer :
       {R"({"selected_entity": "NONE"})", R"({"selected_entity": "none"})",
        R"({"selected_entity": null})", R"({"selected_entity": {"id": "NONE"}})",
        R"({"selected_entity": {"name": "NONE", "id": null}})", "NONE", "\"NONE\"", "none.",
        "None of the similar entities fits the question.", "`NONE`", "```\nNONE\n```"}) {
    EXPECT_EQ(Parse(answer), std::nullopt) << answer;
  }
}

TEST(ParseLlmSelectionTest, PlainIndexes) {
  EXPECT_EQ(Parse("2"), 2u);
  EXPECT_EQ(Parse(" 1\n"), 1u);
  EXPECT_EQ(Parse("[2]"), 2u);
  EXPECT_EQ(Parse("(0)"), 0u);
  EXPECT_EQ(Parse("Answer: 1"), 1u);
  EXPECT_EQ(Parse("answer = 0"), 0u);
  EXPECT_EQ(Parse("The answer is 2."), 2u);
  EXPECT_EQ(Parse("Final answer: [1]"), 1u);
  EXPECT_EQ(Parse("id: 0"), 0u);
  EXPECT_EQ(Parse("1. myocardial infarction"), 1u);
  EXPECT_EQ(Parse("**1**"), 1u);
  EXPECT_EQ(Parse("```\n2\n```"), 2u);
  EXPECT_EQ(Parse("#0"), 0u);
}

TEST(ParseLlmSelectionTest, PlainEntityIds) {
  EXPECT_EQ(Parse("DOID:5844"), 1u);
  EXPECT_EQ(Parse("  \"DOID:6000\".  "), 0u);
  EXPECT_EQ(Parse("id: DOID:5844"), 1u);
  EXPECT_EQ(Parse("7157"), 2u);  // the entity id, not index 7157
}

TEST(ParseLlmSelectionTest, AnythingElseIsUnparsableNeverACrash) {
  ExpectUnparsable("");
  ExpectUnparsable("   ");
  ExpectUnparsable("I think pneumonia");
  ExpectUnparsable("pneumonia");
  ExpectUnparsable("3");  // out of range (3 candidates: 0..2)
  ExpectUnparsable("[17]");
  ExpectUnparsable("-1");
  ExpectUnparsable("99999999999999999999999");  // too long to be an index
  ExpectUnparsable("2nd");
  ExpectUnparsable("DOID:9999");  // not a candidate
  ExpectUnparsable(R"({"selected_entity": {"id": 3}})");
  ExpectUnparsable(R"({"selected_entity": {"id": -1}})");
  ExpectUnparsable(R"({"selected_entity": {"id": 1.5}})");
  ExpectUnparsable(R"({"selected_entity": {"id": 1e300}})");
  ExpectUnparsable(R"({"selected_entity": {"id": "DOID:1"}})");
  ExpectUnparsable(R"({"selected_entity": {"id": true}})");
  ExpectUnparsable(R"({"selected_entity": {"id": [1]}})");
  ExpectUnparsable(R"({"selected_entity": {"reason": "no id"}})");
  ExpectUnparsable(R"({"selected_entity": {"name": "lupus"}})");
  ExpectUnparsable(R"({"selected_entity": [1, 2]})");
  ExpectUnparsable(R"({"selected_entity": {"id": 1,}})");  // malformed JSON, no index either
  ExpectUnparsable("{{{{");
  ExpectUnparsable("\xFF\xFE garbage");
  // An empty candidate list accepts NONE only.
  EXPECT_THAT(ParseLlmSelection("0", {}), Not(IsOk()));
  EXPECT_EQ(*ParseLlmSelection("NONE", {}), std::nullopt);
}

TEST(ParseLlmSelectionTest, ErrorsNeverQuoteTheAnswer) {
  auto parsed = ParseLlmSelection("secret patient words", Candidates());
  ASSERT_THAT(parsed, Not(IsOk()));
  EXPECT_THAT(parsed.status().message(), Not(HasSubstr("secret")));
  parsed = ParseLlmSelection(R"({"selected_entity": {"id": "secret-id"}})", Candidates());
  ASSERT_THAT(parsed, Not(IsOk()));
  EXPECT_THAT(parsed.status().message(), Not(HasSubstr("secret")));
}

// ---------------------------------------------------------------------------------------------
// The step on the three-entity lexicon of aligner_test (see the numbers there). The question
// "Heart attack or pneumonia with fever" has two mentions: "Heart attack" (heart failure C 0.622
// and myocardial infarction C 0.603 on raw cosines) and "pneumonia" (pneumonia C 0.363). At
// tau 0.65 nothing is kept, so both mentions qualify for the rescue. Before the filter, each
// mention's top 3 holds one entity the dictionary names ("heart attack" is a synonym of
// myocardial infarction), fewer than 5, so both are asked too.

constexpr char kQuestion[] = "Heart attack or pneumonia with fever";

class LlmSelectionStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    encoder_ = std::make_shared<testing::KeywordEncoder>();
    BundleBuildOptions build;
    build.base_path = common::test_util::MakeTempDir("align-llm-selection");
    auto built = BuildAlignmentBundle(testing::TinyLexicon(), *encoder_, build);
    ASSERT_OK(built);
    auto bundle = LoadAlignmentBundle(built->dir);
    ASSERT_OK(bundle);
    bundle_ = *bundle;
    auto server = FakeOpenAiServer::Start();
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  std::unique_ptr<Aligner> MakeAligner(AlignerOptions options = {}) {
    common::OpenAiClientOptions config;
    config.name = "test";
    config.base_url = server_->base_url();
    config.model = "m";
    config.max_retries = 0;
    auto llm = common::OpenAiClient::Create(config);
    EXPECT_OK(llm);
    auto aligner = Aligner::Create(bundle_, encoder_, *std::move(llm), options);
    EXPECT_OK(aligner);
    return aligner.ok() ? *std::move(aligner) : nullptr;
  }

  // The paper's raw cosines, K = 3, nothing kept at tau 0.65.
  // The rescue order (the LLM picks among rejected candidates after the tau split).
  static MscaOptions NothingKept() {
    MscaOptions options;
    options.top_k = 3;
    options.tau = 0.65f;
    options.calibrated = false;
    options.llm_choice_below = 5;
    options.llm_step = LlmStep::kRescueRejected;
    return options;
  }

  // The paper's order: the LLM picks among each mention's top 3, then tau filters.
  static MscaOptions BeforeTheFilter(float tau) {
    MscaOptions options = NothingKept();
    options.tau = tau;
    options.llm_step = LlmStep::kBeforeFilter;
    return options;
  }

  // The user message of a recorded chat request.
  static std::string Prompt(const RecordedRequest& request) {
    const auto body = nlohmann::json::parse(request.body);
    return body["messages"][1]["content"].get<std::string>();
  }

  static const ScoredEntity* Find(const std::vector<ScoredEntity>& list, const std::string& id) {
    for (const ScoredEntity& s : list) {
      if (s.candidate.external_id == id) return &s;
    }
    return nullptr;
  }

  std::shared_ptr<testing::KeywordEncoder> encoder_;
  std::shared_ptr<const AlignmentBundle> bundle_;
  std::unique_ptr<FakeOpenAiServer> server_;
};

TEST_F(LlmSelectionStepTest, PlanAsksPerMentionWithFewestKeptFirst) {
  auto aligner = Aligner::Create(bundle_, encoder_, nullptr);
  ASSERT_OK(aligner);
  auto result = (*aligner)->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  std::string mentions;
  for (const Mention& m : result->mentions) absl::StrAppend(&mentions, "[", m.text, "] ");
  ASSERT_EQ(result->mentions.size(), 2u) << mentions;
  ASSERT_TRUE(result->kept.empty());
  std::vector<LlmSelectionQuery> plan = PlanLlmSelection(*result, 5, 8, 20);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].mention_index, 0);
  ASSERT_EQ(plan[0].rejected.size(), 2u);
  EXPECT_EQ(result->rejected[plan[0].rejected[0]].candidate.external_id, "DOID:6000");
  EXPECT_EQ(result->rejected[plan[0].rejected[1]].candidate.external_id, "DOID:5844");
  EXPECT_EQ(plan[1].mention_index, 1);
  ASSERT_EQ(plan[1].rejected.size(), 1u);
  EXPECT_EQ(result->rejected[plan[1].rejected[0]].candidate.external_id, "DOID:552");
  // Caps: one candidate per mention, one mention per request.
  EXPECT_EQ(PlanLlmSelection(*result, 5, 8, 1)[0].rejected.size(), 1u);
  EXPECT_EQ(PlanLlmSelection(*result, 5, 1, 20).size(), 1u);

  // At tau 0.6 "Heart attack" keeps two entities (no rejected left) and "pneumonia" none: with
  // choice_below 2 only "pneumonia" qualifies, and with 1 too (0 kept < 1).
  MscaOptions options = NothingKept();
  options.tau = 0.6f;
  result = (*aligner)->Align(kQuestion, options);
  ASSERT_OK(result);
  ASSERT_EQ(result->kept.size(), 2u);
  plan = PlanLlmSelection(*result, 1, 8, 20);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].mention_index, 1);
  EXPECT_TRUE(PlanLlmSelection(*result, 0, 8, 20).empty());
}

TEST_F(LlmSelectionStepTest, OnePromptPerMentionListingOnlyItsCandidates) {
  // "Heart attack": index 1 of [heart failure, myocardial infarction]; "pneumonia": NONE.
  server_->SetHandler([](const RecordedRequest& request) {
    return FakeResponse::Completion(
        absl::StrContains(Prompt(request), "query_entity: Heart attack")
            ? R"({"selected_entity": {"name": "myocardial infarction", "id": 1, "reason": "r"}})"
            : R"({"selected_entity": "NONE"})");
  });
  auto aligner = MakeAligner();
  auto result = aligner->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  EXPECT_TRUE(result->degraded.empty()) << result->degraded[0].reason;

  const std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  std::string heart, pneumonia;
  for (const RecordedRequest& r : requests) {
    const std::string prompt = Prompt(r);
    EXPECT_THAT(prompt, HasSubstr("Q: Heart attack or pneumonia with fever"));
    EXPECT_THAT(nlohmann::json::parse(r.body)["messages"][0]["content"].get<std::string>(),
                HasSubstr("context-aware biomedical assistant"));
    (absl::StrContains(prompt, "query_entity: Heart attack") ? heart : pneumonia) = prompt;
  }
  EXPECT_THAT(heart, HasSubstr("0. heart failure (disease; DOID:6000)"));
  EXPECT_THAT(heart, HasSubstr("1. myocardial infarction (disease; DOID:5844): Death of heart"));
  EXPECT_THAT(heart, Not(HasSubstr("DOID:552")));
  EXPECT_THAT(pneumonia, HasSubstr("query_entity: pneumonia"));
  EXPECT_THAT(pneumonia, HasSubstr("0. pneumonia (disease; DOID:552)"));
  EXPECT_THAT(pneumonia, Not(HasSubstr("DOID:5844")));
  EXPECT_THAT(pneumonia, Not(HasSubstr("DOID:6000")));

  // The index picked myocardial infarction; NONE kept nothing for "pneumonia".
  ASSERT_EQ(result->kept.size(), 1u);
  EXPECT_EQ(result->kept[0].candidate.external_id, "DOID:5844");
  EXPECT_TRUE(result->kept[0].chosen_by_llm);
  EXPECT_EQ(result->kept[0].mention_index, 0);
  ASSERT_EQ(result->rejected.size(), 2u);
  EXPECT_NE(Find(result->rejected, "DOID:6000"), nullptr);
  EXPECT_NE(Find(result->rejected, "DOID:552"), nullptr);
  EXPECT_FALSE(Find(result->rejected, "DOID:552")->chosen_by_llm);
  bool timed = false;
  for (const StageTiming& t : result->timings) timed |= t.stage == "llm";
  EXPECT_TRUE(timed);
}

TEST_F(LlmSelectionStepTest, PlainIndexAnswerMovesTheEntityToKept) {
  server_->SetDefault(FakeResponse::Completion("Answer: [0]"));
  auto aligner = MakeAligner();
  auto result = aligner->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  EXPECT_TRUE(result->degraded.empty());
  ASSERT_EQ(result->kept.size(), 2u);  // index 0 of each mention's list
  EXPECT_NE(Find(result->kept, "DOID:6000"), nullptr);
  EXPECT_NE(Find(result->kept, "DOID:552"), nullptr);
  for (const ScoredEntity& s : result->kept) EXPECT_TRUE(s.chosen_by_llm);
  ASSERT_EQ(result->rejected.size(), 1u);
  EXPECT_EQ(result->rejected[0].candidate.external_id, "DOID:5844");
}

TEST_F(LlmSelectionStepTest, NoneEverywhereKeepsTheThresholdResult) {
  server_->SetDefault(FakeResponse::Completion("NONE"));
  auto aligner = MakeAligner();
  auto result = aligner->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  EXPECT_EQ(server_->request_count(), 2);
  EXPECT_TRUE(result->kept.empty());
  EXPECT_EQ(result->rejected.size(), 3u);
  EXPECT_TRUE(result->degraded.empty());
}

TEST_F(LlmSelectionStepTest, FailuresDegradeButStillAnswer) {
  // An HTTP error for one mention, an out-of-range index for the other.
  server_->Enqueue(FakeResponse::Error(500, "boom"));
  server_->Enqueue(FakeResponse::Completion("7"));
  AlignerOptions limits;
  limits.llm_parallelism = 1;  // the queue order is then the plan order
  auto aligner = MakeAligner(limits);
  auto result = aligner->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  EXPECT_TRUE(result->kept.empty());
  EXPECT_EQ(result->rejected.size(), 3u);
  ASSERT_EQ(result->degraded.size(), 1u);
  EXPECT_EQ(result->degraded[0].component, "alignment_llm");
  EXPECT_THAT(result->degraded[0].reason, HasSubstr("LLM selection failed for 2 of 2 mentions"));

  // One mention fails (unparsable), the other's choice still counts.
  server_->Enqueue(FakeResponse::Completion("I think a heart problem"));
  server_->Enqueue(FakeResponse::Completion("0"));
  result = aligner->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  ASSERT_EQ(result->kept.size(), 1u);
  EXPECT_EQ(result->kept[0].candidate.external_id, "DOID:552");
  ASSERT_EQ(result->degraded.size(), 1u);
  EXPECT_THAT(result->degraded[0].reason, HasSubstr("failed for 1 of 2 mentions"));
}

TEST_F(LlmSelectionStepTest, ATimeoutDegradesWithinTheCallLimit) {
  FakeResponse slow = FakeResponse::Completion("0");
  slow.delay = absl::Seconds(5);
  server_->SetDefault(slow);
  AlignerOptions limits;
  limits.llm_timeout = absl::Milliseconds(300);
  auto aligner = MakeAligner(limits);
  const absl::Time start = absl::Now();
  auto result = aligner->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  // Each call was cut at its 300 ms limit, not left to the server's 5 s delay; and the two
  // mentions' calls ran at once: the second reached the server well within the first's limit (one
  // after the other, it is sent only when the first gives up, 300 ms later: with
  // llm_parallelism = 1 this check fails at 300.1 ms).
  EXPECT_LT(absl::Now() - start, slow.delay);
  const std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_LT(absl::AbsDuration(requests[1].received_at - requests[0].received_at),
            limits.llm_timeout / 2);
  EXPECT_TRUE(result->kept.empty());
  ASSERT_EQ(result->degraded.size(), 1u);
  EXPECT_THAT(result->degraded[0].reason, HasSubstr("DEADLINE_EXCEEDED"));
}

TEST_F(LlmSelectionStepTest, CallsRunConcurrentlyUpToTheParallelism) {
  FakeResponse slow = FakeResponse::Completion("NONE");
  slow.delay = absl::Milliseconds(400);
  server_->SetDefault(slow);
  auto parallel = MakeAligner();  // llm_parallelism 4 by default
  ASSERT_OK(parallel->Align(kQuestion, NothingKept()));
  EXPECT_EQ(server_->max_concurrent(), 2);

  auto restarted = FakeOpenAiServer::Start();
  ASSERT_OK(restarted);
  server_ = *std::move(restarted);
  server_->SetDefault(slow);
  AlignerOptions limits;
  limits.llm_parallelism = 1;
  auto serial = MakeAligner(limits);
  ASSERT_OK(serial->Align(kQuestion, NothingKept()));
  EXPECT_EQ(server_->request_count(), 2);
  EXPECT_EQ(server_->max_concurrent(), 1);
}

TEST_F(LlmSelectionStepTest, MentionCapBoundsTheCalls) {
  server_->SetDefault(FakeResponse::Completion("NONE"));
  AlignerOptions limits;
  limits.max_llm_mentions = 1;
  auto aligner = MakeAligner(limits);
  ASSERT_OK(aligner->Align(kQuestion, NothingKept()));
  ASSERT_EQ(server_->request_count(), 1);
  EXPECT_THAT(Prompt(server_->requests()[0]), HasSubstr("query_entity: Heart attack"));
}

TEST_F(LlmSelectionStepTest, NoCallWhenOffOrEveryMentionHasEnough) {
  auto aligner = MakeAligner();
  MscaOptions options = NothingKept();
  options.llm_choice_below = 0;
  ASSERT_OK(aligner->Align(kQuestion, options));
  options = NothingKept();
  options.msca_enabled = false;
  ASSERT_OK(aligner->Align(kQuestion, options));
  options = NothingKept();
  options.tau = 0.0f;  // every candidate kept: no mention has a rejected one
  auto result = aligner->Align(kQuestion, options);
  ASSERT_OK(result);
  EXPECT_TRUE(result->degraded.empty());
  EXPECT_EQ(server_->request_count(), 0);
}

TEST_F(LlmSelectionStepTest, NotConfiguredMeansNoCallAndNoDegradation) {
  auto aligner = Aligner::Create(bundle_, encoder_, nullptr);
  ASSERT_OK(aligner);
  auto result = (*aligner)->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  EXPECT_TRUE(result->degraded.empty());
  EXPECT_TRUE(result->kept.empty());
  EXPECT_EQ(server_->request_count(), 0);
}

TEST_F(LlmSelectionStepTest, LimitsAreValidatedNamingTheField) {
  AlignerOptions limits;
  limits.max_llm_mentions = 0;
  EXPECT_THAT(Aligner::Create(bundle_, encoder_, nullptr, limits).status().message(),
              HasSubstr("max_llm_mentions"));
  limits = AlignerOptions();
  limits.max_llm_candidates = 101;
  EXPECT_THAT(Aligner::Create(bundle_, encoder_, nullptr, limits).status().message(),
              HasSubstr("max_llm_candidates"));
  limits = AlignerOptions();
  limits.llm_parallelism = 33;
  EXPECT_THAT(Aligner::Create(bundle_, encoder_, nullptr, limits).status().message(),
              HasSubstr("llm_parallelism"));
  limits = AlignerOptions();
  limits.llm_timeout = absl::ZeroDuration();
  EXPECT_THAT(Aligner::Create(bundle_, encoder_, nullptr, limits).status().message(),
              HasSubstr("llm_timeout"));
}

// ---------------------------------------------------------------------------------------------
// Before the filter (the paper's order).

const ScoredEntity* FindIn(const std::vector<ScoredEntity>& list, const std::string& id) {
  for (const ScoredEntity& s : list) {
    if (s.candidate.external_id == id) return &s;
  }
  return nullptr;
}

TEST_F(LlmSelectionStepTest, BeforeTheFilterTheLlmPicksPerMentionAndTauStillDecides) {
  // "Heart attack": heart failure (by name, wherever it stands in the list); "pneumonia": NONE.
  server_->SetHandler([](const RecordedRequest& request) {
    return FakeResponse::Completion(
        absl::StrContains(Prompt(request), "query_entity: Heart attack")
            ? R"({"selected_entity": {"name": "heart failure", "reason": "r"}})"
            : R"({"selected_entity": "NONE"})");
  });
  auto aligner = MakeAligner();
  auto result = aligner->Align(kQuestion, BeforeTheFilter(0.0f));
  ASSERT_OK(result);
  EXPECT_TRUE(result->degraded.empty()) << result->degraded[0].reason;
  ASSERT_EQ(server_->request_count(), 2);
  for (const RecordedRequest& r : server_->requests()) {
    // Each mention's own top K, the entity its words name among them.
    const std::string prompt = Prompt(r);
    EXPECT_THAT(prompt, HasSubstr(absl::StrContains(prompt, "query_entity: Heart attack")
                                      ? "myocardial infarction (disease; DOID:5844)"
                                      : "pneumonia (disease; DOID:552)"));
  }
  // Only the pick forms the set the filter sees: alone, its R is 0 (R averages over the others).
  ASSERT_EQ(result->kept.size(), 1u);
  const ScoredEntity& hf = result->kept[0];
  EXPECT_EQ(hf.candidate.external_id, "DOID:6000");
  EXPECT_TRUE(hf.chosen_by_llm);
  EXPECT_FALSE(hf.excluded_by_llm);
  EXPECT_EQ(hf.raw_relatedness, 0.0f);
  // S = cos((2,1,0)/sqrt5, (1,0,1)/sqrt2) = 2/sqrt10; C = 0.6 S with lambda 0.4 and R 0.
  EXPECT_NEAR(hf.raw_question_similarity, 2.0 / std::sqrt(10.0), 1e-5);
  EXPECT_NEAR(hf.consistency, 0.6 * 2.0 / std::sqrt(10.0), 1e-5);
  // What the LLM passed over is listed, once, with R against the picks' set.
  const ScoredEntity* mi = FindIn(result->rejected, "DOID:5844");
  ASSERT_NE(mi, nullptr);
  EXPECT_TRUE(mi->excluded_by_llm);
  EXPECT_FALSE(mi->chosen_by_llm);
  EXPECT_NEAR(mi->raw_relatedness, 2.0 / std::sqrt(5.0), 1e-5);  // cos(MI, HF)
  const ScoredEntity* pneumonia = FindIn(result->rejected, "DOID:552");
  ASSERT_NE(pneumonia, nullptr);
  EXPECT_TRUE(pneumonia->excluded_by_llm);
  EXPECT_EQ(result->kept.size() + result->rejected.size(), 3u);
  bool timed = false;
  for (const StageTiming& t : result->timings) timed |= t.stage == "llm";
  EXPECT_TRUE(timed);

  // The pick faces tau like any candidate: C 0.379 < 0.65 keeps nothing. (The rescue order
  // would have kept it.)
  result = aligner->Align(kQuestion, BeforeTheFilter(0.65f));
  ASSERT_OK(result);
  EXPECT_TRUE(result->kept.empty());
  const ScoredEntity* rejected_pick = FindIn(result->rejected, "DOID:6000");
  ASSERT_NE(rejected_pick, nullptr);
  EXPECT_TRUE(rejected_pick->chosen_by_llm);
  EXPECT_FALSE(rejected_pick->excluded_by_llm);
  result = aligner->Align(kQuestion, NothingKept());
  ASSERT_OK(result);
  ASSERT_EQ(result->kept.size(), 1u);
  EXPECT_EQ(result->kept[0].candidate.external_id, "DOID:6000");
}

TEST_F(LlmSelectionStepTest, BeforeTheFilterAFailedMentionGoesThroughMscaWithoutIt) {
  server_->SetHandler([](const RecordedRequest& request) {
    return absl::StrContains(Prompt(request), "query_entity: Heart attack")
               ? FakeResponse::Error(500, "boom")
               : FakeResponse::Completion("NONE");
  });
  auto aligner = MakeAligner();
  auto result = aligner->Align(kQuestion, BeforeTheFilter(0.0f));
  ASSERT_OK(result);
  ASSERT_EQ(result->degraded.size(), 1u);
  EXPECT_EQ(result->degraded[0].component, "alignment_llm");
  EXPECT_THAT(result->degraded[0].reason, HasSubstr("failed for 1 of 2 mentions"));
  EXPECT_THAT(result->degraded[0].reason, HasSubstr("went through MSCA without it"));
  // "Heart attack" keeps its whole top K at tau 0; only what "pneumonia" alone proposed (its
  // NONE) is excluded.
  EXPECT_NE(FindIn(result->kept, "DOID:5844"), nullptr);
  EXPECT_NE(FindIn(result->kept, "DOID:6000"), nullptr);
  for (const ScoredEntity& s : result->kept) EXPECT_FALSE(s.chosen_by_llm);
}

TEST_F(LlmSelectionStepTest, BeforeTheFilterOnlyMentionsTheDictionaryDoesNotSettleAreAsked) {
  server_->SetDefault(FakeResponse::Completion("0"));
  auto aligner = MakeAligner();
  // Each mention has one named candidate: below 2 it is asked, below 1 it is not.
  MscaOptions options = BeforeTheFilter(0.0f);
  options.llm_choice_below = 1;
  auto result = aligner->Align(kQuestion, options);
  ASSERT_OK(result);
  EXPECT_EQ(server_->request_count(), 0);
  EXPECT_EQ(result->kept.size(), 3u);
  options.llm_choice_below = 2;
  ASSERT_OK(aligner->Align(kQuestion, options));
  EXPECT_EQ(server_->request_count(), 2);

  // The plan: fewest named first, each capped at max_candidates.
  auto plain = Aligner::Create(bundle_, encoder_, nullptr);
  ASSERT_OK(plain);
  auto linked = (*plain)->Link(kQuestion, 3);
  ASSERT_OK(linked);
  std::vector<LlmPreselectionQuery> plan = PlanLlmPreselection(linked->links, 2, 8, 2);
  ASSERT_EQ(plan.size(), 2u);
  for (const LlmPreselectionQuery& q : plan) EXPECT_LE(q.shown, 2u);
  EXPECT_TRUE(PlanLlmPreselection(linked->links, 1, 8, 20).empty());
  EXPECT_EQ(PlanLlmPreselection(linked->links, 2, 1, 20).size(), 1u);
}

}  // namespace
}  // namespace ibgraphrag::alignment
