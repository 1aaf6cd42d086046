#include "common/qa/qa_datasets.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "common/qa/qa_split.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::eval {
namespace {

using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string QaDir() {
  const char* data = std::getenv("IBGR_DATA_DIR");
  return data == nullptr ? "" : std::string(data) + "/qa";
}

// Writes `content` to a fresh file in this process's scratch folder.
std::string WriteFixture(const std::string& name, const std::string& content) {
  static const std::string* const dir =
      new std::string(common::test_util::MakeTempDir("qa-datasets"));
  const std::string path = *dir + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

class RealDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest always sets IBGR_DATA_DIR (ibgr_add_test): a missing folder is a broken setup.
    ASSERT_TRUE(std::filesystem::is_directory(QaDir()))
        << "IBGR_DATA_DIR/qa not found ('" << QaDir()
        << "'): run through ctest, or set IBGR_DATA_DIR to the shared data folder";
  }
};

TEST_F(RealDataTest, MedMcqaDevHas4183QuestionsWithOneBasedGold) {
  auto dataset = LoadDataset(QaDir() + "/medmcqa-dev.jsonl");
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kMedMcqa);
  EXPECT_EQ(dataset->name, "medmcqa-dev");
  ASSERT_EQ(dataset->items.size(), 4183u);
  const QaItem& first = dataset->items.front();
  EXPECT_EQ(first.question, "Which of the following is not true for myelinated nerve fibers:");
  EXPECT_EQ(first.id, "45258d3d-b974-44dd-a161-c3fccbdadd88");
  EXPECT_EQ(first.line, 1);
  EXPECT_EQ(first.task, v1::TASK_MULTIPLE_CHOICE);
  ASSERT_EQ(first.options.size(), 4u);
  EXPECT_EQ(first.gold_index, 0);  // cop 1 = opa
  EXPECT_EQ(first.gold_text,
            "Impulse through myelinated fibers is slower than non-myelinated fibers");
  EXPECT_TRUE(first.gold_is_entity);
  EXPECT_EQ(dataset->items.back().id, "0c49a620-48a0-4240-9754-acf9310cd53c");
  EXPECT_EQ(dataset->items.back().line, 4183);
  std::map<int, int> gold_counts;
  for (const QaItem& item : dataset->items) ++gold_counts[item.gold_index];
  EXPECT_EQ(gold_counts, (std::map<int, int>{{0, 1348}, {1, 1085}, {2, 925}, {3, 825}}));
  // The expert explanation is kept where the file has one (null for the first question).
  EXPECT_TRUE(first.explanation.empty());
  int explained = 0;
  for (const QaItem& item : dataset->items) explained += item.explanation.empty() ? 0 : 1;
  EXPECT_EQ(explained, 2206);
}

TEST_F(RealDataTest, PubMedQaTestIsYesNoMaybeMultipleChoiceInFileOrder) {
  auto dataset = LoadDataset(QaDir() + "/pubmedqa-test.json");
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kPubMedQa);
  ASSERT_EQ(dataset->items.size(), 500u);
  const QaItem& first = dataset->items.front();
  EXPECT_EQ(first.id, "12377809");
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(first.question, "Is anorectal endosonography valuable in dyschesia?");
  EXPECT_THAT(first.options, ElementsAre("yes", "no", "maybe"));
  EXPECT_EQ(first.gold_index, 0);
  EXPECT_FALSE(first.gold_is_entity);
  EXPECT_EQ(dataset->items.back().id, "26134053");
  EXPECT_EQ(dataset->items.back().gold_text, "maybe");
  std::map<std::string, int> decisions;
  for (const QaItem& item : dataset->items) ++decisions[item.gold_text];
  EXPECT_EQ(decisions, (std::map<std::string, int>{{"yes", 276}, {"no", 169}, {"maybe", 55}}));
}

