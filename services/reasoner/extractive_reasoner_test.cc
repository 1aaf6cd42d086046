#include "services/reasoner/extractive_reasoner.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::reasoner {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

EvidenceTriple Triple(std::string head_id, std::string head, std::string relation,
                      std::string tail_id, std::string tail, double score) {
  EvidenceTriple t;
  t.head = {std::move(head_id), std::move(head)};
  t.relation = std::move(relation);
  t.tail = {std::move(tail_id), std::move(tail)};
  t.score = score;
  return t;
}

ReasonRequest MiRequest() {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = "Which drug is used to treat myocardial infarction?";
  request.options = {"Metformin", "Aspirin", "Levothyroxine", "Omeprazole"};
  request.topic_entities = {{"DOID:5844", "myocardial infarction"}};
  request.evidence = {
      Triple("DB:metformin", "Metformin", "treats", "DOID:9352", "Type 2 diabetes mellitus", 0.8),
      Triple("DB:aspirin", "Aspirin", "treats", "DOID:5844", "Myocardial infarction", 0.9),
      Triple("DOID:5844", "Myocardial infarction", "presents", "SYM:chest", "Chest pain", 0.6),
      Triple("DB:omeprazole", "Omeprazole", "causes", "SE:headache", "Headache", 0.3),
      Triple("DOID:9352", "Type 2 diabetes mellitus", "resembles", "DOID:5844",
             "Myocardial infarction", 0.2),
  };
  return request;
}

TEST(ExtractiveMultipleChoiceTest, PicksTheOptionTheEvidenceConnectsToTheTopic) {
  const ReasonResult result =
      ReasonExtractively(MiRequest(), Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 1);
  EXPECT_EQ(result.option_letter, "B");
  EXPECT_FALSE(result.insufficient_evidence);
  EXPECT_FALSE(result.low_confidence);
  EXPECT_FALSE(result.used_llm);
  EXPECT_EQ(result.backend, "extractive");
  EXPECT_EQ(result.prompt_version, "extractive.v1");
  EXPECT_THAT(result.answer, HasSubstr("B) Aspirin"));
  EXPECT_THAT(result.answer, HasSubstr("no LLM was used"));
  EXPECT_THAT(result.rationale, HasSubstr("(Aspirin, treats, Myocardial infarction)"));
  EXPECT_THAT(result.evidence_used, Contains(1));
  EXPECT_GT(result.confidence, 0.0);
}

TEST(ExtractiveMultipleChoiceTest, WeighsADirectLinkAboveAStrongerTwoHopPath) {
  ReasonRequest request;
  request.question = "Which gene is linked to disease D?";
  request.options = {"GENE1", "GENE2"};
  request.topic_entities = {{"D", "disease D"}};
  request.evidence = {
      Triple("D", "disease D", "associates", "G1", "GENE1", 0.5),
      Triple("D", "disease D", "associates", "X", "GENE9", 0.9),
      Triple("X", "GENE9", "interacts", "G2", "GENE2", 0.9),
  };
  // GENE1: 0.5; GENE2: 0.9 * 0.9 * hop_decay 0.5 = 0.405.
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 0);
  EXPECT_TRUE(result.low_confidence);  // 0.405 >= 0.8 * 0.5
}

TEST(ExtractiveMultipleChoiceTest, ShowsTheWholePathFromTheTopicInTheRationale) {
  ReasonRequest request;
  request.question = "Which gene is linked to disease D?";
  request.options = {"GENE2", "GENE3"};
  request.topic_entities = {{"D", "disease D"}};
  request.evidence = {
      Triple("D", "disease D", "associates", "X", "GENE9", 0.9),
      Triple("X", "GENE9", "interacts", "G2", "GENE2", 0.9),
  };
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  ASSERT_EQ(result.option_index, 0);
  EXPECT_EQ(result.evidence_used, (std::vector<int>{0, 1}));
}

TEST(ExtractiveMultipleChoiceTest, ChoosesNothingWhenNoOptionIsConnected) {
  ReasonRequest request = MiRequest();
  request.options = {"Insulin", "Levothyroxine"};
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, -1);
  EXPECT_EQ(result.option_letter, "");
  EXPECT_TRUE(result.insufficient_evidence);
  EXPECT_THAT(result.answer, HasSubstr("no LLM was used"));
}

TEST(ExtractiveMultipleChoiceTest, FlagsEmptyEvidenceAsInsufficient) {
  ReasonRequest request = MiRequest();
  request.evidence.clear();
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, -1);
  EXPECT_TRUE(result.insufficient_evidence);
  EXPECT_THAT(result.answer, HasSubstr("no evidence was retrieved"));
}

TEST(ExtractiveMultipleChoiceTest, ChoosesNothingOnATie) {
  ReasonRequest request;
  request.question = "Which drug treats D?";
  request.options = {"Drug A", "Drug B"};
  request.topic_entities = {{"D", "D"}};
  request.evidence = {Triple("A", "Drug A", "treats", "D", "D", 0.7),
                      Triple("B", "Drug B", "treats", "D", "D", 0.7)};
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, -1);
  EXPECT_TRUE(result.low_confidence);
  EXPECT_FALSE(result.insufficient_evidence);
  EXPECT_THAT(result.answer, HasSubstr("A, B"));
}

TEST(ExtractiveMultipleChoiceTest, DoesNotMatchNamesThatDifferInANumber) {
  ReasonRequest request;
  request.question = "Which disease presents polyuria?";
  request.options = {"Type 1 diabetes", "Hypertension"};
  request.topic_entities = {{"S", "polyuria"}};
  request.evidence = {Triple("T2", "Type 2 diabetes", "presents", "S", "Polyuria", 0.9)};
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, -1);
  EXPECT_TRUE(result.insufficient_evidence);
}

TEST(ExtractiveMultipleChoiceTest, MatchesOptionTextContainingTheEntityName) {
  ReasonRequest request = MiRequest();
  request.options = {"Oral metformin", "Low-dose aspirin therapy", "Levothyroxine"};
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 1);
}

TEST(ExtractiveMultipleChoiceTest, FindsTopicEntitiesInTheQuestionWhenNoneAreGiven) {
  ReasonRequest request = MiRequest();
  request.topic_entities.clear();
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 1);
}

TEST(ExtractiveMultipleChoiceTest, AnswersAnExceptQuestionWithTheOnlyUnsupportedOption) {
  ReasonRequest request;
  request.question = "All of the following present in migraine EXCEPT:";
  request.options = {"Nausea", "Photophobia", "Polyuria"};
  request.topic_entities = {{"M", "migraine"}};
  request.evidence = {Triple("M", "Migraine", "presents", "N", "Nausea", 0.9),
                      Triple("M", "Migraine", "presents", "P", "Photophobia", 0.8)};
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 2);
  EXPECT_TRUE(result.low_confidence);
}

ReasonRequest Claim(std::string claim, std::vector<EvidenceTriple> evidence) {
  ReasonRequest request;
  request.task = Task::kFactVerification;
  request.question = std::move(claim);
  request.evidence = std::move(evidence);
  return request;
}

