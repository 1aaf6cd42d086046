#include "common/question_intent.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

TEST(QuestionIntentTest, DrugsThatTreatADisease) {
  for (const char* q :
       {"What drugs treat type 2 diabetes?", "Which drugs are used to treat hypertension?",
        "What medications are prescribed for rheumatoid arthritis?",
        "Which medicines help with gout?"}) {
    const QuestionIntent intent = ReadQuestionIntent(q);
    EXPECT_THAT(intent.kinds, ElementsAre("treats")) << q;
    EXPECT_THAT(intent.answer_types, ElementsAre("compound")) << q;
    EXPECT_THAT(intent.relations, Contains("drug treats disease")) << q;
    EXPECT_TRUE(intent.AsksFor("drug treats disease")) << q;
    EXPECT_FALSE(intent.AsksFor("disease associated with gene")) << q;
    EXPECT_EQ(intent.origin, "question");
  }
}

TEST(QuestionIntentTest, EverydayWordingForATreatment) {
  for (const char* q : {"What can I take for a migraine?", "Is there a medicine for gout?",
                        "Best drug for an acute asthma attack?"}) {
    EXPECT_THAT(ReadQuestionIntent(q).kinds, ElementsAre("treats")) << q;
  }
}

TEST(QuestionIntentTest, TheTypeOfADrugIsItsClass) {
  for (const char* q :
       {"What type of drug is metoprolol?", "What kind of medication is sertraline?",
        "What class of drug is lisinopril?"}) {
    const QuestionIntent intent = ReadQuestionIntent(q);
    EXPECT_THAT(intent.kinds, ElementsAre("drug_class")) << q;
    EXPECT_THAT(intent.answer_types, Contains("pharmacologic_class")) << q;
  }
  // A verb still picks the drugs themselves.
  const QuestionIntent used_for =
      ReadQuestionIntent("What type of drug is used to treat migraine?");
  EXPECT_THAT(used_for.kinds, ElementsAre("treats"));
  EXPECT_THAT(used_for.answer_types, ElementsAre("compound"));
  // A type of disease stays a subtype.
  EXPECT_THAT(ReadQuestionIntent("What type of diabetes affects children?").kinds,
              ElementsAre("is_a"));
}

TEST(QuestionIntentTest, ACausalGeneIsAskedForWithCauseWordsAndNoRiskWords) {
  for (const char* q :
       {"Which gene is mutated in sickle cell anemia?", "Which genes cause ALS?",
        "What gene mutation causes cystic fibrosis?", "Which gene is responsible for Huntington's?",
        "Which genes are inherited in familial hypercholesterolemia?"}) {
    const QuestionIntent intent = ReadQuestionIntent(q);
    EXPECT_THAT(intent.kinds, ElementsAre("gene")) << q;
    EXPECT_TRUE(intent.asks_cause) << q;
    EXPECT_THAT(intent.Summary(), ::testing::EndsWith("(cause)")) << q;
  }
  for (const char* q :
       {"What genes are associated with type 2 diabetes?",
        "Which genes are linked to celiac disease?",
        "Which genes are implicated in Parkinson's disease?",
        "Which gene mutations increase the risk of breast cancer?",
        "What are the side effects of metformin?", "What causes the symptoms of asthma?"}) {
    EXPECT_FALSE(ReadQuestionIntent(q).asks_cause) << q;
  }
}