TEST_F(RealDataTest, MmluFilesHave1089QuestionsWithLetterGold) {
  const std::map<std::string, size_t> expected = {
      {"anatomy", 135},          {"clinical_knowledge", 265}, {"college_biology", 144},
      {"college_medicine", 173}, {"medical_genetics", 100},   {"professional_medicine", 272}};
  size_t total = 0;
  for (const auto& [subject, count] : expected) {
    auto dataset = LoadDataset(QaDir() + "/mmlu-" + subject + "-test.csv");
    ASSERT_OK(dataset);
    EXPECT_EQ(dataset->format, DatasetFormat::kMmlu) << subject;
    EXPECT_EQ(dataset->items.size(), count) << subject;
    for (const QaItem& item : dataset->items) {
      ASSERT_EQ(item.options.size(), 4u);
      ASSERT_GE(item.gold_index, 0);
      ASSERT_LT(item.gold_index, 4);
      ASSERT_EQ(item.gold_text, item.options[item.gold_index]);
    }
    total += dataset->items.size();
  }
  EXPECT_EQ(total, 1089u);
  auto anatomy = LoadDataset(QaDir() + "/mmlu-anatomy-test.csv");
  ASSERT_OK(anatomy);
  const QaItem& first = anatomy->items.front();
  EXPECT_EQ(first.question,
            "A lesion causing compression of the facial nerve at the stylomastoid foramen will "
            "cause ipsilateral");
  EXPECT_EQ(first.gold_index, 0);
  EXPECT_EQ(first.gold_text, "paralysis of the facial muscles.");
  // A quoted field with doubled quotes.
  EXPECT_EQ(anatomy->items[1].question, "A \"dished face\" profile is often associated with");
  EXPECT_EQ(anatomy->items[1].gold_index, 1);
  EXPECT_EQ(anatomy->items[1].line, 2);
}

TEST_F(RealDataTest, BiomixTrueFalseHas311ClaimsWithLabels) {
  auto dataset = LoadDataset(QaDir() + "/biomixqa-true-false.csv");
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kTrueFalse);
  ASSERT_EQ(dataset->items.size(), 311u);
  const QaItem& first = dataset->items.front();
  EXPECT_EQ(first.id, "0");
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(first.question, "enhanced S-cone syndrome is not a vitreoretinal degeneration");
  EXPECT_EQ(first.task, v1::TASK_FACT_VERIFICATION);
  EXPECT_EQ(first.gold_label, v1::FACT_LABEL_REFUTED);
  EXPECT_TRUE(first.options.empty());
  EXPECT_FALSE(first.gold_is_entity);
  EXPECT_EQ(dataset->items.back().id, "321");
  EXPECT_EQ(dataset->items.back().gold_label, v1::FACT_LABEL_SUPPORTED);
  int supported = 0;
  for (const QaItem& item : dataset->items)
    supported += item.gold_label == v1::FACT_LABEL_SUPPORTED;
  EXPECT_EQ(supported, 197);
}

TEST_F(RealDataTest, DirectoryExpandsToEveryQaFileSorted) {
  auto paths = ExpandDatasetPaths(QaDir());
  ASSERT_OK(paths);
  // Every file parses, sorted by name; the known ones are there (the folder grows, so no count).
  EXPECT_TRUE(std::is_sorted(paths->begin(), paths->end()));
  for (const char* name :
       {"biomixqa-true-false.csv", "medmcqa-dev.jsonl", "medqa-us-4opt-dev.jsonl",
        "mmlu-anatomy-test.csv", "pubmedqa-test.json"}) {
    EXPECT_TRUE(std::any_of(paths->begin(), paths->end(), [&](const std::string& p) {
      return absl::EndsWith(p, name);
    })) << name;
  }
  for (const std::string& path : *paths) {
    EXPECT_OK(LoadDataset(path)) << path;
  }
}

TEST_F(RealDataTest, MedQaUsDevHas1272FourOptionQuestions) {
  auto dataset = LoadDataset(QaDir() + "/medqa-us-4opt-dev.jsonl");
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kMedQa);
  ASSERT_EQ(dataset->items.size(), 1272u);
  for (const QaItem& item : dataset->items) {
    ASSERT_EQ(item.options.size(), 4u) << item.id;
    ASSERT_GE(item.gold_index, 0) << item.id;
    EXPECT_EQ(item.gold_text, item.options[item.gold_index]) << item.id;
  }
}

