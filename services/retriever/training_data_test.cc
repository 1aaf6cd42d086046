#include "services/retriever/training_data.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/question_intent.h"
#include "common/test_util/status_matchers.h"
#include "common/topic_rule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_builder.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/evaluation.h"
#include "services/retriever/retriever.h"
#include "services/retriever/subgraph_source.h"

namespace ibgraphrag::retriever {
namespace {

using eval::QaSplit;
using ::ibgraphrag::common::test_util::StatusIs;
using kgstore::EntityId;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr int kDiseases = 40, kDrugs = 20, kGenes = 15, kSymptoms = 10;

// Diseases 0..39, then drugs, genes and symptoms. Disease i is treated by drugs i % 20 and
// (i + 7) % 20, associated with genes i % 15 and (i + 1) % 15 (so diseases share genes) and
// presents symptom i % 10.
struct TemplateKg {
  static EntityId Disease(int i) { return i; }
  static EntityId Drug(int j) { return kDiseases + j; }
  static EntityId Gene(int k) { return kDiseases + kDrugs + k; }
  static EntityId Symptom(int m) { return kDiseases + kDrugs + kGenes + m; }

  static kgstore::KgData Build() {
    kgstore::KgBuilder b;
    const kgstore::SourceId src = b.AddSource("test");
    for (int i = 0; i < kDiseases; ++i)
      b.AddEntity(absl::StrCat("DOID:", i), "disease", absl::StrCat("disease ", i));
    for (int j = 0; j < kDrugs; ++j)
      b.AddEntity(absl::StrCat("DB:", j), "compound", absl::StrCat("drug ", j));
    for (int k = 0; k < kGenes; ++k)
      b.AddEntity(absl::StrCat("GENE:", k), "gene", absl::StrCat("gene ", k));
    for (int m = 0; m < kSymptoms; ++m)
      b.AddEntity(absl::StrCat("SYMP:", m), "symptom", absl::StrCat("symptom ", m));
    const auto treats = b.AddRelation("drug treats disease", "compound", "disease", "");
    const auto assoc = b.AddRelation("disease associated with gene", "disease", "gene", "");
    const auto presents = b.AddRelation("disease presents symptom", "disease", "symptom", "");
    for (int i = 0; i < kDiseases; ++i) {
      b.AddTriple(Drug(i % kDrugs), treats, Disease(i), src);
      b.AddTriple(Drug((i + 7) % kDrugs), treats, Disease(i), src);
      b.AddTriple(Disease(i), assoc, Gene(i % kGenes), src);
      b.AddTriple(Disease(i), assoc, Gene((i + 1) % kGenes), src);
      b.AddTriple(Disease(i), presents, Symptom(i % kSymptoms), src);
    }
    return b.Finish();
  }
};

// One store for the suite: writing and opening a snapshot costs more than generating from it.
class TrainingDataTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new kgstore::testing::ScratchDir("training-data");
    store_ = kgstore::testing::WriteAndOpen(TemplateKg::Build(), dir_->path()).release();
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
  }

  static absl::StatusOr<QuestionSet> Generate(QuestionOptions options = {}) {
    return GenerateQuestions(*store_, options);
  }

  static kgstore::testing::ScratchDir* dir_;
  static kgstore::KgStore* store_;
};

kgstore::testing::ScratchDir* TrainingDataTest::dir_ = nullptr;
kgstore::KgStore* TrainingDataTest::store_ = nullptr;

std::string TypeOf(int64_t id) {
  if (id < kDiseases) return "disease";
  if (id < kDiseases + kDrugs) return "compound";
  if (id < kDiseases + kDrugs + kGenes) return "gene";
  return "symptom";
}

std::string NameOf(int64_t id) {
  if (id < kDiseases) return absl::StrCat("disease ", id);
  if (id < kDiseases + kDrugs) return absl::StrCat("drug ", id - kDiseases);
  if (id < kDiseases + kDrugs + kGenes) return absl::StrCat("gene ", id - kDiseases - kDrugs);
  return absl::StrCat("symptom ", id - kDiseases - kDrugs - kGenes);
}

