#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/eval/gold_spans.h"
#include "services/alignment/eval/msca_replay.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

std::vector<std::string> Texts(const std::vector<GoldSpan>& spans) {
  std::vector<std::string> out;
  for (const GoldSpan& s : spans) out.push_back(s.text);
  return out;
}

TEST(ParseBiomixClaimTest, EveryTemplate) {
  struct Case {
    const char* claim;
    const char* shape;
    std::vector<std::string> gold;
  };
  const std::vector<Case> cases = {
      {"Juvenile polyposis syndrome associates Gene SMAD4",
       "associates_gene",
       {"Juvenile polyposis syndrome", "SMAD4"}},
      {"KLEEFSTRA SYNDROME 1 is not associated with Gene EHMT1",
       "not_associated_gene",
       {"KLEEFSTRA SYNDROME 1", "EHMT1"}},
      {"metronidazole treats crohn's disease", "treats", {"metronidazole", "crohn's disease"}},
      {"cystic fibrosis is a respiratory system disorder",
       "is_a",
       {"cystic fibrosis", "respiratory system disorder"}},
      {"enhanced S-cone syndrome is not a vitreoretinal degeneration",
       "is_not_a",
       {"enhanced S-cone syndrome", "vitreoretinal degeneration"}},
  };
  for (const Case& c : cases) {
    std::optional<ClaimSpans> spans = ParseBiomixClaim(c.claim);
    ASSERT_TRUE(spans.has_value()) << c.claim;
    EXPECT_EQ(spans->shape, c.shape) << c.claim;
    EXPECT_EQ(Texts(spans->gold), c.gold) << c.claim;
    EXPECT_TRUE(spans->ignored.empty()) << c.claim;
    // Offsets point at the text.
    for (const GoldSpan& g : spans->gold) {
      EXPECT_EQ(std::string(c.claim).substr(g.begin, g.end - g.begin), g.text);
    }
  }
}

TEST(ParseBiomixClaimTest, IdentifierSideIsIgnoredNotGold) {
  std::optional<ClaimSpans> spans =
      ParseBiomixClaim("Disease ontology identifier for Marfan syndrome is DOID:0060055");
  ASSERT_TRUE(spans.has_value());
  EXPECT_EQ(spans->shape, "doid");
  EXPECT_THAT(Texts(spans->gold), ElementsAre("Marfan syndrome"));
  EXPECT_THAT(Texts(spans->ignored), ElementsAre("DOID:0060055"));
  EXPECT_EQ(spans->gold[0].begin, 32u);
}

TEST(ParseBiomixClaimTest, OtherShapesAreNotParsed) {
  EXPECT_FALSE(ParseBiomixClaim("Variant rs2476601 associates Rheumatoid Arthritis").has_value());
  EXPECT_FALSE(ParseBiomixClaim(" treats melanoma").has_value());
  EXPECT_FALSE(ParseBiomixClaim("").has_value());
}

TEST(LocateTopicTest, FindsTheTopicAsWholeWords) {
  std::optional<GoldSpan> s =
      LocateTopic("What medications treat Parkinson's disease?", "Parkinson's disease");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->text, "Parkinson's disease");
  EXPECT_EQ(s->begin, 23u);
  // Case-insensitive, and not inside a longer word ("ins" of "proteins").
  s = LocateTopic("Which proteins does the INS gene encode?", "INS");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->begin, 24u);
  EXPECT_EQ(LocateTopic("Which genes cause asthma?", "GENE"), std::nullopt);
}

TEST(LocateTopicTest, ShorterFormsAndMisses) {
  EXPECT_THAT(LocateTopic("Which medications are used to treat type 2 diabetes?",
                          "type 2 diabetes mellitus"),
              ::testing::Optional(Field(&GoldSpan::text, "type 2 diabetes")));
  EXPECT_THAT(LocateTopic("Which medications belong to the ACE inhibitor class?", "ACE inhibitors"),
              ::testing::Optional(Field(&GoldSpan::text, "ACE inhibitor")));
  // A single remaining word is too weak a match ("systemic" of "systemic scleroderma").
  EXPECT_EQ(LocateTopic("Which organs are involved in systemic sclerosis?", "systemic scleroderma"),
            std::nullopt);
  EXPECT_EQ(LocateTopic("What is prescribed for high blood pressure?", "hypertension"),
            std::nullopt);
}

TEST(MakePairQuestionTest, SpansPointAtTheNames) {
  for (int t = 0; t < kPairTemplateCount; ++t) {
    const PairQuestion q = MakePairQuestion("Marfan syndrome", "asthma", t);
    ASSERT_EQ(q.gold.size(), 2u);
    EXPECT_EQ(q.question.substr(q.gold[0].begin, q.gold[0].end - q.gold[0].begin),
              "Marfan syndrome");
    EXPECT_EQ(q.question.substr(q.gold[1].begin, q.gold[1].end - q.gold[1].begin), "asthma");
  }
  EXPECT_EQ(MakePairQuestion("gout", "asthma", 0).question,
            "Can a patient have both gout and asthma?");
}

