#include "services/retriever/qa_training_data.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "common/topic_rule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/bundle.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"
#include "services/kgstore/kg_store_test_util.h"

namespace ibgraphrag::retriever {
namespace {

namespace kt = ::ibgraphrag::kgstore::testing;
using eval::QaItem;
using eval::QaSplit;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The small hand-made KG of kgstore's tests (type 2 diabetes, metformin, PPARG, ...) and a real
// Aligner over an alignment bundle of its names, as the gateway's test suite builds them.
class QaTrainingDataTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new kt::ScratchDir("qa-training-data");
    store_ = kt::WriteAndOpen(kt::SmallKg(), dir_->path()).release();
    auto encoder = alignment::HashNgramEncoder::Create(alignment::HashNgramEncoderOptions());
    ASSERT_OK(encoder);
    alignment::BundleBuildOptions build;
    build.base_path = dir_->path();
    auto built = alignment::BuildAlignmentBundle(alignment::LexiconFromKg(kt::SmallKg(), "test"),
                                                 **encoder, build);
    ASSERT_OK(built);
    auto bundle = alignment::LoadAlignmentBundle(built->dir);
    ASSERT_OK(bundle);
    // The service's defaults with tau 0 and one candidate per mention: each mention's best
    // entity is kept (this test is about the roles of the kept entities, not MSCA calibration on
    // a nine-entity lexicon).
    alignment::AlignerOptions aligner_options;
    aligner_options.defaults.tau = 0.0f;
    aligner_options.defaults.top_k = 1;
    auto aligner = alignment::Aligner::Create(
        *std::move(bundle), std::shared_ptr<const alignment::TextEncoder>(std::move(*encoder)),
        nullptr, aligner_options);
    ASSERT_OK(aligner);
    align_ = new AlignTextFn(AlignWithAligner(std::move(*aligner)));
  }
  static void TearDownTestSuite() {
    delete align_;
    delete store_;
    delete dir_;
  }

  static absl::StatusOr<QaExampleOutcome> Example(const QaItem& item) {
    return ExampleFromQaItem(*store_, *align_, item, "tiny", QaExampleOptions());
  }

  static QaItem Mcq(std::string question, std::vector<std::string> options, int gold) {
    QaItem item;
    item.question = std::move(question);
    item.options = std::move(options);
    item.task = v1::TASK_MULTIPLE_CHOICE;
    item.gold_index = gold;
    item.gold_text = item.options[gold];
    item.gold_is_entity = true;
    return item;
  }

  static QaItem Claim(std::string text, bool label) {
    QaItem item;
    item.question = std::move(text);
    item.task = v1::TASK_FACT_VERIFICATION;
    item.gold_label = label ? v1::FACT_LABEL_SUPPORTED : v1::FACT_LABEL_REFUTED;
    item.gold_text = label ? "true" : "false";
    return item;
  }

  static kt::ScratchDir* dir_;
  static kgstore::KgStore* store_;
  static AlignTextFn* align_;
};

kt::ScratchDir* QaTrainingDataTest::dir_ = nullptr;
kgstore::KgStore* QaTrainingDataTest::store_ = nullptr;
AlignTextFn* QaTrainingDataTest::align_ = nullptr;

TEST_F(QaTrainingDataTest, MultipleChoiceAnswerIsTheGoldOptionsEntity) {
  const QaItem item =
      Mcq("Which drug treats type 2 diabetes mellitus?", {"pancreas", "Metformin", "obesity"}, 1);
  absl::StatusOr<QaExampleOutcome> out = Example(item);
  ASSERT_OK(out);
  ASSERT_EQ(out->skip_reason, "");
  const GeneratedQuestion& q = out->question;
  EXPECT_EQ(q.source, "qa/tiny");
  EXPECT_EQ(q.text, item.question);
  EXPECT_EQ(q.options, item.options);
  EXPECT_EQ(q.answer_text, "Metformin");
  EXPECT_THAT(q.answers, ElementsAre(kt::kMetformin));
  EXPECT_THAT(q.question_entities, ElementsAre(kt::kDiabetes));
  // Topics are the gateway's: every kept entity of question + options, in kept order.
  absl::StatusOr<std::vector<AlignedEntity>> kept =
      (*align_)(common::AlignmentText(item.question, item.options));
  ASSERT_OK(kept);
  std::vector<uint32_t> ids;
  for (const AlignedEntity& e : *kept) ids.push_back(e.kg_id);
  EXPECT_EQ(q.topics, common::TopicEntityIds(ids));
  EXPECT_THAT(q.topics, Contains(kt::kPancreas));
  // Evidence: the one-edge shortest path metformin -treats-> diabetes.
  EXPECT_THAT(q.evidence,
              ElementsAre(std::array<uint32_t, 3>{kt::kMetformin, kt::kTreats, kt::kDiabetes}));
}

