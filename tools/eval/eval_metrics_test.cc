#include "tools/eval/eval_metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/eval/eval_report.h"

namespace ibgraphrag::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

QaItem Mcq(std::vector<std::string> options, int gold) {
  QaItem item;
  item.task = v1::TASK_MULTIPLE_CHOICE;
  item.options = std::move(options);
  item.gold_index = gold;
  item.gold_text = item.options[gold];
  item.gold_is_entity = true;
  return item;
}

QaItem Claim(v1::FactLabel gold) {
  QaItem item;
  item.task = v1::TASK_FACT_VERIFICATION;
  item.gold_label = gold;
  item.gold_text = gold == v1::FACT_LABEL_SUPPORTED ? "true" : "false";
  return item;
}

v1::AnswerResponse Answered(int option_index) {
  v1::AnswerResponse response;
  response.mutable_answer()->set_option_index(option_index);
  if (option_index >= 0) {
    response.mutable_answer()->set_option_letter(std::string(1, 'A' + option_index));
  }
  return response;
}

void AddEvidence(v1::AnswerResponse* response, const std::string& head, const std::string& tail) {
  v1::EvidenceTriple* triple = response->add_evidence();
  triple->mutable_head()->set_name(head);
  triple->set_relation("drug treats disease");
  triple->mutable_tail()->set_name(tail);
}

TEST(NormalizeNameTest, LowercasesAndCollapsesPunctuation) {
  EXPECT_EQ(NormalizeName("  Type-2 Diabetes  Mellitus. "), "type 2 diabetes mellitus");
  EXPECT_EQ(NormalizeName("HLA-B"), "hla b");
  EXPECT_EQ(NormalizeName("Sjögren's"), "sjögren s");
  EXPECT_EQ(NormalizeName("--"), "");
}

TEST(IsCorrectTest, MultipleChoiceByIndexOrByRepeatedOptionText) {
  const QaItem item = Mcq({"ZFHX3", "HLA-DQA1", "EPDR1", "hla-dqa1"}, 1);
  EXPECT_TRUE(IsCorrect(item, Answered(1).answer()));
  EXPECT_TRUE(IsCorrect(item, Answered(3).answer()));  // same option text, other position
  EXPECT_FALSE(IsCorrect(item, Answered(0).answer()));
  EXPECT_FALSE(IsCorrect(item, Answered(-1).answer()));
  EXPECT_FALSE(IsCorrect(item, Answered(7).answer()));
}

TEST(IsCorrectTest, FactLabelMustMatchAndUnknownIsWrong) {
  v1::Answer answer;
  answer.set_label(v1::FACT_LABEL_SUPPORTED);
  EXPECT_TRUE(IsCorrect(Claim(v1::FACT_LABEL_SUPPORTED), answer));
  EXPECT_FALSE(IsCorrect(Claim(v1::FACT_LABEL_REFUTED), answer));
  answer.set_label(v1::FACT_LABEL_UNKNOWN);
  EXPECT_FALSE(IsCorrect(Claim(v1::FACT_LABEL_SUPPORTED), answer));
  EXPECT_FALSE(IsCorrect(Claim(v1::FACT_LABEL_REFUTED), answer));
}