constexpr char kIsA[] = "disease is a subtype of disease";

TEST(ExtractiveMultipleChoiceTest, PrefersTheOptionConnectedToEveryQuestionEntity) {
  ReasonRequest request;
  request.question = "Which gene is associated with both asthma and eczema?";
  request.options = {"GENEA", "GENEB", "GENEC"};
  request.topic_entities = {{"X", "asthma"}, {"Y", "eczema"}};
  request.evidence = {
      Triple("A", "GENEA", "associates", "X", "asthma", 0.95),
      Triple("A", "GENEA", "is expressed in", "X", "asthma", 0.9),
      Triple("B", "GENEB", "associates", "X", "asthma", 0.3),
      Triple("B", "GENEB", "associates", "Y", "eczema", 0.3),
      Triple("C", "GENEC", "associates", "Y", "eczema", 0.2),
  };
  // Summed support: GENEA 1.85+ > GENEB 0.9; GENEB is the only one tied to both entities.
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 1) << result.rationale;
  EXPECT_FALSE(result.low_confidence);
  EXPECT_THAT(result.rationale, HasSubstr("(GENEB, associates, asthma)"));
  EXPECT_THAT(result.rationale, HasSubstr("(GENEB, associates, eczema)"));
  EXPECT_THAT(result.rationale, HasSubstr("Connected to 2 of 2 question entities."));
}

TEST(ExtractiveMultipleChoiceTest, AnOptionSentAsATopicEntityIsNotAQuestionEntity) {
  ReasonRequest request;
  request.question = "Which gene is associated with both asthma and eczema?";
  request.options = {"GENEA", "GENEB"};
  // The gateway aligns option text too: GENEA arrives as a topic entity.
  request.topic_entities = {{"X", "asthma"}, {"Y", "eczema"}, {"A", "GENEA"}};
  request.evidence = {
      Triple("A", "GENEA", "associates", "X", "asthma", 0.95),
      Triple("A", "GENEA", "interacts with", "Z", "GENEZ", 0.9),
      Triple("B", "GENEB", "associates", "X", "asthma", 0.3),
      Triple("B", "GENEB", "associates", "Y", "eczema", 0.3),
  };
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 1) << result.rationale;
  EXPECT_THAT(result.rationale, HasSubstr("Connected to 2 of 2 question entities."));
}

TEST(ExtractiveMultipleChoiceTest, SameNamedTopicEntitiesCountAsOneQuestionEntity) {
  ReasonRequest request;
  request.question = "Which gene is associated with diabetes mellitus?";
  request.options = {"GENEA", "GENEB"};
  // The disease and the phenotype of one name: one question entity, so no "connected to all"
  // ranking; support decides.
  request.topic_entities = {{"DOID:9351", "diabetes mellitus"},
                            {"HP:0000819", "Diabetes mellitus"}};
  request.evidence = {
      Triple("A", "GENEA", "associates", "DOID:9351", "diabetes mellitus", 0.9),
      Triple("B", "GENEB", "associates", "DOID:9351", "diabetes mellitus", 0.2),
      Triple("B", "GENEB", "has phenotype", "HP:0000819", "Diabetes mellitus", 0.2),
  };
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 0) << result.rationale;
  EXPECT_THAT(result.rationale, Not(HasSubstr("question entities")));
}

TEST(ExtractiveMultipleChoiceTest, ConnectionThroughAnotherQuestionEntityDoesNotCount) {
  ReasonRequest request;
  request.question = "Which gene is associated with both asthma and eczema?";
  request.options = {"GENEA", "GENEB"};
  request.topic_entities = {{"X", "asthma"}, {"Y", "eczema"}};
  request.evidence = {
      // GENEA reaches eczema only through asthma: one entity, not two.
      Triple("A", "GENEA", "associates", "X", "asthma", 0.9),
      Triple("X", "asthma", "resembles", "Y", "eczema", 0.9),
      Triple("B", "GENEB", "associates", "Y", "eczema", 0.5),
  };
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 0);  // both reach one entity; GENEA has more support
  EXPECT_THAT(result.rationale, HasSubstr("Connected to 1 of 2 question entities."));
}

// GENE1 is tied to subtype S2 of subtype S1 of the topic D only; GENE3 to D directly, weaker;
// GENE2 to an unrelated disease.
ReasonRequest SubtypeChainRequest() {
  ReasonRequest request;
  request.question = "Which gene is linked to disease D?";
  request.options = {"GENE1", "GENE2", "GENE3"};
  request.topic_entities = {{"D", "disease D"}};
  request.evidence = {
      Triple("G1", "GENE1", "associates", "S2", "subtype S2", 0.8),
      Triple("S2", "subtype S2", kIsA, "S1", "subtype S1", 0.3),
      Triple("S1", "subtype S1", kIsA, "D", "disease D", 0.3),
      Triple("G2", "GENE2", "associates", "O", "other disease", 0.9),
      Triple("G3", "GENE3", "associates", "D", "disease D", 0.5),
  };
  return request;
}

TEST(ExtractiveMultipleChoiceTest, ASubtypeFactSupportsItsParentWithoutHopDecay) {
  const ReasonRequest request = SubtypeChainRequest();
  // GENE1: 0.8 through two is_a levels at weight 1 (as a plain 3-hop path it would be ~0.02);
  // GENE3: 0.5 directly; GENE2: unconnected.
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 0) << result.rationale;
  EXPECT_NEAR(result.confidence, 0.8, 1e-9);
  EXPECT_THAT(result.rationale, HasSubstr("(subtype S1, disease is a subtype of disease, "
                                          "disease D)"));
  EXPECT_THAT(result.rationale,
              HasSubstr("Path: disease D <-[disease is a subtype of disease]- subtype S1 "
                        "<-[disease is a subtype of disease]- subtype S2 <-[associates]- GENE1"));
  EXPECT_EQ(result.evidence_used, (std::vector<int>{2, 1, 0}));
}

TEST(ExtractiveMultipleChoiceTest, SubtypeDepthIsLimited) {
  ExtractiveOptions options;
  options.max_subtype_depth = 1;  // S2 is two levels down: an ordinary 2-hop path from S1
  const ReasonResult result =
      ReasonExtractively(SubtypeChainRequest(), Task::kMultipleChoice, options);
  EXPECT_EQ(result.option_index, 2);
}

TEST(ExtractiveMultipleChoiceTest, AParentFactSupportsASubtypeTopicWithLowerWeight) {
  ReasonRequest request;
  request.question = "Which gene is linked to subtype S?";
  request.options = {"GENE1", "GENE2"};
  request.topic_entities = {{"S", "subtype S"}};
  request.evidence = {
      Triple("G1", "GENE1", "associates", "D", "disease D", 0.8),
      Triple("S", "subtype S", kIsA, "D", "disease D", 0.3),
      Triple("G2", "GENE2", "associates", "O", "other disease", 0.9),
  };
  ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 0);
  EXPECT_NEAR(result.confidence, 0.5 * 0.8, 1e-9);  // supertype_weight 0.5
  EXPECT_THAT(result.rationale, HasSubstr("Path: subtype S -[disease is a subtype of disease]-> "
                                          "disease D <-[associates]- GENE1"));
  // A direct fact about the subtype outweighs its parent's.
  request.options = {"GENE1", "GENE3"};
  request.evidence.push_back(Triple("G3", "GENE3", "associates", "S", "subtype S", 0.5));
  result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 1);
}