TEST(QuestionIntentTest, SymptomsSideEffectsGenesTargets) {
  EXPECT_THAT(ReadQuestionIntent("What are the symptoms of asthma?").kinds, ElementsAre("symptom"));
  EXPECT_THAT(ReadQuestionIntent("How does asthma present?").kinds, ElementsAre("symptom"));
  // Without an answer noun a symptom question still asks for symptoms: "pulmonary embolism" is an
  // HPO phenotype too, and untyped its answers were the diseases that present it.
  const QuestionIntent presents = ReadQuestionIntent("How does pulmonary embolism present?");
  EXPECT_THAT(presents.answer_types, ElementsAre("symptom", "phenotype"));
  EXPECT_FALSE(presents.AcceptsEnd("disease has phenotype", /*head_end=*/true, "disease"));
  EXPECT_TRUE(presents.AcceptsEnd("disease has phenotype", /*head_end=*/false, "phenotype"));
  EXPECT_THAT(ReadQuestionIntent("What features are typical of Cushing's syndrome?").answer_types,
              ElementsAre("symptom", "phenotype"));
  // The diseases of a symptom are asked for with a noun, and keep their type.
  EXPECT_THAT(ReadQuestionIntent("Which diseases present with fever?").answer_types,
              ElementsAre("disease"));
  const QuestionIntent se = ReadQuestionIntent("What are the adverse effects of metformin?");
  EXPECT_THAT(se.kinds, ElementsAre("side_effect"));
  EXPECT_THAT(se.answer_types, ElementsAre("side_effect"));
  EXPECT_THAT(se.relations, ElementsAre("drug causes side effect"));
  const QuestionIntent gene = ReadQuestionIntent("Which gene is mutated in cystic fibrosis?");
  EXPECT_THAT(gene.kinds, ElementsAre("gene"));
  EXPECT_THAT(gene.answer_types, ElementsAre("gene"));
  EXPECT_THAT(ReadQuestionIntent("What does imatinib inhibit?").kinds, ElementsAre("target"));
  EXPECT_THAT(ReadQuestionIntent("Which protein does atorvastatin target?").kinds,
              ElementsAre("target"));
  EXPECT_THAT(ReadQuestionIntent("What are the subtypes of diabetes mellitus?").kinds,
              ElementsAre("is_a"));
  EXPECT_THAT(ReadQuestionIntent("Which organ does hepatitis B affect?").answer_types,
              ElementsAre("anatomy"));
  EXPECT_THAT(ReadQuestionIntent("What class of drug is atenolol?").answer_types,
              ElementsAre("pharmacologic_class"));
}

TEST(QuestionIntentTest, MetabolismIsNotATarget) {
  for (const char* q :
       {"Which enzymes metabolize warfarin?", "Which enzyme is clopidogrel metabolised by?",
        "Which drugs are metabolized by CYP3A4?"}) {
    const QuestionIntent intent = ReadQuestionIntent(q);
    EXPECT_THAT(intent.kinds, ElementsAre("metabolism")) << q;
    EXPECT_TRUE(intent.AsksFor("drug is metabolized by gene")) << q;
    EXPECT_FALSE(intent.AsksFor("drug binds gene")) << q;
    EXPECT_FALSE(intent.AsksFor("drug has carrier gene")) << q;
  }
  // An enzyme a drug inhibits is its target, which DrugBank's enzymes are not.
  const QuestionIntent target = ReadQuestionIntent("What enzyme does allopurinol inhibit?");
  EXPECT_THAT(target.kinds, ElementsAre("target"));
  EXPECT_FALSE(target.AsksFor("drug is metabolized by gene"));
}

TEST(QuestionIntentTest, SymptomaticReliefIncludesTheLabelsIndications) {
  const QuestionIntent intent =
      ReadQuestionIntent("What medications ease the symptoms of irritable bowel syndrome?");
  EXPECT_THAT(intent.kinds, ElementsAre("palliates"));
  EXPECT_TRUE(intent.AsksFor("drug palliates disease"));
  EXPECT_TRUE(intent.AsksFor("drug indicated for condition"));
  // A label's mere mention of a condition (SIDER text_mention) is no indication.
  EXPECT_FALSE(intent.AsksFor("drug label mentions condition"));
  EXPECT_FALSE(intent.AsksFor("drug treats disease"));
}

TEST(QuestionIntentTest, AClassNounAsksForTheClassMembersAmongTheAnswers) {
  const QuestionIntent tb = ReadQuestionIntent("Which antibiotics are used to treat tuberculosis?");
  EXPECT_THAT(tb.kinds, ElementsAre("treats", "drug_class"));
  EXPECT_THAT(tb.answer_types, ElementsAre("compound"));
  EXPECT_EQ(tb.constraint, IntentConstraint::kAllOf);
  EXPECT_TRUE(tb.AsksFor("pharmacologic class includes drug"));
  EXPECT_TRUE(tb.AsksForClassMembers());
  const QuestionIntent tendons = ReadQuestionIntent("Which antibiotics cause tendon rupture?");
  EXPECT_THAT(tendons.kinds, ElementsAre("side_effect", "drug_class"));
  EXPECT_EQ(tendons.constraint, IntentConstraint::kAllOf);
  // The class asked about itself: no constraint added.
  const QuestionIntent ssri =
      ReadQuestionIntent("Which antidepressants are selective serotonin reuptake inhibitors?");
  EXPECT_THAT(ssri.kinds, Contains("drug_class"));
  EXPECT_EQ(ssri.constraint, IntentConstraint::kNone);
  EXPECT_FALSE(ssri.AsksForClassMembers());
  // A plain drug noun is no class.
  EXPECT_EQ(ReadQuestionIntent("Which drugs are used to treat tuberculosis?").constraint,
            IntentConstraint::kNone);
}