// The clinical lookup set the repository ships (tools/eval/lookup): every line parses, both
// parts are there, and every kind maps to its task.
TEST(LookupSetTest, ShippedSetParses) {
  const std::string path =
      std::string(IBGR_SOURCE_DIR) + "/tools/eval/lookup/clinical_lookup.jsonl";
  auto dataset = LoadDataset(path);
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kLookup);
  int dev = 0, test = 0, open = 0, mcq = 0, yes_no = 0;
  std::set<std::string> relations;
  for (const QaItem& item : dataset->items) {
    dev += item.file_split == "dev";
    test += item.file_split == "test";
    ASSERT_FALSE(item.accepted.empty()) << item.id;
    relations.insert(item.relation);
    switch (item.task) {
      case v1::TASK_OPEN:
        ++open;
        EXPECT_EQ(item.gold_text, item.accepted.front());
        break;
      case v1::TASK_MULTIPLE_CHOICE:
        ++mcq;
        ASSERT_GE(item.gold_index, 0) << item.id;
        break;
      case v1::TASK_FACT_VERIFICATION:
        ++yes_no;
        EXPECT_NE(item.gold_label, v1::FACT_LABEL_UNSPECIFIED) << item.id;
        break;
      default:
        ADD_FAILURE() << item.id << " has no task";
    }
  }
  EXPECT_GE(dev, 60);
  EXPECT_GE(test, 20);
  EXPECT_EQ(dev + test, static_cast<int>(dataset->items.size()));
  EXPECT_GT(open, 0);
  EXPECT_GT(mcq, 0);
  EXPECT_GT(yes_no, 0);
  for (const char* relation : {"treats", "side_effect", "symptom", "gene", "target", "is_a",
                               "drug_class", "anatomy", "pathway"}) {
    EXPECT_EQ(relations.count(relation), 1u) << relation;
  }
}

TEST(LookupSetTest, ParsesEachKindAndRefusesBadLines) {
  const std::string path = WriteFixture(
      "lookup.jsonl",
      R"({"id": "A1", "split": "dev", "kind": "open", "relation": "treats", "hub": true, )"
      R"("question": "What drugs treat gout?", "accepted": ["Allopurinol", "colchicine"]})"
      "\n"
      R"({"id": "A2", "split": "test", "kind": "multiple_choice", "relation": "gene", )"
      R"("question": "Which gene?", "options": ["TTN", "CFTR"], "answer": "B", )"
      R"("accepted": ["cftr"]})"
      "\n"
      R"({"id": "A3", "split": "dev", "kind": "yes_no", "relation": "treats", )"
      R"("question": "Is metformin used for gout?", "answer": "no", "accepted": ["no"]})"
      "\n");
  auto dataset = LoadDataset(path);
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kLookup);
  ASSERT_EQ(dataset->items.size(), 3u);
  EXPECT_EQ(dataset->items[0].task, v1::TASK_OPEN);
  EXPECT_THAT(dataset->items[0].accepted, ::testing::ElementsAre("allopurinol", "colchicine"));
  EXPECT_TRUE(dataset->items[0].hub);
  EXPECT_EQ(dataset->items[0].id, "A1");
  EXPECT_EQ(dataset->items[1].gold_index, 1);
  EXPECT_EQ(dataset->items[1].gold_text, "CFTR");
  EXPECT_EQ(dataset->items[1].file_split, "test");
  EXPECT_EQ(dataset->items[2].gold_label, v1::FACT_LABEL_REFUTED);

  // The file's own parts select the questions: dev is the validation part.
  std::vector<QaItem> dev = dataset->items;
  KeepSplit(QaSplit::kValidation, 0, &dev);
  ASSERT_EQ(dev.size(), 2u);
  std::vector<QaItem> test = dataset->items;
  KeepSplit(QaSplit::kTest, 0, &test);
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test.front().id, "A2");

  for (
      const auto& [body, message] : std::vector<std::pair<std::string, std::string>>{
          {R"({"split": "dev", "kind": "open", "relation": "x", "question": "q", "accepted": []})",
           "accepted"},
          {R"({"split": "dev", "kind": "maybe", "relation": "x", "question": "q", "accepted": ["a"]})",
           "kind"},
          {R"({"split": "dev", "kind": "multiple_choice", "relation": "x", "question": "q", )"
           R"("options": ["a", "b"], "answer": "C", "accepted": ["a"]})",
           "option letter"},
          {R"({"split": "dev", "kind": "yes_no", "relation": "x", "question": "q", "answer": )"
           R"("perhaps", "accepted": ["a"]})",
           "yes"}}) {
    const std::string bad = WriteFixture("bad_lookup.jsonl", body + "\n");
    auto parsed = LoadDataset(bad, DatasetFormat::kLookup);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(message)) << body;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("bad_lookup.jsonl:1")) << body;
  }
}