// Issue 26: PubHealth's scores. Gold S, S, R, R, NEE; answered S, NEE, R, S, NEE.
TEST(FactScoresTest, BinarySubsetAndAllVerdicts) {
  std::vector<ItemOutcome> outcomes;
  const std::pair<v1::FactLabel, v1::FactLabel> claims[] = {
      {v1::FACT_LABEL_SUPPORTED, v1::FACT_LABEL_SUPPORTED},
      {v1::FACT_LABEL_SUPPORTED, v1::FACT_LABEL_UNKNOWN},
      {v1::FACT_LABEL_REFUTED, v1::FACT_LABEL_REFUTED},
      {v1::FACT_LABEL_REFUTED, v1::FACT_LABEL_SUPPORTED},
      {v1::FACT_LABEL_UNKNOWN, v1::FACT_LABEL_UNKNOWN}};
  for (const auto& [gold, answered] : claims) {
    QaItem item = Claim(gold);
    v1::AnswerResponse response;
    response.mutable_answer()->set_label(answered);
    outcomes.push_back(ScoreAnswer(item, response, 1.0));
  }
  EXPECT_TRUE(outcomes[4].correct);  // NOT ENOUGH EVIDENCE for a mixture claim is right
  const RunSummary s = Summarize("pubhealth", "cfg", outcomes, 1.0);
  EXPECT_EQ(s.fact_claims, 5);
  EXPECT_EQ(s.fact_confusion[kFactSupported][kFactNotEnoughEvidence], 1);
  const FactScores f = ScoreFacts(s.fact_confusion);
  // Binary: 4 claims, 2 right. S: tp 1, fp 1 (the R answered S), fn 1 -> 0.5; R: tp 1, fp 0,
  // fn 1 -> 2/3.
  EXPECT_EQ(f.binary_claims, 4);
  EXPECT_DOUBLE_EQ(f.binary_accuracy, 0.5);
  EXPECT_NEAR(f.binary_macro_f1, (0.5 + 2.0 / 3.0) / 2, 1e-12);
  // All: 5 claims, 3 right; NEE: tp 1, fp 1 (the S answered NEE), fn 0 -> 2/3.
  EXPECT_EQ(f.claims, 5);
  EXPECT_DOUBLE_EQ(f.accuracy, 0.6);
  EXPECT_NEAR(f.macro_f1, (0.5 + 2.0 / 3.0 + 2.0 / 3.0) / 3, 1e-12);
  const std::string md = ReportMarkdown(ReportMeta(), {s}, {});
  EXPECT_THAT(md,
              HasSubstr("| pubhealth | cfg | 5 | 4 | 50.0% | 0.583 | 60.0% | 0.611 | 2 / 1 / 2 |"));
  const nlohmann::json json = nlohmann::json::parse(ReportJson(ReportMeta(), {s}, {}));
  EXPECT_EQ(json["runs"][0]["fact_verification"]["binary_claims"], 4);
  EXPECT_EQ(
      json["runs"][0]["fact_verification"]["confusion_gold_by_answer"]["REFUTED"]["SUPPORTED"], 1);
  // Nothing answered: zeros, not NaN.
  const FactScores none = ScoreFacts(FactConfusion{});
  EXPECT_EQ(none.claims, 0);
  EXPECT_EQ(none.macro_f1, 0.0);
}

// Issue 26: options read in context are counted per lookup multiple-choice question.
TEST(LookupScoreTest, CountsOptionsAlignedToTheExpectedType) {
  QaItem item = Mcq({"IL23R", "TTN", "BRCA1"}, 0);
  item.question = "Which gene?";
  item.accepted = {"il23r"};
  item.relation = "gene";
  item.answer_type = "gene";
  v1::AnswerResponse response = Answered(0);
  auto add = [&](const std::string& type, uint32_t begin, uint32_t end) {
    v1::AlignedEntity* e = response.add_entities();
    e->mutable_entity()->set_type(type);
    e->mutable_mention()->set_begin(begin);
    e->mutable_mention()->set_end(end);
  };
  // Text: "Which gene?\nIL23R\nTTN\nBRCA1": IL23R at 12..17, TTN 18..21, BRCA1 22..27.
  add("gene", 12, 17);
  add("symptom", 18, 21);  // TTN read as Transient Tachypnea of the Newborn
  add("gene", 22, 27);
  const ItemOutcome o = ScoreAnswer(item, response, 1.0);
  EXPECT_EQ(o.options, 3);
  EXPECT_EQ(o.options_typed, 2);
  const RunSummary s = Summarize("lookup", "cfg", {o}, 1.0);
  EXPECT_EQ(s.lookup.options_typed, 2);
  EXPECT_THAT(ReportMarkdown(ReportMeta(), {s}, {}),
              HasSubstr("Options aligned to an entity of the expected type: 2 of 3 (66.7%)."));
  EXPECT_EQ(KgTypesOfAnswerType("drug"), std::vector<std::string>{"compound"});
  EXPECT_TRUE(KgTypesOfAnswerType("vibe").empty());
}

TEST(AnswerEntityHitTest, ExactPartialAndNone) {
  v1::AnswerResponse response;
  AddEvidence(&response, "metformin", "type 2 diabetes mellitus");
  AddEvidence(&response, "HLA-B", "psoriasis");
  EXPECT_EQ(AnswerEntityHit("Type 2 Diabetes Mellitus", response), EntityHit::kExact);
  EXPECT_EQ(AnswerEntityHit("hla-b", response), EntityHit::kExact);  // tail or head
  // Whole-word containment either way.
  EXPECT_EQ(AnswerEntityHit("Metformin 500 mg", response), EntityHit::kPartial);
  EXPECT_EQ(AnswerEntityHit("diabetes mellitus", response), EntityHit::kPartial);
  // Not on word boundaries, or the shorter side under kMinPartialHitChars.
  EXPECT_EQ(AnswerEntityHit("formin", response), EntityHit::kNone);
  EXPECT_EQ(AnswerEntityHit("hla", response), EntityHit::kNone);
  v1::AnswerResponse short_names;
  AddEvidence(&short_names, "B", "ab");
  EXPECT_EQ(AnswerEntityHit("vitamin B deficiency", short_names), EntityHit::kNone);
  EXPECT_EQ(AnswerEntityHit("aspirin", v1::AnswerResponse()), EntityHit::kNone);
}

