#include "tools/eval/answer_format.h"

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/eval/command_line.h"

namespace ibgraphrag::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

v1::AnswerResponse SampleResponse(int evidence) {
  v1::AnswerResponse response;
  v1::Answer* answer = response.mutable_answer();
  answer->set_text("A) metformin");
  answer->set_option_index(0);
  answer->set_option_letter("A");
  answer->set_rationale("metformin -[drug treats disease]-> type 2 diabetes mellitus");
  answer->set_backend("extractive");
  answer->set_parsed(true);
  answer->set_confidence(2.5);
  answer->set_low_confidence(true);
  v1::AlignedEntity* entity = response.add_entities();
  entity->mutable_entity()->set_name("type 2 diabetes mellitus");
  entity->mutable_entity()->set_type("Disease");
  entity->mutable_entity()->set_external_id("DOID:9352");
  entity->set_question_similarity(0.81f);
  entity->set_relatedness(0.42f);
  entity->set_consistency(0.65f);
  for (int i = 0; i < evidence; ++i) {
    v1::EvidenceTriple* triple = response.add_evidence();
    triple->mutable_head()->set_name("metformin");
    triple->set_relation("drug treats disease");
    triple->mutable_tail()->set_name("type 2 diabetes mellitus");
    triple->set_score(0.9f - 0.01f * i);
    triple->set_source("hetionet");
    triple->set_hop(1);
  }
  v1::ReasoningPath* path = response.add_paths();
  path->add_triple_indices(0);
  path->set_score(0.9f);
  path->set_text("metformin -[drug treats disease]-> type 2 diabetes mellitus");
  v1::StageTiming* timing = response.add_timings();
  timing->set_stage("align");
  timing->set_duration_ms(3.0);
  timing = response.add_timings();
  timing->set_stage("retrieve");
  timing->set_duration_ms(7.0);
  v1::Degradation* degraded = response.add_degraded();
  degraded->set_component("llm");
  degraded->set_reason("llm UNAVAILABLE; extractive answer");
  response.mutable_versions()->set_kg_version("1");
  response.set_request_id("req-42");
  return response;
}

TEST(FormatAnswerTextTest, ShowsAnswerEntitiesEvidenceCountsTimingsDegradationsAndIds) {
  AnswerFormatOptions options;
  options.max_evidence = 10;
  const std::string text = FormatAnswerText(SampleResponse(12), options);
  EXPECT_THAT(text, HasSubstr("Answer: A) metformin\n"));
  EXPECT_THAT(text, HasSubstr("option A, backend extractive"));
  EXPECT_THAT(text, HasSubstr("caution: low confidence"));
  EXPECT_THAT(text, HasSubstr("Rationale: metformin -[drug treats disease]->"));
  EXPECT_THAT(text, HasSubstr("type 2 diabetes mellitus"));
  EXPECT_THAT(text, HasSubstr("DOID:9352"));
  EXPECT_THAT(text, HasSubstr(" 0.810  0.420  0.650"));
  EXPECT_THAT(text, HasSubstr("Evidence (10 of 12 triples shown, best first)"));
  EXPECT_THAT(text, HasSubstr("0.900  metformin -[drug treats disease]-> type 2 diabetes "
                              "mellitus  (hetionet, hop 1)"));
  EXPECT_THAT(text, Not(HasSubstr("   10  ")));  // the 11th triple is not listed
  EXPECT_THAT(text, HasSubstr("Reasoning paths (1 of 1 shown)"));
  EXPECT_THAT(text, HasSubstr("Timings: align 3.0 ms, retrieve 7.0 ms; stages sum 10.0 ms"));
  EXPECT_THAT(text, HasSubstr("llm: llm UNAVAILABLE; extractive answer"));
  EXPECT_THAT(text, HasSubstr("Versions: kg 1, alignment bundle -"));
  EXPECT_THAT(text, HasSubstr("Request id: req-42"));
}

TEST(FormatAnswerTextTest, EvidenceListsEverySourceWithItsLicenceScoreAndNote) {
  v1::AnswerResponse response;
  v1::EvidenceTriple* triple = response.add_evidence();
  triple->mutable_head()->set_name("INS");
  triple->set_relation("gene associated with disease");
  triple->mutable_tail()->set_name("type 2 diabetes mellitus");
  triple->set_score(0.5f);
  triple->set_source("gwas-catalog");
  triple->add_sources("gwas-catalog");
  triple->add_licenses("CC BY 4.0");
  triple->add_sources("curation");
  triple->add_licenses("");
  triple->set_source_score(0.62f);
  triple->set_source_note("trait 'type 2 diabetes' (exact)");
  EXPECT_THAT(FormatAnswerText(response),
              HasSubstr("(gwas-catalog [CC BY 4.0] + curation, source score 0.62, trait 'type 2 "
                        "diabetes' (exact))"));
}

