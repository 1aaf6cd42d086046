#include "services/reasoner/answer_parser.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::reasoner {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kOptions = {"Metformin", "Aspirin", "Levothyroxine", "Omeprazole"};

struct ChoiceCase {
  std::string output;
  int expected_index;
};

class MultipleChoiceFormatTest : public ::testing::TestWithParam<ChoiceCase> {};

TEST_P(MultipleChoiceFormatTest, ReadsTheChosenOption) {
  const ParsedAnswer parsed = ParseMultipleChoice(GetParam().output, kOptions);
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.option_index, GetParam().expected_index);
  EXPECT_EQ(parsed.answer, kOptions[GetParam().expected_index]);
}

INSTANTIATE_TEST_SUITE_P(
    AnswerFormats, MultipleChoiceFormatTest,
    ::testing::Values(ChoiceCase{"B", 1}, ChoiceCase{"(B)", 1}, ChoiceCase{"Answer: B.", 1},
                      ChoiceCase{"ans: B) Aspirin", 1}, ChoiceCase{"The answer is B", 1},
                      ChoiceCase{"Aspirin", 1}, ChoiceCase{"{\"answer\": \"B\"}", 1},
                      ChoiceCase{"```json\n{\"answer\": \"C\"}\n```", 2},
                      ChoiceCase{"ans: D\nwhy: acid suppression", 3},
                      ChoiceCase{"**Answer:** A", 0}, ChoiceCase{"ans: b)", 1},
                      ChoiceCase{"Option C", 2}, ChoiceCase{"ans: aspirin", 1},
                      ChoiceCase{"The correct answer is (D) because it suppresses acid.", 3},
                      ChoiceCase{"<think>maybe A? no.</think>\nans: B", 1},
                      ChoiceCase{"Let me think.\nThe answer is Levothyroxine, given TSH.", 2},
                      ChoiceCase{"ans: [A]", 0}));

// Every ans: line is read (IBGraphRAG's prompt asks for a list): several naming different
// options are not guessed between.
TEST(ParseMultipleChoiceTest, FlagsAnsLinesNamingDifferentOptionsAsUnparseable) {
  const ParsedAnswer parsed = ParseMultipleChoice("ans: C\nans: A\nans: B", kOptions);
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
  EXPECT_EQ(parsed.option_index, -1);
  EXPECT_THAT(parsed.error, HasSubstr("several options (C, A, B)"));
}

TEST(ParseMultipleChoiceTest, AcceptsAnsLinesThatAgree) {
  const ParsedAnswer parsed =
      ParseMultipleChoice("ans: B\nans: B) Aspirin\nans: aspirin", kOptions);
  ASSERT_EQ(parsed.status, ParseStatus::kOk);
  EXPECT_EQ(parsed.option_index, 1);
  EXPECT_EQ(parsed.answers, std::vector<std::string>{"Aspirin"});
}

TEST(ParseMultipleChoiceTest, ReadsThePaperPromptsReasoningThenInlineAnswers) {
  const ParsedAnswer parsed = ParseMultipleChoice(
      "To answer the question, we have to find a drug for MI. From the triples we can see that "
      "(Aspirin, drug treats disease, MI). Therefore, the answers are: ans: B) Aspirin",
      kOptions);
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.option_index, 1);
}

TEST(ParseMultipleChoiceTest, KeepsTheReasoningBeforeTheAnswerAsExplanation) {
  const ParsedAnswer parsed = ParseMultipleChoice(
      "To answer the question, we have to find a drug for MI.\nFrom the triples we can see "
      "that aspirin treats MI. Therefore, the answers are:\nans: B) Aspirin",
      kOptions);
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.explanation,
            "To answer the question, we have to find a drug for MI.\nFrom the triples we can see "
            "that aspirin treats MI. Therefore, the answers are:");
}

TEST(ParseMultipleChoiceTest, DoesNotReadAnsInsideAWord) {
  const ParsedAnswer parsed = ParseMultipleChoice("In humans: aspirin.\nans: A", kOptions);
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.option_index, 0);
}

TEST(ParseMultipleChoiceTest, KeepsTheWhyLineAsExplanation) {
  const ParsedAnswer parsed =
      ParseMultipleChoice("ans: B) Aspirin\nwhy: (Aspirin, treats, MI)", kOptions);
  ASSERT_EQ(parsed.status, ParseStatus::kOk);
  EXPECT_EQ(parsed.explanation, "(Aspirin, treats, MI)");
}

TEST(ParseMultipleChoiceTest, FlagsFreeTextWithoutAnAnswerAsUnparseable) {
  const ParsedAnswer parsed =
      ParseMultipleChoice("I am not able to answer medical questions.", kOptions);
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
  EXPECT_EQ(parsed.option_index, -1);
  EXPECT_FALSE(parsed.error.empty());
}

TEST(ParseMultipleChoiceTest, DoesNotGuessWhenLetterAndTextDisagree) {
  const ParsedAnswer parsed = ParseMultipleChoice("ans: B) Metformin", kOptions);
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
  EXPECT_THAT(parsed.error, ::testing::HasSubstr("disagree"));
}

TEST(ParseMultipleChoiceTest, RejectsALetterBeyondTheOptions) {
  const ParsedAnswer parsed = ParseMultipleChoice("ans: F", kOptions);
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
  EXPECT_THAT(parsed.error, ::testing::HasSubstr("only 4 options"));
}