TEST(QuestionIntentTest, Constraints) {
  const QuestionIntent both =
      ReadQuestionIntent("Which genes are associated with both psoriasis and Crohn's disease?");
  EXPECT_THAT(both.kinds, ElementsAre("gene"));
  EXPECT_EQ(both.constraint, IntentConstraint::kAllOf);
  const QuestionIntent except =
      ReadQuestionIntent("Which of the following is NOT used to treat hypertension?");
  EXPECT_THAT(except.kinds, ElementsAre("treats"));
  EXPECT_EQ(except.constraint, IntentConstraint::kExcept);
  EXPECT_EQ(ReadQuestionIntent("All of the following drugs treat gout EXCEPT").constraint,
            IntentConstraint::kExcept);
  EXPECT_EQ(ReadQuestionIntent("What drugs treat asthma?").constraint, IntentConstraint::kNone);
}

TEST(QuestionIntentTest, VignetteReadsOnlyTheQuestionSentence) {
  // "does not smoke" and "treated with lisinopril" are history, not what is asked.
  const QuestionIntent intent = ReadQuestionIntent(
      "A 45-year-old man treated with lisinopril who does not smoke presents with chest pain. "
      "Which of the following is the most likely diagnosis?");
  EXPECT_TRUE(intent.empty());
  EXPECT_EQ(intent.constraint, IntentConstraint::kNone);
  EXPECT_EQ(intent.origin, "");
  EXPECT_EQ(intent.Summary(), "none");
}

TEST(QuestionIntentTest, UnreadableQuestionsAreEmpty) {
  for (const char* q : {"", "   ", "?", "Tell me more.", "Hello there"}) {
    EXPECT_TRUE(ReadQuestionIntent(q).empty()) << q;
  }
}

TEST(QuestionIntentTest, YesNoQuestionsHaveKindsWithoutType) {
  const QuestionIntent intent = ReadQuestionIntent("Is metformin used to treat type 2 diabetes?");
  EXPECT_THAT(intent.kinds, ElementsAre("treats"));
  EXPECT_THAT(intent.answer_types, IsEmpty());
  EXPECT_TRUE(intent.AcceptsType("compound"));
  EXPECT_TRUE(intent.AcceptsType("disease"));
}

TEST(QuestionIntentTest, AnswerEndsFollowTheAnswerType) {
  const QuestionIntent symptoms = ReadQuestionIntent("What are the symptoms of asthma?");
  EXPECT_FALSE(symptoms.AnswerEndsOf("disease presents symptom").head);
  EXPECT_TRUE(symptoms.AnswerEndsOf("disease presents symptom").tail);
  const QuestionIntent drugs = ReadQuestionIntent("What drugs treat asthma?");
  EXPECT_TRUE(drugs.AnswerEndsOf("drug treats disease").head);
  EXPECT_FALSE(drugs.AnswerEndsOf("drug treats disease").tail);
  // No answer noun: either end.
  const QuestionIntent used = ReadQuestionIntent("What is metformin used for?");
  EXPECT_TRUE(used.AnswerEndsOf("drug treats disease").head);
  EXPECT_TRUE(used.AnswerEndsOf("drug treats disease").tail);
  // A relation the intent does not know: either end.
  EXPECT_TRUE(drugs.AnswerEndsOf("gene interacts with gene").head);
}