TEST(FormatAnswerTextTest, SubStagesGroupUnderTheirStageAndTotalsComeLast) {
  v1::AnswerResponse response;
  for (const auto& [stage, ms] :
       std::vector<std::pair<std::string, double>>{{"align.mentions", 0.1},
                                                   {"align.candidates", 20.7},
                                                   {"align", 23.4},
                                                   {"retrieve", 39.5},
                                                   {"total", 64.7},
                                                   {"gateway_overhead", 0.2}}) {
    v1::StageTiming* timing = response.add_timings();
    timing->set_stage(stage);
    timing->set_duration_ms(ms);
  }
  EXPECT_THAT(FormatAnswerText(response),
              HasSubstr("Timings: align 23.4 ms (mentions 0.1 ms, candidates 20.7 ms), retrieve "
                        "39.5 ms; total 64.7 ms, gateway overhead 0.2 ms\n"));
}

TEST(FormatAnswerTextTest, FactVerdictAndEmptyResponse) {
  v1::AnswerResponse verdict;
  verdict.mutable_answer()->set_label(v1::FACT_LABEL_REFUTED);
  verdict.mutable_answer()->set_parsed(true);
  EXPECT_THAT(FormatAnswerText(verdict), HasSubstr("Answer: REFUTED\n"));
  verdict.mutable_answer()->set_text("REFUTED: the evidence contradicts it");
  verdict.mutable_answer()->set_rationale("line one\nline two");
  const std::string text = FormatAnswerText(verdict);
  EXPECT_THAT(text, HasSubstr("Answer: REFUTED: the evidence contradicts it\n"));
  EXPECT_THAT(text, HasSubstr("Rationale: line one\n    line two\n"));
  const std::string empty = FormatAnswerText(v1::AnswerResponse());
  EXPECT_THAT(empty, HasSubstr("Answer: (no answer)"));
  EXPECT_THAT(empty, HasSubstr("none: no entity of the question was recognised"));
  EXPECT_THAT(empty, HasSubstr("Evidence (0 of 0 triples shown"));
  EXPECT_THAT(empty, HasSubstr("Degraded: no"));
}

TEST(MessageToJsonTest, PrintsDefaultValuesSoOptionZeroIsVisible) {
  auto json = MessageToJson(SampleResponse(1), /*pretty=*/false);
  ASSERT_OK(json);
  const nlohmann::json parsed = nlohmann::json::parse(*json);
  EXPECT_EQ(parsed["answer"]["optionIndex"], 0);
  EXPECT_EQ(parsed["answer"]["optionLetter"], "A");
  EXPECT_EQ(parsed["requestId"], "req-42");
  EXPECT_EQ(parsed["evidence"].size(), 1u);
  EXPECT_EQ(parsed["degraded"][0]["component"], "llm");
}

TEST(FormatStageEventTest, StageDurationAndSummary) {
  v1::StageEvent event;
  event.set_stage("align");
  event.set_duration_ms(3.14);
  event.set_summary("3 entities kept");
  EXPECT_EQ(FormatStageEvent(event), "[align] 3.1 ms  3 entities kept");
}

TEST(CommandLineTest, RepeatedFlagValuesInEveryForm) {
  const std::vector<std::string> argv = {"ibgr",     "ask",       "--option=aspirin, low dose",
                                         "-option",  "metformin", "--option",
                                         "insulin",  "--json",    "--top_k=10",
                                         "question", "--",        "--option=not a flag"};
  EXPECT_THAT(FlagValues(argv, "option"), ElementsAre("aspirin, low dose", "metformin", "insulin"));
  EXPECT_THAT(FlagValues(argv, "tau"), IsEmpty());
  EXPECT_TRUE(FlagGiven(argv, "top_k"));
  EXPECT_TRUE(FlagGiven(argv, "json"));
  EXPECT_FALSE(FlagGiven(argv, "tau"));
  EXPECT_FALSE(FlagGiven(argv, "opt"));
  EXPECT_TRUE(FlagGiven({"ibgr", "--nomsca"}, "msca"));
  EXPECT_TRUE(FlagGiven({"ibgr", "--msca=false"}, "msca"));
}

TEST(CommandLineTest, RedactsSecretValues) {
  EXPECT_EQ(
      RedactedCommandLine({"ibgr", "eval", "--api_key=s3cret", "--api_key", "other", "--dataset=x"},
                          {"api_key"}),
      "ibgr eval --api_key=*** --api_key *** --dataset=x");
  EXPECT_FALSE(ProcessCommandLine().empty());
}

TEST(FormatAnswerTextTest, ShowsCalibratedConfidenceAndAbstention) {
  v1::AnswerResponse response = SampleResponse(1);
  v1::Answer* answer = response.mutable_answer();
  answer->set_calibration("calibration/3");
  answer->set_confidence(0.21f);
  answer->set_raw_confidence(2.5f);
  answer->set_abstained(true);
  const std::string text = FormatAnswerText(response, AnswerFormatOptions());
  EXPECT_THAT(text, HasSubstr("confidence 0.21 (calibration/3; raw support 2.5)"));
  EXPECT_THAT(text, HasSubstr("abstained: the calibration does not trust the best candidate"));
  answer->set_calibration("uncalibrated");
  EXPECT_THAT(FormatAnswerText(response, AnswerFormatOptions()),
              HasSubstr("(raw support, uncalibrated)"));
}

}  // namespace
}  // namespace ibgraphrag::eval