TEST_F(TrainingDataTest, TemplatesHaveAnswersAmongOptionsAndTopicsFollowTheTopicRule) {
  absl::StatusOr<QuestionSet> set = Generate();
  ASSERT_OK(set);
  std::set<std::string> sources;
  for (const GeneratedQuestion& q : set->Part(QaSplit::kAll)) {
    if (absl::StartsWith(q.source, "template/open_")) continue;  // OpenTemplates... below
    sources.insert(q.source);
    ASSERT_FALSE(q.answers.empty());
    ASSERT_FALSE(q.evidence.empty()) << q.text;
    // Options: every answer's name plus three distractors of the answer's type, no answer twice.
    EXPECT_EQ(q.options.size(), q.answers.size() + 3) << q.text;
    std::vector<std::string> answer_names;
    for (uint32_t a : q.answers) {
      answer_names.push_back(NameOf(a));
      EXPECT_THAT(q.options, Contains(NameOf(a)));
    }
    EXPECT_EQ(q.answer_text, absl::StrJoin(answer_names, "; "));
    // Topics: the question entities first, then the option entities (common::TopicEntityIds).
    std::vector<uint32_t> kept = q.question_entities;
    for (size_t i = q.question_entities.size(); i < q.topics.size(); ++i)
      kept.push_back(q.topics[i]);
    EXPECT_EQ(q.topics, common::TopicEntityIds(kept));
    ASSERT_EQ(q.topics.size(), q.question_entities.size() + q.options.size()) << q.text;
    for (size_t i = 0; i < q.options.size(); ++i) {
      const uint32_t option_id = q.topics[q.question_entities.size() + i];
      EXPECT_EQ(NameOf(option_id), q.options[i]);
      EXPECT_EQ(TypeOf(option_id), TypeOf(q.answers.front())) << q.options[i];
    }
  }
  EXPECT_EQ(sources, (std::set<std::string>{"template/drug_treats", "template/phenotypes",
                                            "template/shared_gene"}));
}

// Open questions (issue 25): the answers are not topics, the supervision is every direct triple
// of the asked relation, the wording varies, and the question reads as the relation it asks.
TEST_F(TrainingDataTest, OpenTemplatesAskForNonTopicAnswersThroughOneRelation) {
  absl::StatusOr<QuestionSet> set = Generate();
  ASSERT_OK(set);
  std::map<std::string, int> by_source;
  std::set<std::string> wordings;
  for (const GeneratedQuestion& q : set->Part(QaSplit::kAll)) {
    if (!absl::StartsWith(q.source, "template/open_")) continue;
    ++by_source[q.source];
    EXPECT_TRUE(q.options.empty()) << q.text;
    ASSERT_EQ(q.question_entities.size(), 1u) << q.text;
    EXPECT_EQ(q.topics, q.question_entities) << q.text;
    const uint32_t asked = q.question_entities.front();
    EXPECT_THAT(q.text, HasSubstr(NameOf(asked)));
    wordings.insert(absl::StrReplaceAll(q.text, {{NameOf(asked), "{}"}}));
    for (uint32_t a : q.answers) EXPECT_NE(a, asked) << q.text;
    // Every evidence triple links the asked entity to an answer directly, and every answer has one.
    std::set<uint32_t> linked;
    for (const auto& t : q.evidence) {
      ASSERT_TRUE(t[0] == asked || t[2] == asked) << q.text;
      linked.insert(t[0] == asked ? t[2] : t[0]);
    }
    EXPECT_EQ(linked, std::set<uint32_t>(q.answers.begin(), q.answers.end())) << q.text;
    // The intent reader reads the template as a relation question.
    EXPECT_FALSE(common::ReadQuestionIntent(q.text).relations.empty()) << q.text;
  }
  // The KG has treats, associated-gene and presents-symptom relations: four open templates.
  EXPECT_EQ(by_source.size(), 4u);
  EXPECT_EQ(by_source["template/open_treats"], kDiseases);
  EXPECT_EQ(by_source["template/open_indications"], kDrugs);
  EXPECT_GT(by_source["template/open_genes"], 0);
  EXPECT_GT(by_source["template/open_symptoms"], 0);
  EXPECT_GT(wordings.size(), 8u);  // several wordings per template

  QuestionOptions capped;
  capped.max_per_open_template = 5;
  absl::StatusOr<QuestionSet> few = Generate(capped);
  ASSERT_OK(few);
  EXPECT_EQ(few->split_counts.at("template/open_treats").train +
                few->split_counts.at("template/open_treats").validation +
                few->split_counts.at("template/open_treats").test,
            5);
}