// Issue 26: PubHealth (factcheck/), four labels read as three verdicts, parts from the file name.
TEST_F(RealDataTest, PubHealthTrainAndDevHaveTheirKnownLabelCounts) {
  for (const auto& [file, claims, yes, no, nee, part] :
       {std::tuple{"pubhealth-train.csv", 9811, 5078, 3003, 1437 + 293, "train"},
        std::tuple{"pubhealth-dev.csv", 1227, 636, 382, 168 + 41, "dev"}}) {
    auto dataset = LoadDataset(QaDir() + "/../factcheck/" + file);
    ASSERT_OK(dataset);
    EXPECT_EQ(dataset->format, DatasetFormat::kPubHealth);
    ASSERT_EQ(static_cast<int>(dataset->items.size()), claims) << file;
    int counts[3] = {0, 0, 0};
    for (const QaItem& item : dataset->items) {
      EXPECT_EQ(item.task, v1::TASK_FACT_VERIFICATION);
      EXPECT_EQ(item.file_split, part);
      EXPECT_FALSE(item.question.empty());
      counts[0] += item.gold_label == v1::FACT_LABEL_SUPPORTED;
      counts[1] += item.gold_label == v1::FACT_LABEL_REFUTED;
      counts[2] += item.gold_label == v1::FACT_LABEL_UNKNOWN;
    }
    EXPECT_EQ(counts[0], yes) << file;
    EXPECT_EQ(counts[1], no) << file;
    EXPECT_EQ(counts[2], nee) << file;
  }
}

TEST(PubHealthTest, ReadsFourLabelsAndRefusesOthers) {
  const std::string path = WriteFixture(
      "claims-dev.csv",
      "claim,label\n\"Vitamin C, in large doses, cures colds\",false\nA,true\nB,Mixture\n"
      "C,unproven\n");
  auto dataset = LoadDataset(path);
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kPubHealth);
  ASSERT_EQ(dataset->items.size(), 4u);
  EXPECT_EQ(dataset->items[0].question, "Vitamin C, in large doses, cures colds");
  EXPECT_EQ(dataset->items[0].gold_label, v1::FACT_LABEL_REFUTED);
  EXPECT_EQ(dataset->items[1].gold_label, v1::FACT_LABEL_SUPPORTED);
  EXPECT_EQ(dataset->items[2].gold_label, v1::FACT_LABEL_UNKNOWN);
  EXPECT_EQ(dataset->items[2].gold_text, "mixture");
  EXPECT_EQ(dataset->items[3].gold_label, v1::FACT_LABEL_UNKNOWN);
  EXPECT_EQ(dataset->items[3].file_split, "dev");
  std::vector<QaItem> test = dataset->items;
  KeepSplit(QaSplit::kTest, 0, &test);
  EXPECT_TRUE(test.empty());  // the dev file is never the test part
  const std::string bad = WriteFixture("bad-claims.csv", "claim,label\nA,half true\n");
  EXPECT_THAT(LoadDataset(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("bad-claims.csv:2: label must be true, false, "
                                                   "mixture or unproven")));
}