TEST(PercentileTest, NearestRank) {
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);  // unsorted on purpose
  EXPECT_EQ(Percentile(values, 50), 50);
  EXPECT_EQ(Percentile(values, 95), 95);
  EXPECT_EQ(Percentile(values, 99), 99);
  EXPECT_EQ(Percentile(values, 100), 100);
  EXPECT_EQ(Percentile(values, 0), 1);
  EXPECT_EQ(Percentile({7}, 99), 7);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 50), 2);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 51), 3);
  EXPECT_EQ(Percentile({}, 50), 0);
}

TEST(ScoreAnswerTest, RecordsEntitiesDegradationsTimingsAndPrediction) {
  const QaItem item = Mcq({"aspirin", "metformin"}, 1);
  v1::AnswerResponse response = Answered(1);
  response.add_entities()->mutable_entity()->set_name("type 2 diabetes mellitus");
  AddEvidence(&response, "metformin", "type 2 diabetes mellitus");
  response.add_degraded()->set_component("retriever");
  response.add_degraded()->set_component("retriever");  // counted once per answer
  response.add_degraded()->set_component("llm");
  auto* timing = response.add_timings();
  timing->set_stage("align");
  timing->set_duration_ms(2.5);
  response.mutable_answer()->set_low_confidence(true);
  const ItemOutcome outcome = ScoreAnswer(item, response, 12.0);
  EXPECT_TRUE(outcome.correct);
  EXPECT_EQ(outcome.predicted, "B");
  EXPECT_TRUE(outcome.hit_applicable);
  EXPECT_EQ(outcome.hit, EntityHit::kExact);
  EXPECT_EQ(outcome.entities, 1);
  EXPECT_EQ(outcome.evidence, 1);
  EXPECT_THAT(outcome.degraded_components, ElementsAre("retriever", "llm"));
  EXPECT_THAT(outcome.stage_ms, ElementsAre(Pair("align", 2.5)));
  EXPECT_TRUE(outcome.low_confidence);
  EXPECT_FALSE(outcome.abstained);
  EXPECT_TRUE(ScoreAnswer(item, Answered(-1), 1.0).abstained);

  v1::AnswerResponse verdict;
  verdict.mutable_answer()->set_label(v1::FACT_LABEL_REFUTED);
  const ItemOutcome claim = ScoreAnswer(Claim(v1::FACT_LABEL_REFUTED), verdict, 1.0);
  EXPECT_TRUE(claim.correct);
  EXPECT_EQ(claim.predicted, "REFUTED");
  EXPECT_FALSE(claim.hit_applicable);
  EXPECT_FALSE(claim.abstained);
  verdict.mutable_answer()->set_label(v1::FACT_LABEL_UNKNOWN);
  EXPECT_TRUE(ScoreAnswer(Claim(v1::FACT_LABEL_REFUTED), verdict, 1.0).abstained);
}