TEST(ExtractiveMultipleChoiceTest, SiblingsOfATopicAreNotAnchored) {
  ReasonRequest request;
  request.question = "Which gene is linked to subtype S?";
  request.options = {"GENE1", "GENE2"};
  request.topic_entities = {{"S", "subtype S"}};
  request.evidence = {
      Triple("S", "subtype S", kIsA, "D", "disease D", 0.3),
      Triple("T", "sibling T", kIsA, "D", "disease D", 0.3),
      Triple("G1", "GENE1", "associates", "T", "sibling T", 0.9),
      Triple("G2", "GENE2", "associates", "D", "disease D", 0.3),
  };
  // GENE2 via the parent: 0.5 * 0.3 = 0.15. GENE1 via the sibling: 0.5 * 0.3 * 0.9 * 0.5
  // (the sibling is an ordinary hop from the anchored parent, then decayed).
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, 1);
}

TEST(ExtractiveFactTest, SupportsAClaimTheEvidenceStates) {
  const ReasonResult result = ReasonExtractively(
      Claim("metronidazole treats crohn's disease",
            {Triple("DB:m", "Metronidazole", "treats", "DOID:8778", "Crohn's disease", 0.8),
             Triple("DOID:8778", "Crohn's disease", "presents", "S:d", "Diarrhea", 0.9)}),
      Task::kFactVerification, ExtractiveOptions());
  EXPECT_EQ(result.fact_label, FactLabel::kSupported);
  EXPECT_FALSE(result.insufficient_evidence);
  EXPECT_EQ(result.evidence_used.front(), 0);
  EXPECT_THAT(result.answer, HasSubstr("no LLM was used"));
}

TEST(ExtractiveFactTest, RefutesANegatedClaimTheEvidenceContradicts) {
  const ReasonResult result =
      ReasonExtractively(Claim("KLEEFSTRA SYNDROME 1 is not associated with Gene EHMT1",
                               {Triple("DOID:k", "Kleefstra syndrome 1", "disease associates gene",
                                       "G:EHMT1", "EHMT1", 0.7)}),
                         Task::kFactVerification, ExtractiveOptions());
  EXPECT_EQ(result.fact_label, FactLabel::kRefuted);
}

TEST(ExtractiveFactTest, RefutesANegatedIsAClaim) {
  const ReasonResult result =
      ReasonExtractively(Claim("enhanced S-cone syndrome is not a vitreoretinal degeneration",
                               {Triple("DOID:e", "enhanced S-cone syndrome", "is a", "DOID:v",
                                       "vitreoretinal degeneration", 1.0)}),
                         Task::kFactVerification, ExtractiveOptions());
  EXPECT_EQ(result.fact_label, FactLabel::kRefuted);
}

TEST(ExtractiveFactTest, RefutesAClaimWhoseRelationIsTheOpposite) {
  const ReasonResult result = ReasonExtractively(
      Claim("Liver upregulates ALB",
            {Triple("A:liver", "Liver", "anatomy downregulates gene", "G:alb", "ALB", 0.6)}),
      Task::kFactVerification, ExtractiveOptions());
  EXPECT_EQ(result.fact_label, FactLabel::kRefuted);
}

TEST(ExtractiveFactTest, SaysUnknownWhenTheEvidenceDoesNotLinkTheClaimsEntities) {
  const ReasonResult result = ReasonExtractively(
      Claim("metronidazole treats crohn's disease",
            {Triple("DB:m", "Metronidazole", "treats", "DOID:x", "Bacterial vaginosis", 0.8)}),
      Task::kFactVerification, ExtractiveOptions());
  EXPECT_EQ(result.fact_label, FactLabel::kUnknown);
  EXPECT_TRUE(result.insufficient_evidence);
}

TEST(ExtractiveFactTest, SaysUnknownWhenTheLinkingRelationIsNotTheClaimed) {
  const ReasonResult result = ReasonExtractively(
      Claim("metronidazole treats crohn's disease",
            {Triple("DB:m", "Metronidazole", "causes", "DOID:8778", "Crohn's disease", 0.8)}),
      Task::kFactVerification, ExtractiveOptions());
  EXPECT_EQ(result.fact_label, FactLabel::kUnknown);
  EXPECT_EQ(result.evidence_used, (std::vector<int>{0}));
}

// A yes/no question rarely repeats its relation's words ("cause" is not "causes"; "symptom" is
// an end type, not a relation word): the relation its intent asks about decides it.
ReasonResult VerifyOneTriple(std::string claim, const EvidenceTriple& triple) {
  return ReasonExtractively(Claim(std::move(claim), {triple}), Task::kFactVerification,
                            ExtractiveOptions());
}

TEST(ExtractiveFactTest, TheRelationTheQuestionAsksAboutDecidesIt) {
  const EvidenceTriple causes = Triple("DB01076", "Atorvastatin", "drug causes side effect",
                                       "UMLS:C0035410", "Rhabdomyolysis", 1.0);
  const EvidenceTriple presents = Triple("DOID:14330", "Parkinson's disease",
                                         "disease presents symptom", "D014202", "Tremor", 1.0);
  const ReasonResult side_effect =
      VerifyOneTriple("Can atorvastatin cause rhabdomyolysis?", causes);
  EXPECT_EQ(side_effect.fact_label, FactLabel::kSupported);
  EXPECT_EQ(side_effect.evidence_used, (std::vector<int>{0}));
  EXPECT_EQ(VerifyOneTriple("Is tremor a symptom of Parkinson's disease?", presents).fact_label,
            FactLabel::kSupported);
  // Negated, the same triple contradicts the claim.
  EXPECT_EQ(VerifyOneTriple("Is tremor not a symptom of Parkinson's disease?", presents).fact_label,
            FactLabel::kRefuted);
  // A statement must name its relation itself: the intent read into it decides nothing.
  EXPECT_EQ(VerifyOneTriple("Tremor is a symptom of Parkinson's disease.", presents).fact_label,
            FactLabel::kUnknown);
  // A link through a relation the question does not ask about decides nothing.
  EvidenceTriple treats = causes;
  treats.relation = "drug treats disease";
  EXPECT_EQ(VerifyOneTriple("Can atorvastatin cause rhabdomyolysis?", treats).fact_label,
            FactLabel::kUnknown);
}