// A hand-built question: "asthma" (gold, span [0, 6)) with a named candidate and a look-alike,
// and "cough" (not gold) with one embedding-only candidate.
QuestionRecord HandQuestion() {
  QuestionRecord q;
  q.question = "asthma cough";
  q.gold = {{0, 6, "asthma"}};
  q.gold_name_keys = {"asthma"};
  q.gold_exhaustive = true;
  q.null_mean = 0.1;
  q.null_sd = 0.05;
  q.mentions = {{0, 6, "asthma", true}, {7, 12, "cough", true}};
  auto candidate = [](uint32_t entry, const char* name, int mention, float raw_s, float raw_r) {
    CandidateRecord c;
    c.entry = entry;
    c.name = name;
    c.name_key = NormalizeForMatch(name);
    c.mention = mention;
    c.raw_question_similarity = raw_s;
    c.raw_relatedness = raw_r;
    return c;
  };
  CandidateRecord named = candidate(1, "Asthma", 0, 0.2f, 0.1f);  // S z = 2
  named.dictionary_match = true;
  CandidateRecord lookalike = candidate(2, "Cardiac asthma", 0, 0.35f, 0.1f);  // S z = 5
  lookalike.lookalike = true;
  CandidateRecord other = candidate(3, "Chronic cough", 1, 0.35f, 0.4f);
  q.candidates = {named, lookalike, other};
  return q;
}

TEST(ReplayTest, MatchesHandComputation) {
  const QuestionRecord q = HandQuestion();
  ScoreCalibration cal;
  cal.relatedness_null_mean = 0.0f;
  cal.relatedness_null_sd = 0.05f;
  MscaPoint p;  // qz 5, rz 3, evidence 0.9, lambda 0.4, tau 0.6
  const std::vector<ReplayedScore> s = Replay(q, cal, p);
  ASSERT_EQ(s.size(), 3u);
  // Named: z 2 / 5 = 0.4, raised to the evidence 0.9; R = (0.1 / 0.05) / 3 = 0.667.
  EXPECT_FLOAT_EQ(s[0].s, 0.9f);
  EXPECT_NEAR(s[0].r, 2.0 / 3, 1e-6);
  EXPECT_NEAR(s[0].c, 0.6 * 0.9 + 0.4 * 2.0 / 3, 1e-6);
  EXPECT_TRUE(s[0].kept);
  // Look-alike: z 5 / 5 = 1, scaled by 1 - 0.9.
  EXPECT_NEAR(s[1].s, 0.1, 1e-6);
  EXPECT_FALSE(s[1].kept);
  // Embedding-only, R clamped at 1: C = 0.6 + 0.4 = 1.
  EXPECT_NEAR(s[2].c, 1.0, 1e-6);
  EXPECT_TRUE(s[2].kept);

  // A lone candidate has R = 0.
  QuestionRecord alone = q;
  alone.candidates.resize(1);
  EXPECT_EQ(Replay(alone, cal, p)[0].r, 0.0f);
}

TEST(MentionMetricsTest, RecallAndBothPrecisions) {
  const QuestionRecord q = HandQuestion();
  // Keep all three: the gold span is kept; of the two kept on it only the named one is credited;
  // "Chronic cough" is outside the (exhaustive) gold.
  std::vector<ReplayedScore> all(3);
  for (ReplayedScore& s : all) s.kept = true;
  all[0].c = 0.5f;
  all[1].c = 0.9f;
  MentionMetrics m;
  m.Add(q, all);
  EXPECT_EQ(m.gold, 1);
  EXPECT_EQ(m.gold_with_candidate, 1);
  EXPECT_EQ(m.gold_kept, 1);
  EXPECT_EQ(m.kept, 3);
  EXPECT_EQ(m.kept_on_gold, 2);
  EXPECT_EQ(m.kept_credited, 1);
  EXPECT_EQ(m.kept_judged, 3);
  EXPECT_DOUBLE_EQ(m.OverlapPrecision(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(m.CreditedPrecision(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.NameRecall(), 1.0);
  EXPECT_DOUBLE_EQ(m.EmbeddingKeptShare(), 1.0);

  // Keep only the look-alike: the span counts as kept (by its mention) and the look-alike is
  // credited as the span's best kept entity, since nothing named was kept for it.
  std::vector<ReplayedScore> one(3);
  one[1].kept = true;
  MentionMetrics m1;
  m1.Add(q, one);
  EXPECT_EQ(m1.gold_kept, 1);
  EXPECT_EQ(m1.kept_credited, 1);
  EXPECT_EQ(m1.gold_names_kept, 0);

  // A span whose mention proposed a candidate that another mention linked better has a
  // proposed candidate but no attributed one.
  QuestionRecord elsewhere = q;
  elsewhere.candidates[0].mention = 1;
  elsewhere.candidates[1].mention = 1;
  elsewhere.candidates[0].proposed_by = {0, 1};
  MentionMetrics m3;
  m3.Add(elsewhere, all);
  EXPECT_EQ(m3.gold_proposed, 1);
  EXPECT_EQ(m3.gold_with_candidate, 0);
  EXPECT_EQ(m3.gold_kept, 0);

  // Not exhaustive gold: "Chronic cough" is not judged.
  QuestionRecord partial = q;
  partial.gold_exhaustive = false;
  MentionMetrics m2;
  m2.Add(partial, all);
  EXPECT_EQ(m2.kept_judged, 2);
  EXPECT_DOUBLE_EQ(m2.CreditedPrecision(), 0.5);
  EXPECT_EQ(m2.questions_all_gold_kept, 1);
}

}  // namespace
}  // namespace ibgraphrag::alignment::eval