TEST(SummarizeTest, AggregatesAccuracyHitsCoverageDegradationsErrorsAndLatency) {
  const QaItem item = Mcq({"aspirin", "metformin"}, 1);
  std::vector<ItemOutcome> outcomes;
  // 1: correct, exact hit, 2 entities, retriever degraded, 10 ms.
  {
    v1::AnswerResponse r = Answered(1);
    r.add_entities();
    r.add_entities();
    AddEvidence(&r, "metformin", "x");
    r.add_degraded()->set_component("retriever");
    auto* t = r.add_timings();
    t->set_stage("align");
    t->set_duration_ms(2);
    t = r.add_timings();
    t->set_stage("retrieve");
    t->set_duration_ms(6);
    outcomes.push_back(ScoreAnswer(item, r, 10));
  }
  // 2: wrong, partial hit, no entity, 20 ms.
  {
    v1::AnswerResponse r = Answered(0);
    AddEvidence(&r, "metformin hydrochloride", "x");
    auto* t = r.add_timings();
    t->set_stage("align");
    t->set_duration_ms(4);
    outcomes.push_back(ScoreAnswer(item, r, 20));
  }
  // 3: correct, no hit, 1 entity, 30 ms.
  {
    v1::AnswerResponse r = Answered(1);
    r.add_entities();
    outcomes.push_back(ScoreAnswer(item, r, 30));
  }
  // 4 and 5: failed calls.
  outcomes.push_back(ErrorOutcome(absl::StatusCode::kUnavailable, "down", 1));
  outcomes.push_back(ErrorOutcome(absl::StatusCode::kDeadlineExceeded, "slow", 30000));

  const RunSummary s = Summarize("set", "msca=on", outcomes, 2.0);
  EXPECT_EQ(s.total, 5);
  EXPECT_EQ(s.answered, 3);
  EXPECT_EQ(s.errors, 2);
  EXPECT_EQ(s.correct, 2);
  EXPECT_DOUBLE_EQ(s.accuracy, 2.0 / 5);
  EXPECT_DOUBLE_EQ(s.accuracy_answered, 2.0 / 3);
  EXPECT_EQ(s.hit_applicable, 3);
  EXPECT_EQ(s.hit_exact, 1);
  EXPECT_EQ(s.hit_partial_or_exact, 2);
  EXPECT_DOUBLE_EQ(s.hit_rate_exact, 1.0 / 3);
  EXPECT_DOUBLE_EQ(s.hit_rate_partial, 2.0 / 3);
  EXPECT_EQ(s.with_entities, 2);
  EXPECT_DOUBLE_EQ(s.coverage, 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.mean_entities, 1.0);
  EXPECT_EQ(s.degraded_answers, 1);
  EXPECT_THAT(s.degraded_by_component, ElementsAre(Pair("retriever", 1)));
  EXPECT_THAT(s.errors_by_code, ElementsAre(Pair("DEADLINE_EXCEEDED", 1), Pair("UNAVAILABLE", 1)));
  // Latency over answered calls only.
  EXPECT_DOUBLE_EQ(s.latency_mean_ms, 20);
  EXPECT_DOUBLE_EQ(s.latency_p50_ms, 20);
  EXPECT_DOUBLE_EQ(s.latency_p99_ms, 30);
  // Stage means over the answers that report the stage, in first-seen order.
  EXPECT_THAT(s.mean_stage_ms, ElementsAre(Pair("align", 3.0), Pair("retrieve", 6.0)));
  EXPECT_DOUBLE_EQ(s.throughput_qps, 1.5);

  ReportMeta meta;
  meta.gateway = "127.0.0.1:50051";
  meta.concurrency = 8;
  meta.command = "ibgr eval --dataset=x";
  const nlohmann::json json = nlohmann::json::parse(ReportJson(meta, {s}));
  EXPECT_EQ(json["runs"][0]["accuracy"], 0.4);
  EXPECT_EQ(json["runs"][0]["errors_by_code"]["UNAVAILABLE"], 1);
  EXPECT_EQ(json["runs"][0]["latency_ms"]["p99"], 30.0);
  EXPECT_EQ(json["runs"][0]["mean_stage_ms"]["retrieve"], 6.0);
  const std::string md = ReportMarkdown(meta, {s});
  EXPECT_THAT(md,
              HasSubstr("| set | msca=on | 5 | 40.0% | 33.3% | 66.7% | 66.7% | 1.00 | 1 | 2 |"));
  EXPECT_THAT(md, HasSubstr("errors 2 (DEADLINE_EXCEEDED 1, UNAVAILABLE 1)"));
  EXPECT_THAT(md, HasSubstr("abstained 0;"));
  EXPECT_EQ(json["runs"][0]["abstained"], 0);
}

TEST(SummarizeTest, AveragesLlmCallsOverAnsweredQuestions) {
  const QaItem item = Mcq({"aspirin", "metformin"}, 1);
  std::vector<ItemOutcome> outcomes;
  for (uint32_t calls : {3u, 0u}) {
    v1::AnswerResponse response = Answered(1);
    response.set_llm_calls(calls);  // e.g. kg_rank with an LLM, then an extractive answer
    outcomes.push_back(ScoreAnswer(item, response, 10));
  }
  EXPECT_EQ(outcomes[0].llm_calls, 3);
  outcomes.push_back(ErrorOutcome(absl::StatusCode::kUnavailable, "down", 1));
  EXPECT_DOUBLE_EQ(Summarize("set", "mode=kg_rank", outcomes, 1.0).mean_llm_calls, 1.5);
}