TEST(ExtractiveOpenTest, RendersTheBestPathsAsChainsFromTheTopic) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "How is metformin related to polyuria?";
  request.topic_entities = {{"DB:metformin", "metformin"}};
  request.evidence = {
      Triple("DB:metformin", "Metformin", "treats", "DOID:9352", "Type 2 diabetes", 0.9),
      Triple("DOID:9352", "Type 2 diabetes", "presents", "S:polyuria", "Polyuria", 0.8),
      Triple("DB:metformin", "Metformin", "binds", "G:prkab1", "PRKAB1", 0.3),
  };
  request.paths = {{{2}, 0.3}, {{0, 1}, 0.72}};
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_THAT(result.answer, HasSubstr("no LLM was used"));
  const size_t best =
      result.answer.find("1. Metformin -[treats]-> Type 2 diabetes -[presents]-> Polyuria");
  const size_t second = result.answer.find("2. Metformin -[binds]-> PRKAB1");
  ASSERT_NE(best, std::string::npos) << result.answer;
  ASSERT_NE(second, std::string::npos) << result.answer;
  EXPECT_EQ(result.evidence_used, (std::vector<int>{0, 1, 2}));
}

TEST(ExtractiveOpenTest, UsesTopTriplesWhenThereAreNoPaths) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "What does migraine present with?";
  request.topic_entities = {{"M", "migraine"}};
  request.evidence = {Triple("X", "Other", "presents", "Y", "Thing", 0.99),
                      Triple("M", "Migraine", "presents", "N", "Nausea", 0.5)};
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_THAT(result.answer, HasSubstr("1. Migraine -[presents]-> Nausea"));
  EXPECT_EQ(result.evidence_used, (std::vector<int>{1}));
}

TEST(ExtractiveOpenTest, FlagsEmptyEvidence) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "What does migraine present with?";
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_TRUE(result.insufficient_evidence);
}

// A typed triple with its sources, as the gateway forwards retriever evidence.
EvidenceTriple Typed(std::string head_id, std::string head, std::string head_type,
                     std::string relation, std::string tail_id, std::string tail,
                     std::string tail_type, double score, std::vector<std::string> sources) {
  EvidenceTriple t = Triple(std::move(head_id), std::move(head), std::move(relation),
                            std::move(tail_id), std::move(tail), score);
  t.head.type = std::move(head_type);
  t.tail.type = std::move(tail_type);
  t.sources = std::move(sources);
  if (!t.sources.empty()) t.source = t.sources.front();
  return t;
}

// "What drugs treat type 2 diabetes?" with the hub's gene associations scored higher than its
// drugs (what the topic-neighbourhood evidence looked like): the intent answers with the drugs,
// the best-sourced first, each with its triple and sources.
ReasonRequest DiabetesDrugsRequest() {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "What drugs treat type 2 diabetes?";
  request.topic_entities = {{"DOID:9352", "type 2 diabetes mellitus", "disease"}};
  request.evidence = {
      Typed("DOID:9352", "type 2 diabetes mellitus", "disease", "disease associated with gene",
            "Entrez:1", "TCF7L2", "gene", 0.95, {"gwas"}),
      Typed("DOID:9352", "type 2 diabetes mellitus", "disease", "disease associated with gene",
            "Entrez:2", "KCNJ11", "gene", 0.93, {"disgenet"}),
      Typed("DrugBank:DB00331", "Metformin", "compound", "drug treats disease", "DOID:9352",
            "type 2 diabetes mellitus", "disease", 0.6,
            {"hetionet", "pharmacotherapydb", "drugcentral"}),
      Typed("DrugBank:DB01120", "Gliclazide", "compound", "drug treats disease", "DOID:9352",
            "type 2 diabetes mellitus", "disease", 0.6, {"hetionet"}),
      // DrugCentral alone (Hetionet's treats edges are PharmacotherapyDB's, so "hetionet" never
      // comes without "pharmacotherapydb" on a treats triple of the real KG).
      Typed("DrugBank:DB01067", "Glipizide", "compound", "drug treats disease", "DOID:9352",
            "type 2 diabetes mellitus", "disease", 0.7, {"drugcentral"}),
      // Not linked to the topic: a drug treating another disease is no answer.
      Typed("DrugBank:DB00945", "Aspirin", "compound", "drug treats disease", "DOID:5844",
            "myocardial infarction", "disease", 0.9, {"hetionet"}),
  };
  return request;
}

TEST(ExtractiveOpenIntentTest, AnswersWithTheEntitiesOfTheAskedRelationRankedBySources) {
  const ReasonResult result =
      ReasonExtractively(DiabetesDrugsRequest(), Task::kOpen, ExtractiveOptions());
  EXPECT_FALSE(result.insufficient_evidence);
  EXPECT_EQ(result.answers, (std::vector<std::string>{"Metformin", "Glipizide", "Gliclazide"}));
  ASSERT_EQ(result.answer_entities.size(), 3u);
  const AnswerEntity& first = result.answer_entities[0];
  EXPECT_EQ(first.entity.id, "DrugBank:DB00331");
  EXPECT_EQ(first.entity.type, "compound");
  EXPECT_EQ(first.evidence, (std::vector<int>{2}));
  EXPECT_EQ(first.sources,
            (std::vector<std::string>{"drugcentral", "hetionet", "pharmacotherapydb"}));
  EXPECT_EQ(first.topics_linked, 1);
  // Hetionet's treats edges are PharmacotherapyDB's (source_lineage.h): Metformin has two
  // independent sources, 0.6 * (1 + 2) = 1.8 > Glipizide 0.7 * 2 = 1.4 > Gliclazide 0.6 * 2 = 1.2.
  EXPECT_NEAR(first.support, 1.8, 1e-9);
  // The triple is rendered from the topic end, as reasoning paths are.
  EXPECT_THAT(result.answer, HasSubstr("1. Metformin (type 2 diabetes mellitus <-[drug treats "
                                       "disease]- Metformin; sources: drugcentral, hetionet, "
                                       "pharmacotherapydb)"));
  EXPECT_THAT(result.answer, Not(HasSubstr("TCF7L2")));
  EXPECT_THAT(result.answer, Not(HasSubstr("Aspirin")));
  EXPECT_THAT(result.answer, HasSubstr("no LLM was used"));
  EXPECT_EQ(result.evidence_used, (std::vector<int>{2, 4, 3}));
}

// A compilation and the primary file it was compiled from are one source: Hetionet's side-effect
// edges are a 5,000-pair sample of SIDER's, so "hetionet + sider" must not outrank a side effect
// SIDER alone lists with a higher retriever score.
TEST(ExtractiveOpenIntentTest, ACompilationOfAnotherSourceIsNotAnIndependentSource) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "What are the side effects of metformin?";
  request.topic_entities = {{"DrugBank:DB00331", "Metformin", "compound"}};
  request.evidence = {
      Typed("DrugBank:DB00331", "Metformin", "compound", "drug causes side effect", "SE:1",
            "Dysgeusia", "side_effect", 0.90, {"hetionet", "sider-side-effects"}),
      Typed("DrugBank:DB00331", "Metformin", "compound", "drug causes side effect", "SE:2",
            "Diarrhoea", "side_effect", 0.95, {"sider-side-effects"}),
  };
  ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_EQ(result.answers, (std::vector<std::string>{"Diarrhoea", "Dysgeusia"}));
  // Every source is still shown.
  ASSERT_EQ(result.answer_entities.size(), 2u);
  EXPECT_EQ(result.answer_entities[1].sources,
            (std::vector<std::string>{"hetionet", "sider-side-effects"}));
  // Two independent sources do count twice.
  request.evidence[0].sources = {"hetionet", "sider-side-effects", "offsides"};
  result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_EQ(result.answers, (std::vector<std::string>{"Dysgeusia", "Diarrhoea"}));
}