TEST_F(QaTrainingDataTest, TrueClaimAnswersWithItsLastEntity) {
  absl::StatusOr<QaExampleOutcome> out =
      Example(Claim("Pioglitazone treats type 2 diabetes mellitus", true));
  ASSERT_OK(out);
  ASSERT_EQ(out->skip_reason, "");
  EXPECT_THAT(out->question.answers, ElementsAre(kt::kDiabetes));
  EXPECT_EQ(out->question.answer_text, "type 2 diabetes mellitus");
  EXPECT_THAT(out->question.question_entities, ElementsAre(kt::kPioglitazone));
  EXPECT_TRUE(out->question.options.empty());
}

TEST_F(QaTrainingDataTest, SkipsAreNamed) {
  auto reason = [](const QaItem& item) {
    absl::StatusOr<QaExampleOutcome> out = Example(item);
    EXPECT_OK(out);
    return out.ok() ? out->skip_reason : "error";
  };
  EXPECT_EQ(reason(Claim("Pioglitazone treats type 2 diabetes mellitus", false)), "false_claim");
  // The gold option names no entity.
  EXPECT_EQ(
      reason(Mcq("Which drug treats type 2 diabetes mellitus?", {"none of these", "Metformin"}, 0)),
      "answer_unaligned");
  // Nothing in the question part besides the options.
  EXPECT_EQ(reason(Mcq("Which one is right?", {"Metformin", "pancreas"}, 0)), "no_question_entity");
  // "isolated disease" has no edges: no path to the answer.
  EXPECT_EQ(reason(Mcq("Which drug treats isolated disease?", {"Metformin", "pancreas"}, 0)),
            "no_path");
  QaItem yes_no = Mcq("Does metformin treat type 2 diabetes mellitus?", {"yes", "no", "maybe"}, 0);
  yes_no.gold_is_entity = false;
  EXPECT_EQ(reason(yes_no), "no_entity_answer");
}

TEST_F(QaTrainingDataTest, BundleOfAnotherKgIsRefused) {
  const AlignTextFn wrong = [](absl::string_view) -> absl::StatusOr<std::vector<AlignedEntity>> {
    return std::vector<AlignedEntity>{{kt::kMetformin, "DOID:9352", "Metformin", 0, 5}};
  };
  absl::StatusOr<QaExampleOutcome> out =
      ExampleFromQaItem(*store_, wrong, Claim("x treats y", true), "tiny", QaExampleOptions());
  ASSERT_THAT(out,
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("rebuild the bundle")));
}

TEST_F(QaTrainingDataTest, BuildsSetsFromFilesWithSplitsAndSkipCounts) {
  const std::string qa = dir_->path() + "/qa";
  std::filesystem::create_directories(qa);
  std::ofstream(qa + "/mmlu-tiny-test.csv")
      << "Which drug treats type 2 diabetes mellitus?,pancreas,Metformin,obesity,polyuria,B\n"
         "Which gene does pioglitazone bind?,INS,PPARG,pancreas,obesity,B\n"
         "Which one is right?,Metformin,INS,pancreas,obesity,A\n";
  std::ofstream(qa + "/claims-true-false.csv")
      << ",text,label\n0,Pioglitazone treats type 2 diabetes mellitus,True\n"
         "1,Metformin treats obesity,False\n";
  QaExampleOptions options;
  options.qa_dir = qa;
  options.split_seed = 3;
  absl::StatusOr<QuestionSet> set = BuildQaExamples(*store_, *align_, options);
  ASSERT_OK(set);
  ASSERT_EQ(set->Part(QaSplit::kAll).size(), 3u);
  for (QaSplit part : {QaSplit::kTrain, QaSplit::kValidation, QaSplit::kTest}) {
    for (const GeneratedQuestion& q : set->Part(part)) {
      EXPECT_EQ(eval::SplitOfQuestion(q.text, 3), part) << q.text;
    }
  }
  EXPECT_EQ(set->skipped.at("qa/mmlu-tiny-test/no_question_entity"), 1);
  EXPECT_EQ(set->skipped.at("qa/claims-true-false/false_claim"), 1);
  const SplitCounts& mmlu = set->split_counts.at("qa/mmlu-tiny-test");
  EXPECT_EQ(mmlu.train + mmlu.validation + mmlu.test, 2);

  // Same inputs, same questions and hash, whatever the thread count.
  options.threads = 1;
  absl::StatusOr<QuestionSet> again = BuildQaExamples(*store_, *align_, options);
  ASSERT_OK(again);
  EXPECT_EQ(again->hash, set->hash);

  options.sets = {"mmlu-tiny-test"};
  absl::StatusOr<QuestionSet> one = BuildQaExamples(*store_, *align_, options);
  ASSERT_OK(one);
  EXPECT_EQ(one->Part(QaSplit::kAll).size(), 2u);
  options.sets = {"medqa"};
  absl::StatusOr<QuestionSet> missing = BuildQaExamples(*store_, *align_, options);
  ASSERT_THAT(missing,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("qa_sets"), HasSubstr("mmlu-tiny-test"))));
}

}  // namespace
}  // namespace ibgraphrag::retriever