// Issue 26: a lookup set asked as multiple choice, for the KG-lookup class's calibration.
TEST(LookupSetTest, OpenQuestionsBecomeChoicesWithDistractorsTheQuestionDoesNotAccept) {
  const std::string path = WriteFixture(
      "lookup_choices.jsonl",
      R"({"id": "D1", "split": "dev", "kind": "open", "relation": "treats", "answer_type": )"
      R"("drug", "question": "What drugs treat gout?", "accepted": ["allopurinol", )"
      R"("colchicine", "febuxostat", "insulin"]})"
      "\n"
      R"({"id": "D2", "split": "dev", "kind": "open", "relation": "treats", "answer_type": )"
      R"("drug", "question": "What drugs treat diabetes?", "accepted": ["metformin", )"
      R"("insulin glargine", "glipizide", "colchicine"]})"
      "\n"
      R"({"id": "D3", "split": "dev", "kind": "open", "relation": "treats", "answer_type": )"
      R"("drug", "question": "What drugs treat asthma?", "accepted": ["salbutamol", )"
      R"("budesonide", "montelukast"]})"
      "\n"
      R"({"id": "T1", "split": "test", "kind": "open", "relation": "treats", "answer_type": )"
      R"("drug", "question": "What drugs treat angina?", "accepted": ["nitroglycerin", "atenolol"]})"
      "\n"
      R"({"id": "G1", "split": "dev", "kind": "open", "relation": "gene", "answer_type": )"
      R"("gene", "question": "Which gene is mutated in CF?", "accepted": ["cftr"]})"
      "\n"
      R"({"id": "M1", "split": "dev", "kind": "multiple_choice", "relation": "gene", )"
      R"("question": "Which gene?", "options": ["TTN", "CFTR"], "answer": "B", )"
      R"("accepted": ["cftr"]})"
      "\n");
  auto dataset = LoadDataset(path);
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->items[0].answer_type, "drug");
  const std::vector<QaItem> choices = LookupAsChoices(dataset->items, 2);
  // M1 as written; D1, D2, D3 two each (their pools hold at least three other answers); T1 (no
  // other test question) and G1 (no other gene question) have no distractors.
  ASSERT_EQ(choices.size(), 7u);
  EXPECT_EQ(choices[0].id, "M1");
  std::set<int> gold_positions;
  for (size_t i = 1; i < choices.size(); ++i) {
    const QaItem& c = choices[i];
    EXPECT_EQ(c.task, v1::TASK_MULTIPLE_CHOICE) << c.id;
    ASSERT_EQ(c.options.size(), 4u) << c.id;
    ASSERT_GE(c.gold_index, 0);
    EXPECT_EQ(c.options[c.gold_index], c.gold_text);
    EXPECT_EQ(c.accepted, std::vector<std::string>{c.gold_text});
    EXPECT_EQ(c.file_split, "dev");
    EXPECT_EQ(std::set<std::string>(c.options.begin(), c.options.end()).size(), 4u) << c.id;
    gold_positions.insert(c.gold_index);
    const QaItem& source = c.id.rfind("D1", 0) == 0   ? dataset->items[0]
                           : c.id.rfind("D2", 0) == 0 ? dataset->items[1]
                                                      : dataset->items[2];
    for (int o = 0; o < 4; ++o) {
      if (o == c.gold_index) continue;
      // Never an answer the question accepts: gout accepts insulin, so "insulin glargine" and
      // colchicine are no gout distractors.
      for (const std::string& a : source.accepted) EXPECT_NE(c.options[o], a) << c.id;
      if (source.id == "D1") EXPECT_NE(c.options[o], "insulin glargine") << c.id;
    }
  }
  EXPECT_EQ(choices[1].id, "D1/mc0");
  EXPECT_EQ(choices[1].gold_text, "allopurinol");  // the first accepted answer
  EXPECT_EQ(choices[2].gold_text, "febuxostat");   // then spread over the list
  EXPECT_GT(gold_positions.size(), 1u);            // the right option moves
  // Deterministic.
  const std::vector<QaItem> again = LookupAsChoices(dataset->items, 2);
  for (size_t i = 0; i < choices.size(); ++i) EXPECT_EQ(again[i].options, choices[i].options);
}