// SIDER's side effects that share a UMLS id with a phenotype, symptom or disease node land on it:
// the relation, not the node's type, makes it a side effect (before, Nausea and Headache were left
// out of every "side effects of" answer).
TEST(ExtractiveOpenIntentTest, ASideEffectOnAPhenotypeNodeIsStillASideEffect) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "What are the side effects of metformin?";
  request.topic_entities = {{"DrugBank:DB00331", "Metformin", "compound"}};
  request.evidence = {
      Typed("DrugBank:DB00331", "Metformin", "compound", "drug causes side effect", "HP:0002018",
            "Nausea", "phenotype", 0.95, {"sider-side-effects"}),
      Typed("DrugBank:DB00331", "Metformin", "compound", "drug causes side effect", "SE:1",
            "Dysgeusia", "side_effect", 0.90, {"sider-side-effects"}),
      // The head end of that relation is a drug, not a side effect, whatever its node's type.
      Typed("DrugBank:DB00945", "Aspirin", "phenotype", "drug causes side effect",
            "DrugBank:DB00331", "Metformin", "compound", 0.99, {"sider-side-effects"}),
  };
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_EQ(result.answers, (std::vector<std::string>{"Nausea", "Dysgeusia"}));
}

// The same rule decides which options the asked relation links in multiple choice: the option
// "diarrhea" is the HPO phenotype SIDER's Diarrhoea merged into.
TEST(ExtractiveLookupChoiceTest, AnOptionOnAPhenotypeNodeIsLinkedAsASideEffect) {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = "What are the adverse effects of metformin?";
  request.options = {"Diarrhea", "Tremor"};
  request.topic_entities = {{"DrugBank:DB00331", "Metformin", "compound"},
                            {"HP:0002014", "Diarrhea", "phenotype"},
                            {"HP:0001337", "Tremor", "phenotype"}};
  request.evidence = {
      Typed("DrugBank:DB00331", "Metformin", "compound", "drug causes side effect", "HP:0002014",
            "Diarrhea", "phenotype", 0.9, {"sider-side-effects"}),
      Typed("DOID:14330", "Parkinson's disease", "disease", "disease presents symptom",
            "HP:0001337", "Tremor", "phenotype", 0.95, {"hsdn"}),
  };
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_letter, "A") << result.rationale;
  EXPECT_EQ(result.signals.linked_options, 1);
}

TEST(ExtractiveOpenIntentTest, ASingularQuestionListsOnlyTheAnswersNearTheBest) {
  ReasonRequest request = DiabetesDrugsRequest();
  request.question = "Which gene is mutated in type 2 diabetes?";
  // Gene answers: TCF7L2 (0.95 * 2 = 1.9) and KCNJ11 (0.93 * 2 = 1.86), a near tie (within 0.9
  // of the best); a weakly backed third one is dropped.
  request.evidence.push_back(Typed("DOID:9352", "type 2 diabetes mellitus", "disease",
                                   "disease associated with gene", "Entrez:3", "XYZ1", "gene", 0.2,
                                   {"gwas"}));
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_EQ(result.answers, (std::vector<std::string>{"TCF7L2", "KCNJ11"}));
}

// "Which gene is mutated in sickle cell anemia?": the GWAS loci (BCL11A, a fetal-haemoglobin
// modifier) score above HBB, which DisGeNET's curated sources (ClinVar) back; a causal question
// names HBB first, an association question keeps the order by support.
TEST(ExtractiveOpenIntentTest, ACausalGeneQuestionRanksPopulationAssociationsLast) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.topic_entities = {{"DOID:10923", "sickle cell anemia", "disease"}};
  request.evidence = {
      Typed("DOID:10923", "sickle cell anemia", "disease", "disease associated with gene",
            "Entrez:53335", "BCL11A", "gene", 0.96, {"gwas-catalog-2015"}),
      Typed("DOID:10923", "sickle cell anemia", "disease", "disease associated with gene",
            "Entrez:5251", "PHEX", "gene", 0.96, {"gwas-catalog-2015", "diseases-experiments"}),
      Typed("DOID:10923", "sickle cell anemia", "disease", "disease associated with gene",
            "Entrez:3043", "HBB", "gene", 0.8, {"disgenet"}),
  };
  request.evidence[0].source_score = 1.0;
  request.evidence[2].source_score = 0.5;
  request.question = "Which gene is mutated in sickle cell anemia?";
  const ReasonResult cause = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  ASSERT_FALSE(cause.answers.empty()) << cause.answer;
  EXPECT_EQ(cause.answers.front(), "HBB") << cause.answer;
  // A GWAS source counts for nothing here: HBB 0.8 * (1 + 1) * 1.25 = 2.0, BCL11A
  // 0.96 * (1 + 0) * 1.5 = 1.44 and PHEX 0.96, both below 0.9 of HBB's: the singular question
  // names HBB alone.
  EXPECT_THAT(cause.answers, ElementsAre("HBB"));

  request.question = "Which genes are associated with sickle cell anemia?";
  const ReasonResult associated = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_THAT(associated.answers, ElementsAre("BCL11A", "PHEX", "HBB"));
}

// "What is the target of omeprazole?": BindingDB and Hetionet list the transporter ABCB1 as a
// binding (two sources, the higher score); DrugBank and DrugCentral state the proton pump as its
// target. Asked for the target, the curated statement is the answer and the binding is dropped;
// without a curated statement the bindings are all the evidence says, ranked by support.
TEST(ExtractiveOpenIntentTest, ATargetQuestionAnswersCuratedTargetsOverBindings) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.topic_entities = {{"DrugBank:DB00338", "Omeprazole", "compound"}};
  request.evidence = {
      Typed("DrugBank:DB00338", "Omeprazole", "compound", "drug binds gene", "Entrez:5243", "ABCB1",
            "gene", 0.95, {"bindingdb", "hetionet"}),
      Typed("DrugBank:DB00338", "Omeprazole", "compound", "drug binds gene", "Entrez:495", "ATP4A",
            "gene", 0.9, {"drugbank-proteins"}),
  };
  request.question = "What is the target of omeprazole?";
  const ReasonResult target = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_THAT(target.answers, ElementsAre("ATP4A")) << target.answer;
  // Neither curated (ATP4A a BindingDB binding too): by support, ABCB1 first.
  request.evidence[1].sources = {"bindingdb"};
  const ReasonResult bindings = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_THAT(bindings.answers, ElementsAre("ABCB1", "ATP4A")) << bindings.answer;
}