TEST_F(TrainingDataTest, EvidenceIsTheShortestPathBetweenQuestionAndAnswers) {
  absl::StatusOr<QuestionSet> set = Generate();
  ASSERT_OK(set);
  for (const GeneratedQuestion& q : set->Part(QaSplit::kAll)) {
    if (q.source != "template/drug_treats") continue;
    // Disease i is treated by two drugs: the evidence is exactly their two treats edges.
    ASSERT_EQ(q.question_entities.size(), 1u);
    const EntityId d = q.question_entities[0];
    ASSERT_EQ(q.answers.size(), 2u) << q.text;
    EXPECT_EQ(q.text, absl::StrCat("Which drug treats disease ", d, "?"));
    std::vector<std::array<uint32_t, 3>> expected;
    for (uint32_t a : q.answers) expected.push_back({a, 0, d});
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(q.evidence, expected);
  }
}

TEST_F(TrainingDataTest, SplitIsDeterministicDisjointAndByDisease) {
  QuestionOptions options;
  options.split_seed = 5;
  absl::StatusOr<QuestionSet> a = Generate(options);
  absl::StatusOr<QuestionSet> b = Generate(options);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(a->hash, b->hash);
  EXPECT_EQ(a->train.size(), b->train.size());
  EXPECT_EQ(a->test.size(), b->test.size());
  EXPECT_FALSE(a->train.empty());
  EXPECT_FALSE(a->validation.empty());
  EXPECT_FALSE(a->test.empty());

  // Parts are disjoint, and a train question never asks about a held-out disease.
  std::map<std::string, QaSplit> part_of_text;
  std::map<uint32_t, std::set<QaSplit>> parts_of_disease;
  for (QaSplit part : {QaSplit::kTrain, QaSplit::kValidation, QaSplit::kTest}) {
    for (const GeneratedQuestion& q : a->Part(part)) {
      EXPECT_TRUE(part_of_text.emplace(q.text, part).second) << q.text << " in two parts";
      for (uint32_t d : q.question_entities) {
        // Open "indications" questions ask about a drug (external id "DB:<j>").
        const std::string key = d < static_cast<uint32_t>(kDiseases)
                                    ? absl::StrCat("DOID:", d)
                                    : absl::StrCat("DB:", d - kDiseases);
        const QaSplit own = eval::SplitOfKey(key, options.split_seed);
        if (part == QaSplit::kTrain) EXPECT_EQ(own, QaSplit::kTrain) << q.text;
        if (q.question_entities.size() == 1) parts_of_disease[d].insert(part);
      }
    }
  }
  // Single-disease templates: all of a disease's questions are in its own part.
  for (const auto& [d, parts] : parts_of_disease) EXPECT_EQ(parts.size(), 1u) << "disease " << d;

  // Counts per source match the parts.
  int counted = 0;
  for (const auto& [source, c] : a->split_counts) counted += c.train + c.validation + c.test;
  EXPECT_EQ(counted, static_cast<int>(a->Part(QaSplit::kAll).size()));
  EXPECT_EQ(a->CountsMap().at("questions/template/drug_treats/test"),
            a->split_counts.at("template/drug_treats").test);

  options.split_seed = 6;
  absl::StatusOr<QuestionSet> other = Generate(options);
  ASSERT_OK(other);
  EXPECT_NE(other->hash, a->hash);
}

TEST_F(TrainingDataTest, HashCoversOptions) {
  QuestionOptions options;
  absl::StatusOr<QuestionSet> with = Generate(options);
  options.distractors = 0;
  absl::StatusOr<QuestionSet> without = Generate(options);
  ASSERT_OK(with);
  ASSERT_OK(without);
  EXPECT_NE(with->hash, without->hash);
  for (const GeneratedQuestion& q : without->Part(QaSplit::kAll)) {
    if (absl::StartsWith(q.source, "template/open_")) continue;  // open questions have none
    EXPECT_EQ(q.options.size(), q.answers.size());
  }
}

TEST_F(TrainingDataTest, MergeKeepsPartsAndCounts) {
  absl::StatusOr<QuestionSet> a = Generate();
  ASSERT_OK(a);
  QuestionSet extra;
  GeneratedQuestion q;
  q.text = "real question";
  q.source = "qa/test-set";
  AddQuestion(QaSplit::kTest, q, &extra);
  extra.skipped["qa/test-set/no_path"] = 2;
  QuestionSet merged = *a;
  MergeQuestionSets(extra, &merged);
  EXPECT_EQ(merged.test.size(), a->test.size() + 1);
  EXPECT_EQ(merged.train.size(), a->train.size());
  EXPECT_EQ(merged.split_counts.at("qa/test-set").test, 1);
  EXPECT_EQ(merged.CountsMap().at("skipped/qa/test-set/no_path"), 2);
  EXPECT_NE(merged.hash, a->hash);
}