TEST(ParseMultipleChoiceTest, DoesNotGuessWhenSeveralOptionsAreNamed) {
  const ParsedAnswer parsed = ParseMultipleChoice("ans: Aspirin or Metformin", kOptions);
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
}

TEST(ParseMultipleChoiceTest, ReadsTheArticleAAsAWordNotAnOption) {
  const std::vector<std::string> options = {"Insulin", "Beta blocker"};
  const ParsedAnswer parsed = ParseMultipleChoice("ans: A beta blocker", options);
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.option_index, 1);
}

TEST(ParseMultipleChoiceTest, PrefersTheLongerOfNestedOptionNames) {
  const std::vector<std::string> options = {"Diabetes", "Diabetes insipidus"};
  const ParsedAnswer parsed = ParseMultipleChoice("The answer is diabetes insipidus.", options);
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.option_index, 1);
}

TEST(ParseMultipleChoiceTest, BareFirstLineMustBeAnOptionNotMentionOne) {
  const ParsedAnswer parsed =
      ParseMultipleChoice("Aspirin is often discussed here but I will not choose.", kOptions);
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
}

TEST(ParseMultipleChoiceTest, FlagsEmptyOutput) {
  EXPECT_EQ(ParseMultipleChoice("  \n", kOptions).status, ParseStatus::kUnparseable);
}

struct LabelCase {
  std::string output;
  FactLabel expected;
};

class FactLabelFormatTest : public ::testing::TestWithParam<LabelCase> {};

TEST_P(FactLabelFormatTest, ReadsTheLabel) {
  const ParsedAnswer parsed = ParseFactLabel(GetParam().output);
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.fact_label, GetParam().expected);
  EXPECT_EQ(parsed.answer, FactLabelName(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    LabelFormats, FactLabelFormatTest,
    ::testing::Values(LabelCase{"ans: SUPPORTED", FactLabel::kSupported},
                      LabelCase{"ans: Refuted", FactLabel::kRefuted},
                      LabelCase{"True", FactLabel::kSupported},
                      LabelCase{"False.", FactLabel::kRefuted},
                      LabelCase{"ans: yes", FactLabel::kSupported},
                      LabelCase{"ans: no", FactLabel::kRefuted},
                      LabelCase{"Answer: Supported", FactLabel::kSupported},
                      LabelCase{"ans: not supported by the evidence", FactLabel::kRefuted},
                      LabelCase{"The claim is supported by (X, treats, Y).", FactLabel::kSupported},
                      LabelCase{"{\"answer\": false}", FactLabel::kRefuted},
                      LabelCase{"{\"label\": \"True\"}", FactLabel::kSupported},
                      LabelCase{"ans: unknown", FactLabel::kUnknown},
                      LabelCase{"ans: maybe", FactLabel::kUnknown},
                      LabelCase{"ans: REFUTED\nans: refutes", FactLabel::kRefuted}));

TEST(ParseFactLabelTest, FlagsAnsLinesThatDisagreeAsUnparseable) {
  const ParsedAnswer parsed = ParseFactLabel("ans: REFUTED\nans: SUPPORTED");
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
  EXPECT_THAT(parsed.error, HasSubstr("disagree (REFUTED, SUPPORTED)"));
}

TEST(ParseFactLabelTest, FlagsProseWithoutALabelAsUnparseable) {
  const ParsedAnswer parsed = ParseFactLabel("Metronidazole is an antibiotic.");
  EXPECT_EQ(parsed.status, ParseStatus::kUnparseable);
  EXPECT_EQ(parsed.fact_label, FactLabel::kUnspecified);
}

TEST(ParseOpenAnswerTest, ReadsEveryAnsLineAsAMultiAnswerList) {
  const ParsedAnswer parsed =
      ParseOpenAnswer("ans: Photophobia and nausea\nans: Aura\nwhy: (Migraine, presents, ...)");
  ASSERT_EQ(parsed.status, ParseStatus::kOk);
  EXPECT_EQ(parsed.answers, (std::vector<std::string>{"Photophobia and nausea", "Aura"}));
  EXPECT_EQ(parsed.answer, "Photophobia and nausea; Aura");
  EXPECT_EQ(parsed.explanation, "(Migraine, presents, ...)");
}

TEST(ParseOpenAnswerTest, SplitsInlineAnsItemsAndDropsDuplicates) {
  const ParsedAnswer parsed = ParseOpenAnswer(
      "From the triples we can see that migraine presents both.\n"
      "Therefore, the answers are: ans: Photophobia ans: Nausea\n- ans: **photophobia**");
  ASSERT_EQ(parsed.status, ParseStatus::kOk) << parsed.error;
  EXPECT_EQ(parsed.answers, (std::vector<std::string>{"Photophobia", "Nausea"}));
  EXPECT_EQ(parsed.explanation, "From the triples we can see that migraine presents both.");
}

TEST(ParseOpenAnswerTest, FlagsOutputWithoutAnsLine) {
  EXPECT_EQ(ParseOpenAnswer("Photophobia is common.").status, ParseStatus::kUnparseable);
}

TEST(ParseAnswerTest, DispatchesOnTheTask) {
  EXPECT_EQ(ParseAnswer(Task::kMultipleChoice, "ans: C", kOptions).option_index, 2);
  EXPECT_EQ(ParseAnswer(Task::kFactVerification, "ans: False", {}).fact_label, FactLabel::kRefuted);
  EXPECT_EQ(ParseAnswer(Task::kOpen, "ans: x", {}).answer, "x");
}

}  // namespace
}  // namespace ibgraphrag::reasoner
