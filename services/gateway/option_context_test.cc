#include "services/gateway/option_context.h"

#include <string>
#include <vector>

#include "common/topic_rule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ::ibgraphrag::v1;

const char kQuestion[] = "Which genes are associated with both psoriasis and Crohn's disease?";
const std::vector<std::string> kOptions = {"IL23R", "TTN", "BRCA1"};

pb::AlignedEntity Entity(uint32_t id, const std::string& name, const std::string& type,
                         const std::string& mention, float link, bool dictionary,
                         float consistency) {
  const std::string text = common::AlignmentText(kQuestion, kOptions);
  pb::AlignedEntity e;
  e.mutable_entity()->set_id(id);
  e.mutable_entity()->set_name(name);
  e.mutable_entity()->set_type(type);
  // The mention's last occurrence: option lines come after the question.
  const size_t at = text.rfind(mention);
  e.mutable_mention()->set_begin(static_cast<uint32_t>(at));
  e.mutable_mention()->set_end(static_cast<uint32_t>(at + mention.size()));
  e.mutable_mention()->set_text(mention);
  e.set_link_similarity(link);
  e.set_dictionary_match(dictionary);
  e.set_consistency(consistency);
  return e;
}

// What the alignment service answered for the issue's example (ibgr align on the embedded KG):
// TTN kept as Transient Tachypnea of the Newborn (an abbreviation), the gene TTN rejected as a
// look-alike, BRCA1 rejected below tau.
pb::AlignResponse IssueExample() {
  pb::AlignResponse aligned;
  *aligned.add_kept() = Entity(1, "Crohn's disease", "disease", "Crohn's disease", 1, true, 0.71F);
  *aligned.add_kept() = Entity(2, "psoriasis", "disease", "psoriasis", 1, true, 0.70F);
  *aligned.add_kept() =
      Entity(3, "Transient Tachypnea of the Newborn", "symptom", "TTN", 1, true, 0.70F);
  *aligned.add_kept() = Entity(4, "IL23R", "gene", "IL23R", 1, true, 0.64F);
  *aligned.add_rejected() = Entity(5, "BRCA1", "gene", "BRCA1", 1, true, 0.54F);
  *aligned.add_rejected() = Entity(6, "TTN", "gene", "TTN", 0.994F, false, 0.18F);
  *aligned.add_rejected() = Entity(7, "IL21R", "gene", "IL23R", 0.41F, false, 0.17F);
  return aligned;
}

std::vector<std::string> KeptNames(const pb::AlignResponse& aligned) {
  std::vector<std::string> names;
  for (const pb::AlignedEntity& e : aligned.kept()) names.push_back(e.entity().name());
  return names;
}

TEST(OptionSpansTest, OneLinePerOptionAfterTheQuestion) {
  const std::vector<OptionSpan> spans = OptionSpans(kQuestion, kOptions);
  const std::string text = common::AlignmentText(kQuestion, kOptions);
  ASSERT_EQ(spans.size(), 3u);
  for (size_t o = 0; o < spans.size(); ++o) {
    EXPECT_EQ(text.substr(spans[o].begin, spans[o].end - spans[o].begin), kOptions[o]);
  }
  EXPECT_TRUE(OptionSpans(kQuestion, {}).empty());
  // A text too long to carry the options is the question alone: no option lines.
  EXPECT_TRUE(OptionSpans(kQuestion, {std::string(common::kMaxAlignmentTextBytes, 'x')}).empty());
}

TEST(ReadOptionsInContextTest, AGeneQuestionKeepsTheGenesTheOptionsName) {
  pb::AlignResponse aligned = IssueExample();
  const std::vector<OptionSpan> spans = OptionSpans(kQuestion, kOptions);
  const std::vector<std::string> types = ExpectedOptionTypes(spans, {"gene"}, aligned);
  EXPECT_EQ(types, std::vector<std::string>{"gene"});
  EXPECT_EQ(ReadOptionsInContext(spans, types, &aligned), 2);  // TTN and BRCA1
  // Promoted entities follow the kept ones, in option order.
  EXPECT_THAT(KeptNames(aligned),
              ::testing::ElementsAre("Crohn's disease", "psoriasis", "IL23R", "TTN", "BRCA1"));
  for (const pb::AlignedEntity& e : aligned.kept()) {
    EXPECT_EQ(e.chosen_by_context(), e.entity().name() == "BRCA1" || e.entity().name() == "TTN");
  }
  // The abbreviation sense is rejected, not lost; the look-alike IL21R stays rejected.
  std::vector<std::string> rejected;
  for (const pb::AlignedEntity& e : aligned.rejected()) rejected.push_back(e.entity().name());
  EXPECT_THAT(rejected,
              ::testing::UnorderedElementsAre("IL21R", "Transient Tachypnea of the Newborn"));
}

TEST(ReadOptionsInContextTest, WithoutAnAnswerTypeTheOtherOptionsTypesDecide) {
  pb::AlignResponse aligned = IssueExample();
  const std::vector<OptionSpan> spans = OptionSpans(kQuestion, kOptions);
  // IL23R, BRCA1 and TTN all have an exact gene candidate: gene, 3 of 3 options.
  EXPECT_EQ(ExpectedOptionTypes(spans, {}, aligned), std::vector<std::string>{"gene"});
  // One option with a gene, one with a symptom: no majority, nothing changes.
  pb::AlignResponse split;
  *split.add_kept() = Entity(4, "IL23R", "gene", "IL23R", 1, true, 0.64F);
  *split.add_kept() =
      Entity(3, "Transient Tachypnea of the Newborn", "symptom", "TTN", 1, true, 0.70F);
  EXPECT_TRUE(ExpectedOptionTypes(spans, {}, split).empty());
  EXPECT_EQ(ReadOptionsInContext(spans, {}, &split), 0);
}

TEST(ReadOptionsInContextTest, QuestionEntitiesAndOptionsWithoutAnExactCandidateStay) {
  pb::AlignResponse aligned = IssueExample();
  const std::vector<OptionSpan> spans = OptionSpans(kQuestion, kOptions);
  // Asking for drugs: no option has an exact drug candidate, so nothing moves; the question's
  // diseases are never touched.
  EXPECT_EQ(ReadOptionsInContext(spans, {"compound"}, &aligned), 0);
  EXPECT_EQ(KeptNames(aligned), KeptNames(IssueExample()));
  // Asking for diseases: only the options' kept non-disease entities could move, and none of the
  // options has an exact disease candidate, so again nothing changes.
  EXPECT_EQ(ReadOptionsInContext(spans, {"disease"}, &aligned), 0);
}

}  // namespace
}  // namespace ibgraphrag::gateway