// "Which signaling pathways involve EGFR?": Reactome and PID list EGFR in dozens of pathways with
// the same strength (two sources each), so the scorer's order decided and "Signaling by GPCR"
// could come before "Signaling by EGFR". A pathway named after the gene is about it and comes
// first; the word must be whole ("TP53BP1" is not "TP53") and any case.
TEST(ExtractiveOpenIntentTest, APathwayQuestionNamesThePathwaysOfTheGeneFirst) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.topic_entities = {{"Entrez:1956", "EGFR", "gene"}};
  auto pathway = [](const char* id, const char* name, float score) {
    return Typed("Entrez:1956", "EGFR", "gene", "gene participates in pathway", id, name, "pathway",
                 score, {"hetionet", "pathways-reactome"});
  };
  request.evidence = {
      pathway("R-HSA-372790", "Signaling by GPCR", 0.99),
      pathway("PC7_1", "EGFRvIII signaling", 0.98),
      pathway("R-HSA-177929", "Signaling by egfr", 0.9),
      pathway("R-HSA-1227986", "Signaling by ERBB2", 0.97),
      pathway("R-HSA-180292", "GRB2 events in EGFR signaling", 0.8),
  };
  request.question = "Which signaling pathways involve EGFR?";
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_THAT(result.answers,
              ElementsAre("Signaling by egfr", "GRB2 events in EGFR signaling", "Signaling by GPCR",
                          "EGFRvIII signaling", "Signaling by ERBB2"))
      << result.answer;
}

// An open question whose relation the evidence does not hold around its entities says so
// (SIDER lists no side effects of warfarin) before listing what the evidence does hold.
TEST(ExtractiveOpenIntentTest, AnAskedRelationTheEvidenceLacksIsInsufficientEvidence) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "What are the side effects of warfarin?";
  request.topic_entities = {{"DrugBank:DB00682", "Warfarin", "compound"}};
  request.evidence = {Typed("DrugBank:DB00682", "Warfarin", "compound", "drug binds gene",
                            "Entrez:79001", "VKORC1", "gene", 0.76, {"drugbank"})};
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_TRUE(result.insufficient_evidence);
  EXPECT_TRUE(result.answer_entities.empty());
  EXPECT_THAT(result.answer, HasSubstr("Insufficient evidence: no side effects in the evidence "
                                       "link to the question's entities through side_effect"));
  EXPECT_THAT(result.answer, HasSubstr("1. Warfarin -[drug binds gene]-> VKORC1"));
}

TEST(ExtractiveOpenIntentTest, AllOfKeepsOnlyAnswersLinkedToEveryTopic) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "Which genes are associated with both psoriasis and Crohn's disease?";
  request.topic_entities = {{"DOID:8893", "psoriasis", "disease"},
                            {"DOID:8778", "Crohn's disease", "disease"}};
  request.evidence = {
      Typed("DOID:8893", "psoriasis", "disease", "disease associated with gene", "E:1", "IL23R",
            "gene", 0.8, {"gwas"}),
      Typed("DOID:8778", "Crohn's disease", "disease", "disease associated with gene", "E:1",
            "IL23R", "gene", 0.8, {"gwas", "disgenet"}),
      Typed("DOID:8893", "psoriasis", "disease", "disease associated with gene", "E:2", "HLA-C",
            "gene", 0.99, {"gwas", "disgenet", "hetionet"}),
      Typed("DOID:8778", "Crohn's disease", "disease", "disease associated with gene", "E:3",
            "NOD2", "gene", 0.99, {"gwas", "disgenet", "hetionet"}),
  };
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_EQ(result.answers, (std::vector<std::string>{"IL23R"}));
  ASSERT_EQ(result.answer_entities.size(), 1u);
  EXPECT_EQ(result.answer_entities[0].topics_linked, 2);
  EXPECT_EQ(result.answer_entities[0].evidence.size(), 2u);

  // No gene shared: insufficient evidence, the partial evidence shown, nothing named.
  request.evidence.erase(request.evidence.begin(), request.evidence.begin() + 2);
  const ReasonResult none = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_TRUE(none.insufficient_evidence);
  EXPECT_TRUE(none.answers.empty());
  EXPECT_THAT(none.answer, HasSubstr("no genes in the evidence link to every entity"));
}

// "Which antidepressants are used to treat anxiety?": the drugs indicated for anxiety that the
// class the question names includes; the answer line shows the indication, not the membership.
TEST(ExtractiveOpenIntentTest, AClassNounKeepsTheClassMembersAmongTheAnswers) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "Which antidepressants are used to treat anxiety?";
  request.topic_entities = {{"DOID:2030", "anxiety disorder", "disease"},
                            {"MESH:D000928", "Antidepressive Agents", "pharmacologic_class"}};
  request.topic_mentions = {0, 1};
  request.evidence = {
      Typed("DB:mep", "Meprobamate", "compound", "drug indicated for condition", "DOID:2030",
            "anxiety disorder", "disease", 0.95, {"sider-indications"}),
      Typed("DB:cit", "Citalopram", "compound", "drug indicated for condition", "DOID:2030",
            "anxiety disorder", "disease", 0.9, {"sider-indications"}),
      Typed("MESH:D000928", "Antidepressive Agents", "pharmacologic_class",
            "pharmacologic class includes drug", "DB:cit", "Citalopram", "compound", 0.99,
            {"drugcentral-classes"}),
  };
  const ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_THAT(result.answers, ElementsAre("Citalopram")) << result.answer;
  EXPECT_THAT(result.answer, HasSubstr("Drugs the evidence links to treats, of the class the "
                                       "question names"));
  EXPECT_THAT(result.answer, HasSubstr("1. Citalopram (anxiety disorder <-[drug indicated for "
                                       "condition]- Citalopram"));
  // Without the class noun: Meprobamate, the better supported, first.
  request.question = "Which drugs are used to treat anxiety?";
  const ReasonResult drugs = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  ASSERT_FALSE(drugs.answers.empty());
  EXPECT_EQ(drugs.answers.front(), "Meprobamate");
}

// MSCA keeps two senses of "epilepsy" (the disease and the phenotype) and of "bipolar disorder":
// by name they are four question entities and no drug links to all four; by mention
// (topic_mentions, which the gateway sends) they are the two the question names.
TEST(ExtractiveOpenIntentTest, AllOfCountsTheSensesOfOneMentionAsOneQuestionEntity) {
  ReasonRequest request;
  request.task = Task::kOpen;
  request.question = "Which drugs are used to treat both epilepsy and bipolar disorder?";
  request.topic_entities = {{"DOID:1826", "epilepsy", "disease"},
                            {"HP:0001250", "Seizures", "phenotype"},
                            {"DOID:3312", "bipolar disorder", "disease"},
                            {"HP:0007302", "Bipolar affective disorder", "phenotype"}};
  request.evidence = {
      Typed("DB:cbz", "Carbamazepine", "compound", "drug treats disease", "DOID:1826", "epilepsy",
            "disease", 0.9, {"pharmacotherapydb"}),
      Typed("DB:cbz", "Carbamazepine", "compound", "drug palliates disease", "DOID:3312",
            "bipolar disorder", "disease", 0.9, {"pharmacotherapydb"}),
      Typed("DB:pht", "Phenytoin", "compound", "drug treats disease", "DOID:1826", "epilepsy",
            "disease", 0.95, {"pharmacotherapydb"}),
      Typed("DOID:1826", "epilepsy", "disease", "disease has phenotype", "HP:0001250", "Seizures",
            "phenotype", 0.5, {"hpo-annotations"}),
      Typed("DOID:3312", "bipolar disorder", "disease", "disease has phenotype", "HP:0007302",
            "Bipolar affective disorder", "phenotype", 0.5, {"hpo-annotations"}),
  };
  ReasonResult result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_TRUE(result.insufficient_evidence);

  request.topic_mentions = {0, 0, 1, 1};
  result = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_FALSE(result.insufficient_evidence);
  EXPECT_EQ(result.answers, (std::vector<std::string>{"Carbamazepine"}));
  ASSERT_EQ(result.answer_entities.size(), 1u);
  EXPECT_EQ(result.answer_entities[0].topics_linked, 2);
}