TEST_F(TrainingDataTest, BadOptionsNameTheField) {
  QuestionOptions options;
  options.max_hops = 0;
  absl::StatusOr<QuestionSet> set = Generate(options);
  ASSERT_THAT(set, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_hops")));
}

TEST(TrainingDataNoTemplatesTest, KgWithoutTemplateRelationsIsFailedPrecondition) {
  kgstore::testing::ScratchDir dir("training-data-small");
  auto store = kgstore::testing::WriteAndOpen(kgstore::testing::SmallKg(), dir.path());
  absl::StatusOr<QuestionSet> set = GenerateQuestions(*store, QuestionOptions());
  ASSERT_THAT(set, StatusIs(absl::StatusCode::kFailedPrecondition));
}

// hit@K, recall@K and evidence precision@10 through the real Retrieve path (SHORTEST_PATH needs no
// model): hop-1 triples of the topic come first, and disease 0 has five of them.
TEST(EvaluationTest, HitRecallAndPrecisionPerSource) {
  kgstore::testing::ScratchDir dir("evaluation");
  std::shared_ptr<const kgstore::KgStore> store =
      kgstore::testing::WriteAndOpen(TemplateKg::Build(), dir.path());
  Retriever retriever(Retriever::Options(), std::make_shared<InProcessSubgraphSource>(store),
                      std::shared_ptr<const RetrieverModel>(), "no model in this test");
  GeneratedQuestion near;  // both drugs treating disease 0: hop 1
  near.source = "qa/a";
  near.text = "Which drug treats disease 0?";
  near.topics = {TemplateKg::Disease(0)};
  near.answers = {TemplateKg::Drug(0), TemplateKg::Drug(7)};
  near.evidence = {{TemplateKg::Drug(0), 0, TemplateKg::Disease(0)},
                   {TemplateKg::Drug(7), 0, TemplateKg::Disease(0)}};
  GeneratedQuestion far = near;  // symptom 5 is 3 hops from disease 0: never retrieved at 2 hops
  far.source = "qa/b";
  far.answers = {TemplateKg::Symptom(5)};
  far.evidence.clear();
  GeneratedQuestion half = near;  // one answer near, one far: hit 1, recall 0.5
  half.answers = {TemplateKg::Drug(0), TemplateKg::Symptom(5)};
  EvalOptions options;
  options.mode = ScoringMode::kShortestPath;
  absl::StatusOr<EvalMetrics> m = EvaluateRetriever(retriever, {near, far, half}, options);
  ASSERT_OK(m);
  EXPECT_EQ(m->questions, 3);
  EXPECT_DOUBLE_EQ(m->hit_at_10, 2.0 / 3);
  EXPECT_DOUBLE_EQ(m->hit_at_100, 2.0 / 3);
  EXPECT_DOUBLE_EQ(m->recall_at_10, 1.5 / 3);
  EXPECT_DOUBLE_EQ(m->evidence_precision_at_10, (0.2 + 0 + 0.2) / 3);
  EXPECT_EQ(m->by_source.at("qa/a").questions, 2);
  EXPECT_DOUBLE_EQ(m->by_source.at("qa/a").hit_at_10, 1.0);
  EXPECT_DOUBLE_EQ(m->by_source.at("qa/a").recall_at_10, 0.75);
  EXPECT_DOUBLE_EQ(m->by_source.at("qa/b").hit_at_50, 0.0);
  const std::map<std::string, double> flat = m->ToMap("test_");
  EXPECT_DOUBLE_EQ(flat.at("test_hit@10"), 2.0 / 3);
  EXPECT_DOUBLE_EQ(flat.at("test_qa/a/hit@100"), 1.0);
  // "qa" groups every real-question source.
  EXPECT_EQ(m->by_source.at("qa").questions, 3);
  EXPECT_DOUBLE_EQ(flat.at("test_qa/hit@10"), 2.0 / 3);
}

// The judges that are not the supervision labels (issue 27), through the real Retrieve path.
TEST(EvaluationTest, JudgesQuestionOnlyRetrievalGroundingAndTokens) {
  kgstore::testing::ScratchDir dir("evaluation-judges");
  std::shared_ptr<const kgstore::KgStore> store =
      kgstore::testing::WriteAndOpen(TemplateKg::Build(), dir.path());
  Retriever retriever(Retriever::Options(), std::make_shared<InProcessSubgraphSource>(store),
                      std::shared_ptr<const RetrieverModel>(), "no model in this test");
  // Options drug 0 (gold, one hop from the question's disease) and symptom 5 (3 hops away).
  GeneratedQuestion near;
  near.source = "qa/a";
  near.text = "Which drug treats disease 0?";
  near.options = {"drug 0", "symptom 5"};
  near.question_entities = {TemplateKg::Disease(0)};
  near.topics = {TemplateKg::Disease(0), TemplateKg::Drug(0), TemplateKg::Symptom(5)};
  near.answers = {TemplateKg::Drug(0)};
  near.explanation_entities = {TemplateKg::Drug(0), TemplateKg::Gene(1)};
  // The gold is the far one: not retrieved from the question alone, so not above drug 0.
  GeneratedQuestion far = near;
  far.answers = {TemplateKg::Symptom(5)};
  far.explanation_entities = {TemplateKg::Drug(0)};  // a topic only: nothing beyond topics
  GeneratedQuestion open = near;                     // no options: question-only does not apply
  open.options.clear();
  open.explanation_entities.clear();
  EvalOptions options;
  options.mode = ScoringMode::kShortestPath;
  options.judges = true;
  absl::StatusOr<EvalMetrics> m = EvaluateRetriever(retriever, {near, far, open}, options);
  ASSERT_OK(m);
  const JudgeMetrics& j = m->judges;
  EXPECT_EQ(j.question_only_questions, 2);
  EXPECT_DOUBLE_EQ(j.question_only_hit_at_10, 0.5);
  EXPECT_DOUBLE_EQ(j.question_only_hit_at_100, 0.5);
  EXPECT_EQ(j.distractor_questions, 2);
  EXPECT_DOUBLE_EQ(j.answer_above_distractors, 0.5);
  // Served (the options are topics): both options are hop-1 topics, so a distractor is always in
  // the top 10; which option comes first depends on the prior's order within hop 1.
  EXPECT_DOUBLE_EQ(j.served_distractor_hit_at_10, 1.0);
  EXPECT_GE(j.served_answer_above_distractors, 0.0);
  EXPECT_LE(j.served_answer_above_distractors, 1.0);
  EXPECT_EQ(j.explained_questions, 2);
  // Grounding counted from the served top 10 itself.
  RetrieveQuery query;
  query.question = near.text;
  query.topic_ids = near.topics;
  query.top_k = 100;
  query.mode = ScoringMode::kShortestPath;
  absl::StatusOr<RetrieveResult> served = retriever.Retrieve(query);
  ASSERT_OK(served);
  int naming_drug0 = 0, naming_gene1 = 0, naming_either = 0;
  for (size_t i = 0; i < std::min<size_t>(10, served->triples.size()); ++i) {
    const ScoredTriple& t = served->triples[i];
    const bool d0 = t.head == TemplateKg::Drug(0) || t.tail == TemplateKg::Drug(0);
    const bool g1 = t.head == TemplateKg::Gene(1) || t.tail == TemplateKg::Gene(1);
    naming_drug0 += d0;
    naming_gene1 += g1;
    naming_either += d0 || g1;
  }
  ASSERT_GT(naming_gene1, 0);
  EXPECT_DOUBLE_EQ(j.explanation_grounding_at_10, (naming_either + naming_drug0) / 20.0);
  EXPECT_DOUBLE_EQ(j.explanation_grounding_beyond_topics_at_10, (naming_gene1 + 0) / 20.0);
  // Tokens: every question's top 100 is written out; a 1-token budget fits none of it.
  EXPECT_EQ(j.token_questions, 3);
  EXPECT_GT(j.evidence_tokens_top100, 0);
  EXPECT_DOUBLE_EQ(j.triples_within_budget,
                   std::min<double>(100, served->triples.size()));  // 4,000 tokens fit all here
  options.evidence_token_budget = 1;
  m = EvaluateRetriever(retriever, {near}, options);
  ASSERT_OK(m);
  EXPECT_DOUBLE_EQ(m->judges.triples_within_budget, 0);
  // Per source, and as flat keys.
  EXPECT_EQ(m->judges_by_source.at("qa/a").question_only_questions, 1);
  EXPECT_DOUBLE_EQ(m->ToMap("test_").at("test_qa/judge/question_only/hit@10"), 1.0);
}

}  // namespace
}  // namespace ibgraphrag::retriever