TEST(SummarizeTest, EmptyRunHasZeroRatesNotNaN) {
  const RunSummary s = Summarize("empty", "", {}, 0);
  EXPECT_EQ(s.accuracy, 0);
  EXPECT_EQ(s.coverage, 0);
  EXPECT_EQ(s.latency_p99_ms, 0);
  EXPECT_EQ(s.throughput_qps, 0);
  EXPECT_THAT(ReportMarkdown(ReportMeta(), {s}), HasSubstr("| n/a | n/a |"));
}

// Lookup questions: hit@5 and precision@5 over the first five answers, and where the first
// evidence triple naming an accepted answer ranks.
QaItem OpenLookup(std::vector<std::string> accepted, std::string relation) {
  QaItem item;
  item.id = "L1";
  item.task = v1::TASK_OPEN;
  item.accepted = std::move(accepted);
  item.gold_text = item.accepted.front();
  item.gold_is_entity = true;
  item.relation = std::move(relation);
  return item;
}

v1::AnswerResponse OpenAnswer(std::vector<std::string> answers,
                              std::vector<std::pair<std::string, std::string>> evidence) {
  v1::AnswerResponse response;
  for (const std::string& a : answers) response.mutable_answer()->add_answers(a);
  for (const auto& [head, tail] : evidence) {
    v1::EvidenceTriple* t = response.add_evidence();
    t->mutable_head()->set_name(head);
    t->mutable_tail()->set_name(tail);
  }
  return response;
}

TEST(LookupScoreTest, HitPrecisionAndEvidenceRank) {
  const QaItem item = OpenLookup({"metformin", "glipizide", "insulin glargine"}, "treats");
  const ItemOutcome o =
      ScoreAnswer(item,
                  OpenAnswer({"Metformin", "Aspirin", "Insulin Glargine", "Glipizides"},
                             {{"type 2 diabetes", "TCF7L2"}, {"Metformin", "type 2 diabetes"}}),
                  1.0);
  EXPECT_TRUE(o.lookup);
  EXPECT_TRUE(o.open);
  EXPECT_EQ(o.item_id, "L1");
  EXPECT_TRUE(o.hit5);
  EXPECT_TRUE(o.correct);
  // Three of the four answers are accepted ("Glipizides": a plural 's' is ignored).
  EXPECT_TRUE(IsAcceptedName("Lung small cell carcinoma", {"small cell lung carcinoma"}));
  EXPECT_FALSE(IsAcceptedName("lung carcinoma", {"small cell lung carcinoma"}));
  EXPECT_TRUE(IsAcceptedName("skin of body", {"skin"}));  // UBERON's name for the skin
  EXPECT_FALSE(IsAcceptedName("skin of body", {"body"}));
  // A salt or ester of an accepted drug is that drug; only trailing salt words go, one word stays.
  EXPECT_TRUE(IsAcceptedName("Fluticasone Propionate", {"fluticasone"}));
  EXPECT_TRUE(IsAcceptedName("Dabigatran etexilate", {"dabigatran"}));
  EXPECT_TRUE(IsAcceptedName("Cromolyn sodium", {"cromoglicic acid", "cromolyn"}));
  EXPECT_TRUE(IsAcceptedName("Magnesium sulfate", {"magnesium sulfate"}));
  EXPECT_TRUE(IsAcceptedName("Sodium", {"sodium"}));
  EXPECT_FALSE(IsAcceptedName("Sodium nitroprusside", {"sodium"}));
  EXPECT_DOUBLE_EQ(o.precision5, 0.75);
  EXPECT_EQ(o.evidence_rank, 2);
  // No relation read: the measure does not apply (-1, left out of the means).
  EXPECT_DOUBLE_EQ(o.relation_precision10, -1.0);
  // Relation precision@10: of the first 10 evidence triples (10 slots), those whose relation the
  // intent names.
  v1::AnswerResponse asked = OpenAnswer({"Metformin"}, {{"Metformin", "type 2 diabetes"},
                                                        {"type 2 diabetes", "TCF7L2"},
                                                        {"Glipizide", "type 2 diabetes"}});
  asked.mutable_intent()->add_relations("drug treats disease");
  asked.mutable_evidence(0)->set_relation("drug treats disease");
  asked.mutable_evidence(1)->set_relation("disease associated with gene");
  asked.mutable_evidence(2)->set_relation("drug treats disease");
  EXPECT_DOUBLE_EQ(ScoreAnswer(item, asked, 1.0).relation_precision10, 0.2);

  const ItemOutcome wrong = ScoreAnswer(item, OpenAnswer({"Aspirin"}, {{"a", "b"}}), 1.0);
  EXPECT_FALSE(wrong.hit5);
  EXPECT_FALSE(wrong.correct);
  EXPECT_DOUBLE_EQ(wrong.precision5, 0.0);
  EXPECT_EQ(wrong.evidence_rank, 0);
  // No answers at all: precision 0, not NaN.
  const ItemOutcome empty = ScoreAnswer(item, OpenAnswer({}, {}), 1.0);
  EXPECT_DOUBLE_EQ(empty.precision5, 0.0);
  // An answer without an answer list (an extractive answer that rendered paths) names the
  // entities of the evidence it used, less the aligned ones.
  v1::AnswerResponse paths =
      OpenAnswer({}, {{"type 2 diabetes", "TCF7L2"}, {"Metformin", "type 2 diabetes"}});
  paths.add_entities()->mutable_entity()->set_name("Type 2 Diabetes");
  paths.mutable_answer()->add_evidence_used(1);
  paths.mutable_answer()->add_evidence_used(0);
  const ItemOutcome rendered = ScoreAnswer(item, paths, 1.0);
  EXPECT_TRUE(rendered.hit5);
  EXPECT_DOUBLE_EQ(rendered.precision5, 0.5);  // Metformin, TCF7L2
  // Only the first five answers count.
  const ItemOutcome sixth =
      ScoreAnswer(item, OpenAnswer({"a", "b", "c", "d", "e", "metformin"}, {}), 1.0);
  EXPECT_FALSE(sixth.hit5);
}