// A mention one sense of which is an option still asks about its other sense: "epilepsy" kept as
// the disease and as the phenotype "Seizures", with "Seizures" an option, is one question entity.
TEST(ExtractiveMultipleChoiceTest, AMentionWhoseOtherSenseIsAnOptionStaysAQuestionEntity) {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = "Which of these is a symptom of epilepsy?";
  request.options = {"Seizures", "Jaundice"};
  request.topic_entities = {{"DOID:1826", "epilepsy", "disease"},
                            {"HP:0001250", "Seizures", "phenotype"}};
  request.topic_mentions = {0, 0};
  request.evidence = {
      Typed("DOID:1826", "epilepsy", "disease", "disease presents symptom", "HP:0001250",
            "Seizures", "phenotype", 0.9, {"hsdn"}),
      Typed("DOID:9", "hepatitis", "disease", "disease presents symptom", "HP:1", "Jaundice",
            "phenotype", 0.9, {"hsdn"}),
  };
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_letter, "A");
  EXPECT_EQ(result.signals.topics_present, 1);
  EXPECT_EQ(result.signals.linked_options, 1);
}

TEST(ExtractiveOpenIntentTest, TheAnswerTypeFiltersAndAnEmptyIntentRestoresPaths) {
  ReasonRequest request = DiabetesDrugsRequest();
  // An override asking for genes through "gene" associations gets the genes, not the drugs.
  request.intent =
      common::IntentFromRequest({"gene"}, {"gene"}, common::IntentConstraint::kNone, "intent")
          .value();
  ReasonResult genes = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_EQ(genes.answers, (std::vector<std::string>{"TCF7L2", "KCNJ11"}));
  // A type the evidence lacks names nothing of another type.
  request.intent =
      common::IntentFromRequest({"treats"}, {"gene"}, common::IntentConstraint::kNone, "intent")
          .value();
  ReasonResult wrong_type = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_TRUE(wrong_type.answer_entities.empty());
  // Intent off: the paths/triples listing of before.
  request.intent = common::QuestionIntent();
  ReasonResult off = ReasonExtractively(request, Task::kOpen, ExtractiveOptions());
  EXPECT_TRUE(off.answer_entities.empty());
  EXPECT_THAT(off.answer,
              HasSubstr("1. type 2 diabetes mellitus -[disease associated with gene]-> TCF7L2"));
}

TEST(ExtractiveMultipleChoiceTest, TheAskedRelationOutweighsTheTopicsOtherFacts) {
  // Drug A is linked to the disease by a stronger but unasked relation; drug B by "treats".
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = "Which drug treats disease D?";
  request.options = {"Drug A", "Drug B"};
  request.topic_entities = {{"D", "disease D", "disease"}};
  request.evidence = {
      Typed("A", "Drug A", "compound", "drug contraindicated for disease", "D", "disease D",
            "disease", 0.9, {}),
      Typed("B", "Drug B", "compound", "drug treats disease", "D", "disease D", "disease", 0.5, {}),
  };
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_letter, "B");
}

// Issue 26: a KG-lookup multiple-choice question ("Which drug treats asthma?" with drug names) is
// answered by the asked relation: the option the evidence links to the question's entity through
// it wins, even against an option with more topic-neighbourhood support, and the answer says why.
ReasonRequest AsthmaChoiceRequest() {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = "Which drug treats asthma?";
  request.options = {"Metformin", "Salbutamol", "Propranolol"};
  // The gateway sends the options' entities as topics too.
  request.topic_entities = {{"DOID:2841", "asthma", "disease"},
                            {"DB:salbutamol", "Salbutamol", "compound"},
                            {"DB:metformin", "Metformin", "compound"},
                            {"DB:propranolol", "Propranolol", "compound"}};
  request.evidence = {
      Typed("DB:salbutamol", "Salbutamol", "compound", "drug treats disease", "DOID:2841", "asthma",
            "disease", 0.5, {"pharmacotherapydb", "drugcentral"}),
      // Propranolol is contraindicated in asthma: strongly linked, but not by the asked relation.
      Typed("DB:propranolol", "Propranolol", "compound", "drug contraindicated for disease",
            "DOID:2841", "asthma", "disease", 0.9, {"drugcentral"}),
      Typed("DB:propranolol", "Propranolol", "compound", "drug causes side effect", "SE:1",
            "Bronchospasm", "side_effect", 0.9, {"sider"}),
      Typed("DOID:2841", "asthma", "disease", "disease presents symptom", "SE:1", "Bronchospasm",
            "symptom", 0.9, {"hetionet"}),
      Typed("DB:metformin", "Metformin", "compound", "drug treats disease", "DOID:9352",
            "type 2 diabetes mellitus", "disease", 0.9, {"hetionet"}),
  };
  return request;
}

TEST(ExtractiveLookupChoiceTest, TheOptionLinkedThroughTheAskedRelationWinsAndSaysWhy) {
  const ReasonResult result =
      ReasonExtractively(AsthmaChoiceRequest(), Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.question_class, "kg_lookup");
  EXPECT_EQ(result.option_letter, "B");
  EXPECT_THAT(
      result.answer,
      HasSubstr("B) Salbutamol. Chosen as the only option the evidence links to the "
                "question's entity through treats; sources: drugcentral, pharmacotherapydb"));
  EXPECT_FALSE(result.low_confidence);
  EXPECT_EQ(result.evidence_used, (std::vector<int>{0}));
  const ExtractiveSignals& s = result.signals;
  EXPECT_EQ(s.question_class, "kg_lookup");
  EXPECT_EQ(s.candidate_index, 1);
  EXPECT_DOUBLE_EQ(s.intent_linked, 1.0);
  EXPECT_EQ(s.linked_options, 1);
  EXPECT_EQ(s.candidate_sources, 2);
}