// The relation names the answer's role: SIDER's Nausea is the tail of "drug causes side effect"
// though the KG merged it into the phenotype node sharing its UMLS id.
TEST(QuestionIntentTest, ARelationsDeclaredEndTypeDecidesOverTheEntityType) {
  const QuestionIntent effects = ReadQuestionIntent("What are the side effects of metformin?");
  ASSERT_THAT(effects.answer_types, ElementsAre("side_effect"));
  EXPECT_FALSE(effects.AcceptsType("phenotype"));
  EXPECT_TRUE(effects.AcceptsEnd("drug causes side effect", /*head_end=*/false, "phenotype"));
  // The head of that relation is a drug, not a side effect: the entity type decides, and refuses.
  EXPECT_FALSE(effects.AcceptsEnd("drug causes side effect", /*head_end=*/true, "compound"));
  // An end the relation leaves untyped ("drug indicated for condition"'s condition) and an
  // unknown relation: the entity's own type.
  const QuestionIntent drugs = ReadQuestionIntent("What drugs treat asthma?");
  EXPECT_TRUE(drugs.AcceptsEnd("drug indicated for condition", /*head_end=*/true, "compound"));
  EXPECT_FALSE(drugs.AcceptsEnd("drug indicated for condition", /*head_end=*/false, "disease"));
  EXPECT_FALSE(drugs.AcceptsEnd("disease resembles disease", /*head_end=*/false, "disease"));
  EXPECT_TRUE(drugs.AcceptsEnd("disease resembles disease", /*head_end=*/false, "compound"));
  // A declared type the intent does not ask for refuses the end, whatever the entity's type.
  EXPECT_FALSE(drugs.AcceptsEnd("drug treats disease", /*head_end=*/false, "compound"));
  EXPECT_TRUE(drugs.AcceptsEnd("drug treats disease", /*head_end=*/true, "disease"));
}

// The types a topic can have: the ends opposite the answer; both ends without answer types.
TEST(QuestionIntentTest, TopicTypesAreTheEndsOppositeTheAnswer) {
  EXPECT_THAT(ReadQuestionIntent("What drugs treat COPD?").TopicTypes(), ElementsAre("disease"));
  EXPECT_THAT(ReadQuestionIntent("Which genes are associated with PAH?").TopicTypes(),
              ElementsAre("disease", "phenotype"));
  EXPECT_THAT(ReadQuestionIntent("Is PTPN22 associated with rheumatoid arthritis?").TopicTypes(),
              ::testing::IsSupersetOf({"disease", "gene", "phenotype"}));
  EXPECT_THAT(ReadQuestionIntent("Tell me more.").TopicTypes(), IsEmpty());
}

TEST(QuestionIntentTest, EveryKindHasRelationsAndTypes) {
  for (const IntentKind& kind : IntentKinds()) {
    EXPECT_THAT(kind.relations, Not(IsEmpty())) << kind.name;
    EXPECT_THAT(kind.answer_types, Not(IsEmpty())) << kind.name;
    EXPECT_EQ(FindIntentKind(kind.name), &kind);
  }
  EXPECT_EQ(FindIntentKind("cures"), nullptr);
}

TEST(QuestionIntentTest, RequestOverride) {
  auto intent = IntentFromRequest({"side_effect", "side_effect"}, {"side_effect"},
                                  IntentConstraint::kNone, "intent");
  ASSERT_TRUE(intent.ok()) << intent.status();
  EXPECT_THAT(intent->kinds, ElementsAre("side_effect"));
  EXPECT_THAT(intent->relations, ElementsAre("drug causes side effect"));
  EXPECT_EQ(intent->origin, "request");

  auto bad_kind = IntentFromRequest({"cures"}, {}, IntentConstraint::kNone, "intent");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_EQ(bad_kind.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_kind.status().message()),
              ::testing::HasSubstr("intent.relation_kinds: 'cures' is not one of treats"));

  auto bad_type = IntentFromRequest({}, {"Compound!"}, IntentConstraint::kNone, "intent");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_THAT(std::string(bad_type.status().message()),
              ::testing::HasSubstr("intent.answer_types"));

  std::vector<std::string> many(17, "treats");
  auto too_many = IntentFromRequest(many, {}, IntentConstraint::kNone, "intent");
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(std::string(too_many.status().message()),
              ::testing::HasSubstr("intent.relation_kinds: 17 entries, at most 16"));

  auto empty = IntentFromRequest({}, {}, IntentConstraint::kNone, "intent");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(empty->origin, "");
}

}  // namespace
}  // namespace ibgraphrag::common