TEST(LookupScoreTest, SummaryPerRelationAndInTheReports) {
  std::vector<ItemOutcome> outcomes;
  QaItem treats = OpenLookup({"metformin"}, "treats");
  outcomes.push_back(ScoreAnswer(treats, OpenAnswer({"Metformin"}, {{"Metformin", "x"}}), 1.0));
  QaItem genes = OpenLookup({"cftr"}, "gene");
  std::vector<std::pair<std::string, std::string>> far(20, {"x", "y"});
  far.push_back({"cystic fibrosis", "CFTR"});
  outcomes.push_back(ScoreAnswer(genes, OpenAnswer({"TTN", "CFTR"}, far), 1.0));
  QaItem mcq = Mcq({"TTN", "CFTR"}, 1);
  mcq.accepted = {"cftr"};
  mcq.relation = "gene";
  outcomes.push_back(ScoreAnswer(mcq, Answered(1), 1.0));
  const RunSummary s = Summarize("lookup", "default", outcomes, 1.0);
  EXPECT_EQ(s.lookup.questions, 3);
  EXPECT_EQ(s.lookup.open, 2);
  EXPECT_EQ(s.lookup.right, 3);
  EXPECT_EQ(s.lookup.hit5, 2);
  EXPECT_DOUBLE_EQ(s.lookup.precision5_sum, 1.5);
  EXPECT_EQ(s.lookup.evidence_any, 2);
  EXPECT_EQ(s.lookup.evidence_top10, 1);
  EXPECT_EQ(s.lookup.evidence_top100, 2);
  EXPECT_EQ(s.lookup_by_relation.at("gene").questions, 2);
  EXPECT_EQ(s.lookup_by_relation.at("gene").open, 1);
  ASSERT_EQ(s.lookup_rows.size(), 3u);
  EXPECT_EQ(s.lookup_rows[1].evidence_rank, 21);

  ReportMeta meta;
  const nlohmann::json json = nlohmann::json::parse(ReportJson(meta, {s}, {}));
  const nlohmann::json& lookup = json["runs"][0]["lookup"];
  EXPECT_DOUBLE_EQ(lookup["hit_at_5"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(lookup["precision_at_5"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(lookup["evidence_top10"].get<double>(), 0.5);
  EXPECT_EQ(lookup["by_relation"]["gene"]["questions"].get<int>(), 2);
  EXPECT_EQ(lookup["questions_detail"].size(), 3u);
  EXPECT_THAT(ReportMarkdown(meta, {s}, {}), HasSubstr("| **all** | 3 | 3 | 2 | 100.0% | 0.75 |"));
}

}  // namespace
}  // namespace ibgraphrag::eval