TEST(ExtractiveLookupChoiceTest, EvidenceStrengthBreaksTiesAndEqualLinksChooseNothing) {
  ReasonRequest request = AsthmaChoiceRequest();
  // Metformin now treats asthma too, from one source: Salbutamol's two sources still win.
  request.evidence.push_back(Typed("DB:metformin", "Metformin", "compound", "drug treats disease",
                                   "DOID:2841", "asthma", "disease", 0.5, {"hetionet"}));
  ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_letter, "B");
  EXPECT_EQ(result.signals.linked_options, 2);
  // 0.5 * 3 = 1.50 against 0.5 * 2 = 1.00.
  EXPECT_THAT(result.answer, HasSubstr("with stronger evidence than option A (1.50 against 1.00)"));
  // Equal links: no option chosen, low confidence, no candidate for the calibration.
  request.evidence.back().sources = {"hetionet", "drugcentral"};
  result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_index, -1);
  EXPECT_TRUE(result.low_confidence);
  EXPECT_THAT(result.answer, HasSubstr("links options A, B to the question's entity through "
                                       "treats equally strongly"));
  EXPECT_EQ(result.signals.candidate_index, -1);
}

TEST(ExtractiveLookupChoiceTest, ALookupTheAskedRelationDoesNotDecideIsClinicalReasoning) {
  // Worded as a lookup, but no option reaches asthma through "treats": whatever the answer is, it
  // comes from topic connections, a guess the KG does not decide, so it is classed, calibrated
  // and abstained on as clinical reasoning.
  ReasonRequest request = AsthmaChoiceRequest();
  request.evidence.erase(request.evidence.begin());  // Salbutamol's treats triple
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.question_class, "clinical_reasoning");
  EXPECT_EQ(result.signals.question_class, "clinical_reasoning");
  EXPECT_DOUBLE_EQ(result.signals.intent_linked, 0.0);
  EXPECT_THAT(result.answer, Not(HasSubstr("Chosen as")));
}

TEST(ExtractiveLookupChoiceTest, AnExceptionQuestionTakesTheOnlyUnlinkedOption) {
  ReasonRequest request = AsthmaChoiceRequest();
  request.question = "Which drug does not treat asthma?";
  request.evidence.push_back(Typed("DB:metformin", "Metformin", "compound", "drug treats disease",
                                   "DOID:2841", "asthma", "disease", 0.5, {"hetionet"}));
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.option_letter, "C");
  EXPECT_TRUE(result.signals.exception_question);
  EXPECT_THAT(result.answer, HasSubstr("the only option the evidence does not link"));
}

TEST(ExtractiveLookupChoiceTest, VignettesAndQuestionsWithoutAnIntentKeepTheReachRule) {
  ReasonRequest request = AsthmaChoiceRequest();
  request.question =
      "A 9-year-old boy is brought to the emergency department with wheezing after playing "
      "outside. He has had similar episodes. His mother has hay fever. Examination shows "
      "expiratory wheezes. Which drug treats his condition?";
  ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  EXPECT_EQ(result.question_class, "clinical_reasoning");
  EXPECT_DOUBLE_EQ(result.signals.intent_linked, 0.0);
  EXPECT_THAT(result.answer, Not(HasSubstr("Chosen as")));
  // Long options make an exam question of it too.
  request = AsthmaChoiceRequest();
  request.options = {"Start a long-acting beta agonist and review in two weeks", "Salbutamol"};
  EXPECT_EQ(ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions()).question_class,
            "clinical_reasoning");
  // A claim is a claim.
  request = AsthmaChoiceRequest();
  request.options.clear();
  request.question = "Salbutamol treats asthma.";
  EXPECT_EQ(
      ReasonExtractively(request, Task::kFactVerification, ExtractiveOptions()).question_class,
      "claim");
}

TEST(ResolveTaskTest, AYesNoQuestionWithoutOptionsIsFactVerification) {
  ReasonRequest request;
  for (const char* question :
       {"Can atorvastatin cause rhabdomyolysis?", "Is tremor a symptom of Parkinson's disease?",
        "  does omeprazole inhibit the gastric proton pump (ATP4A)? ",
        "\"Is metformin a biguanide?\"", "Is tremor a symptom of Parkinson\u2019s disease?",
        "Should warfarin be avoided in pregnancy?"}) {
    request.question = question;
    EXPECT_TRUE(common::IsYesNoQuestion(question)) << question;
    EXPECT_EQ(ResolveTask(request), Task::kFactVerification) << question;
  }
  for (const char* question : {
           "What drugs treat type 2 diabetes?",
           "Is amlodipine a beta blocker or a calcium channel blocker?",
           "Metformin treats type 2 diabetes.",
           "Is metformin used for diabetes",
           "",
           "?",
           "Is?",
           "Issues of aspirin?",
           // Requests, existentials, wh-words and several questions are open questions.
           "Can you list drugs that treat asthma?",
           "Do you know which genes are linked to celiac disease?",
           "Are there any genes associated with autism?",
           "Is aspirin an NSAID? Which enzyme does it inhibit?",
           "A 60-year-old man has chest pain. Is aspirin indicated?",
           "Does metformin, which is a biguanide, cause lactic acidosis?",
           // Negative openers would flip the verdict's polarity: not read as yes/no.
           "Isn't aspirin an NSAID?",
           "Doesn't atorvastatin cause rhabdomyolysis?",
       }) {
    request.question = question;
    EXPECT_FALSE(common::IsYesNoQuestion(question)) << question;
    EXPECT_EQ(ResolveTask(request), Task::kOpen) << question;
  }
  // Past the word limit it is a vignette, not a yes/no question.
  std::string long_question = "Is";
  for (int i = 0; i < common::kMaxYesNoQuestionWords; ++i) long_question += " word";
  EXPECT_FALSE(common::IsYesNoQuestion(long_question + "?"));
  // Options make it multiple choice; a task given is kept.
  request.question = "Can atorvastatin cause rhabdomyolysis?";
  request.options = {"yes", "no"};
  EXPECT_EQ(ResolveTask(request), Task::kMultipleChoice);
  request.options.clear();
  request.task = Task::kOpen;
  EXPECT_EQ(ResolveTask(request), Task::kOpen);
}

TEST(ExtractiveFactTest, AYesNoQuestionIsAnsweredYesNoOrUnknown) {
  const EvidenceTriple causes = Triple("DB01076", "Atorvastatin", "drug causes side effect",
                                       "UMLS:C0035410", "Rhabdomyolysis", 1.0);
  EXPECT_THAT(VerifyOneTriple("Can atorvastatin cause rhabdomyolysis?", causes).answer,
              testing::StartsWith("SUPPORTED (yes):"));
  EXPECT_THAT(VerifyOneTriple("Can atorvastatin not cause rhabdomyolysis?", causes).answer,
              testing::StartsWith("REFUTED (no):"));
  const ReasonResult unknown = VerifyOneTriple("Can atorvastatin cause alopecia?", causes);
  EXPECT_EQ(unknown.fact_label, FactLabel::kUnknown);
  EXPECT_THAT(unknown.answer,
              testing::StartsWith("UNKNOWN: no retrieved evidence states or denies it;"));
  // A statement keeps the claim wording.
  EXPECT_THAT(VerifyOneTriple("Atorvastatin causes rhabdomyolysis.", causes).answer,
              testing::StartsWith("SUPPORTED:"));
}

}  // namespace
}  // namespace ibgraphrag::reasoner