// MedQA and BiomixQA multiple choice are not in the data directory: small fixtures in their
// published formats.
TEST(MedQaTest, ParsesLetterKeyedOptionsAndAnswerIdx) {
  const std::string path = WriteFixture(
      "medqa.jsonl",
      R"({"question": "A 23-year-old woman ... Which drug?", "answer": "Nitrofurantoin", )"
      R"("options": {"A": "Ampicillin", "B": "Ceftriaxone", "C": "Doxycycline", )"
      R"("D": "Nitrofurantoin"}, "meta_info": "step2&3", "answer_idx": "D"})"
      "\n\n"
      R"({"question": "Second?", "options": ["x", "y", "z"], "answer": "y"})"
      "\n");
  auto dataset = LoadDataset(path);
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kMedQa);
  ASSERT_EQ(dataset->items.size(), 2u);
  EXPECT_THAT(dataset->items[0].options,
              ElementsAre("Ampicillin", "Ceftriaxone", "Doxycycline", "Nitrofurantoin"));
  EXPECT_EQ(dataset->items[0].gold_index, 3);
  EXPECT_EQ(dataset->items[0].gold_text, "Nitrofurantoin");
  EXPECT_EQ(dataset->items[0].id, "line:1");
  EXPECT_EQ(dataset->items[1].line, 3);
  EXPECT_EQ(dataset->items[1].gold_index, 1);
}

TEST(MedQaTest, AnswerIdxOutsideOptionsNamesFileAndLine) {
  auto items = ParseMedQa(
      "{\"question\": \"q\", \"options\": {\"A\": \"a\", \"B\": \"b\"}, \"answer_idx\": \"A\"}\n"
      "{\"question\": \"q\", \"options\": {\"A\": \"a\", \"B\": \"b\"}, \"answer_idx\": \"E\"}\n",
      "medqa.jsonl");
  ASSERT_THAT(items, StatusIs(absl::StatusCode::kInvalidArgument,
                              ::testing::AllOf(HasSubstr("medqa.jsonl:2:"),
                                               HasSubstr("answer_idx \"E\""))));
}

TEST(BiomixMcqTest, ParsesOptionsCombinedAndCorrectNode) {
  const std::string path = WriteFixture(
      "mcq_questions.csv",
      "disease_pair,correct_node,negative_samples,disease_1,disease_2,options_combined,text\n"
      "\"('psoriasis', \"\"Takayasu's arteritis\"\")\",HLA-B,\"SHTN1, DTNB, BTBD9, SLC14A2\","
      "psoriasis,Takayasu's arteritis,\"SHTN1, HLA-B,  SLC14A2,  BTBD9,  DTNB\",\"Out of the "
      "given list, which Gene is associated with psoriasis and Takayasu's arteritis. Given list "
      "is: SHTN1, HLA-B,  SLC14A2,  BTBD9,  DTNB\"\n"
      "\"('a', 'b')\",HLA-DQA1,\"X\",a,b,\" ZFHX3,  HLA-DQA1, EPDR1,  CRTC1, HLA-DQA1\",\"Which "
      "gene?\"\n");
  auto dataset = LoadDataset(path);
  ASSERT_OK(dataset);
  EXPECT_EQ(dataset->format, DatasetFormat::kBiomixMcq);
  ASSERT_EQ(dataset->items.size(), 2u);
  const QaItem& first = dataset->items[0];
  EXPECT_THAT(first.options, ElementsAre("SHTN1", "HLA-B", "SLC14A2", "BTBD9", "DTNB"));
  EXPECT_EQ(first.gold_index, 1);
  EXPECT_EQ(first.gold_text, "HLA-B");
  EXPECT_THAT(first.question, HasSubstr("psoriasis and Takayasu's arteritis"));
  EXPECT_TRUE(first.gold_is_entity);
  EXPECT_EQ(first.line, 2);
  // The gold gene is listed twice: the first occurrence is the gold index.
  EXPECT_EQ(dataset->items[1].gold_index, 1);
  EXPECT_EQ(dataset->items[1].options.size(), 5u);
}

TEST(BiomixMcqTest, CorrectNodeMissingFromOptionsIsAnError) {
  auto items = ParseBiomixMcq("correct_node,options_combined,text\nTP53,\"A, B\",q\n", "mcq.csv");
  ASSERT_THAT(items, Not(IsOk()));
  EXPECT_THAT(items.status().message(), HasSubstr("mcq.csv:2:"));
  EXPECT_THAT(items.status().message(), HasSubstr("correct_node \"TP53\""));
}

TEST(BadInputTest, MalformedRowsNameFileAndLine) {
  struct Case {
    DatasetFormat format;
    std::string name;
    std::string content;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {DatasetFormat::kMedMcqa, "m.jsonl",
       "{\"question\":\"q\",\"opa\":\"a\",\"opb\":\"b\",\"opc\":\"c\",\"opd\":\"d\",\"cop\":2}\n"
       "{\"question\":\"q\",\"opa\":\"a\"",
       "m.jsonl:2: not valid JSON"},
      {DatasetFormat::kMedMcqa, "m2.jsonl",
       "{\"question\":\"q\",\"opa\":\"a\",\"opb\":\"b\",\"opc\":\"c\",\"opd\":\"d\",\"cop\":5}\n",
       "m2.jsonl:1: cop must be 1..4"},
      {DatasetFormat::kMedMcqa, "m3.jsonl", "{\"question\":\"q\",\"opa\":\"a\",\"cop\":1}\n",
       "m3.jsonl:1: missing string field \"opb\""},
      {DatasetFormat::kMmlu, "x.csv", "q,a,b,c,d,A\nq,a,b,c,d,E\n",
       "x.csv:2: answer must be a letter A..D"},
      {DatasetFormat::kMmlu, "y.csv", "q,a,b,c,d,A\n\nq,a,b\n", "y.csv:3: expected 6 columns"},
      {DatasetFormat::kTrueFalse, "t.csv", ",text,label\n0,claim,True\n1,claim,Maybe\n",
       "t.csv:3: label must be True or False"},
      {DatasetFormat::kPubMedQa, "p.json",
       "{\n \"1\": {\"QUESTION\": \"q\", \"final_decision\": \"yes\"},\n"
       " \"2\": {\"QUESTION\": \"q\", \"final_decision\": \"perhaps\"}\n}\n",
       "p.json:3: final_decision must be yes, no or maybe"},
      {DatasetFormat::kPubMedQa, "p2.json", "{\n \"1\": {\"QUESTION\": \"q\",\n oops}\n}",
       "p2.json:3: not valid JSON"},
  };
  for (const Case& c : cases) {
    auto dataset = LoadDataset(WriteFixture(c.name, c.content), c.format);
    ASSERT_THAT(dataset, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)))
        << c.name;
  }
}

TEST(BadInputTest, UnknownFormatAndMissingFileAreClearErrors) {
  auto unknown = LoadDataset(WriteFixture("notes.txt", "hello\n"));
  ASSERT_THAT(unknown, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("notes.txt: cannot detect the dataset format")));
  auto csv = LoadDataset(WriteFixture("odd.csv", "a,b,c\n"));
  ASSERT_THAT(csv, Not(IsOk()));
  EXPECT_THAT(csv.status().message(), HasSubstr("odd.csv: cannot detect"));
  auto missing = LoadDataset("/nonexistent/medqa.jsonl");
  ASSERT_THAT(missing,
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/medqa.jsonl")));
  auto paths = ExpandDatasetPaths("/nonexistent/dir");
  ASSERT_THAT(paths, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ParseDatasetFormat("csv"), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK(ParseDatasetFormat("biomixqa_mcq"));
  EXPECT_EQ(*ParseDatasetFormat("biomixqa_mcq"), DatasetFormat::kBiomixMcq);
  EXPECT_EQ(DatasetFormatName(DatasetFormat::kTrueFalse), "truefalse");
}

}  // namespace
}  // namespace ibgraphrag::eval
