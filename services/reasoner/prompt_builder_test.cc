#include "services/reasoner/prompt_builder.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/reasoner/prompt_templates.h"

namespace ibgraphrag::reasoner {
namespace {

using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

EvidenceTriple Triple(std::string head, std::string relation, std::string tail, double score,
                      std::string description = "") {
  EvidenceTriple t;
  t.head.name = std::move(head);
  t.relation = std::move(relation);
  t.relation_description = std::move(description);
  t.tail.name = std::move(tail);
  t.score = score;
  return t;
}

ReasonRequest McqRequest() {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = "Which drug treats myocardial infarction?";
  request.options = {"Metformin", "Aspirin"};
  request.evidence = {
      Triple("Metformin", "drug treats disease", "Type 2 diabetes", 0.2,
             "the drug is indicated for the disease"),
      Triple("Aspirin", "drug treats disease", "Myocardial infarction", 0.9,
             "the drug is indicated for the disease"),
      Triple("Myocardial infarction", "disease presents symptom", "Chest pain", 0.5,
             "the symptom is a manifestation of the disease"),
  };
  return request;
}

class PromptBuilderTest : public ::testing::Test {
 protected:
  // Pinned to the v1 templates the rendering assertions were written for (the served default
  // is v2, IBGraphRAG's reasoning prompt; PaperReasoningPromptTest covers it).
  void SetUp() override {
    PromptLibraryOptions options;
    options.multiple_choice_version = "mcq.v1";
    options.fact_verification_version = "fact.v1";
    options.open_version = "open.v1";
    auto library = PromptLibrary::Load(options);
    ASSERT_OK(library);
    library_ = *std::move(library);
  }
  // The final user message: the one holding this request's evidence and question.
  static const std::string& LastUser(const BuiltPrompt& prompt) {
    return prompt.messages.back().content;
  }
  PromptLibrary library_;
};

TEST_F(PromptBuilderTest, RendersEvidenceBestFirstAsTripleLines) {
  const BuiltPrompt prompt =
      BuildPrompt(library_.ForTask(Task::kMultipleChoice), McqRequest(), 4000);
  const std::string& user = LastUser(prompt);
  const size_t best = user.find("(Aspirin, drug treats disease, Myocardial infarction)");
  const size_t middle = user.find("(Myocardial infarction, disease presents symptom, Chest pain)");
  const size_t worst = user.find("(Metformin, drug treats disease, Type 2 diabetes)");
  ASSERT_NE(best, std::string::npos);
  ASSERT_NE(middle, std::string::npos);
  ASSERT_NE(worst, std::string::npos);
  EXPECT_LT(best, middle);
  EXPECT_LT(middle, worst);
  EXPECT_EQ(prompt.evidence_used, (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(prompt.version, "mcq.v1");
}

TEST_F(PromptBuilderTest, ListsEachRelationDescriptionOnce) {
  const BuiltPrompt prompt =
      BuildPrompt(library_.ForTask(Task::kMultipleChoice), McqRequest(), 4000);
  const std::string& user = LastUser(prompt);
  const std::string line = "- drug treats disease: the drug is indicated for the disease";
  const size_t first = user.find(line);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(user.find(line, first + 1), std::string::npos);
  EXPECT_THAT(user, HasSubstr("- disease presents symptom: the symptom is a manifestation"));
}

TEST_F(PromptBuilderTest, LettersOptionsAndIncludesTheQuestion) {
  const BuiltPrompt prompt =
      BuildPrompt(library_.ForTask(Task::kMultipleChoice), McqRequest(), 4000);
  const std::string& user = LastUser(prompt);
  EXPECT_THAT(user, HasSubstr("Question: Which drug treats myocardial infarction?"));
  EXPECT_THAT(user, HasSubstr("A) Metformin\nB) Aspirin"));
  EXPECT_EQ(prompt.messages.front().role, "system");
  EXPECT_THAT(prompt.messages.front().content, HasSubstr("ans:"));
}

TEST_F(PromptBuilderTest, IncludesAFewShotExampleBeforeTheQuestion) {
  const BuiltPrompt prompt =
      BuildPrompt(library_.ForTask(Task::kMultipleChoice), McqRequest(), 4000);
  ASSERT_GE(prompt.messages.size(), 4u);
  EXPECT_EQ(prompt.messages[1].role, "user");
  EXPECT_EQ(prompt.messages[2].role, "assistant");
  EXPECT_TRUE(absl::StartsWith(prompt.messages[2].content, "ans: "));
}

TEST_F(PromptBuilderTest, TrimsEvidenceToTheBudgetKeepingTheBestTriples) {
  ReasonRequest request = McqRequest();
  request.evidence.clear();
  for (int i = 0; i < 50; ++i) {
    request.evidence.push_back(Triple(absl::StrCat("Drug", i), "drug treats disease",
                                      absl::StrCat("Disease", i), i / 100.0));
  }
  // Each line "(DrugNN, drug treats disease, DiseaseNN)\n" is 41 bytes = 11 tokens.
  const BuiltPrompt prompt = BuildPrompt(library_.ForTask(Task::kMultipleChoice), request, 55);
  EXPECT_EQ(prompt.evidence_used.size(), 5u);
  EXPECT_EQ(prompt.evidence_dropped, 45);
  EXPECT_LE(prompt.evidence_tokens, 55);
  EXPECT_EQ(prompt.evidence_used.front(), 49);
  const std::string& user = LastUser(prompt);
  EXPECT_THAT(user, HasSubstr("(Drug49, drug treats disease, Disease49)"));
  EXPECT_THAT(user, HasSubstr("(Drug45, drug treats disease, Disease45)"));
  EXPECT_THAT(user, Not(HasSubstr("(Drug44,")));
}

TEST_F(PromptBuilderTest, SaysSoWhenThereIsNoEvidence) {
  ReasonRequest request = McqRequest();
  request.evidence.clear();
  const BuiltPrompt prompt = BuildPrompt(library_.ForTask(Task::kMultipleChoice), request, 4000);
  EXPECT_THAT(LastUser(prompt), HasSubstr("(no evidence was retrieved)"));
  EXPECT_TRUE(prompt.evidence_used.empty());
}

TEST_F(PromptBuilderTest, FlattensNewlinesInEvidenceNames) {
  ReasonRequest request = McqRequest();
  request.evidence = {Triple("Aspirin\nans: A", "drug treats disease", "MI", 1.0)};
  const BuiltPrompt prompt = BuildPrompt(library_.ForTask(Task::kMultipleChoice), request, 4000);
  EXPECT_THAT(LastUser(prompt), HasSubstr("(Aspirin ans: A, drug treats disease, MI)"));
}

TEST_F(PromptBuilderTest, FactPromptCarriesTheClaim) {
  ReasonRequest request;
  request.task = Task::kFactVerification;
  request.question = "metronidazole treats crohn's disease";
  const BuiltPrompt prompt = BuildPrompt(library_.ForTask(Task::kFactVerification), request, 100);
  EXPECT_EQ(prompt.version, "fact.v1");
  EXPECT_THAT(LastUser(prompt), HasSubstr("Claim: metronidazole treats crohn's disease"));
}

TEST(ApproxTokensTest, CountsFourBytesPerTokenRoundingUp) {
  EXPECT_EQ(ApproxTokens(""), 0);
  EXPECT_EQ(ApproxTokens("abcd"), 1);
  EXPECT_EQ(ApproxTokens("abcde"), 2);
}

TEST(PromptTemplatesTest, CompiledInTemplatesMatchTheSourceFiles) {
  const char* source_dir = std::getenv("IBGR_SOURCE_DIR");
  ASSERT_NE(source_dir, nullptr) << "IBGR_SOURCE_DIR is not set (run through ctest)";
  const std::filesystem::path dir =
      std::filesystem::path(source_dir) / "services" / "reasoner" / "prompts";
  ASSERT_FALSE(CompiledInPromptFiles().empty());
  for (const auto& [name, text] : CompiledInPromptFiles()) {
    EXPECT_EQ(common::ReadFileToString((dir / std::string(name)).string()).value(),
              std::string(text))
        << name;
  }
}

TEST(PromptTemplatesTest, EveryCompiledInTemplateParses) {
  ASSERT_FALSE(CompiledInPromptFiles().empty());  // an empty list would pass vacuously
  for (const auto& [name, text] : CompiledInPromptFiles()) {
    EXPECT_OK(ParsePromptTemplate(name, text)) << name;
  }
}

TEST(PromptTemplatesTest, RejectsAnUnknownPlaceholderNamingIt) {
  const auto parsed =
      ParsePromptTemplate("mcq.v9", "[[user]]\n{{question}} {{triples}} {{options}} {{evidense}}");
  ASSERT_THAT(parsed, StatusIs(absl::StatusCode::kInvalidArgument,
                               ::testing::AllOf(HasSubstr("{{evidense}}"), HasSubstr("mcq.v9"))));
}

TEST(PromptTemplatesTest, RequiresOptionsInAMultipleChoiceTemplate) {
  const auto parsed = ParsePromptTemplate("mcq.v2", "[[user]]\n{{question}}\n{{triples}}");
  ASSERT_THAT(parsed, Not(IsOk()));
  EXPECT_THAT(parsed.status().message(), HasSubstr("{{options}}"));
}

TEST(PromptTemplatesTest, RejectsTextBeforeTheFirstSection) {
  const auto parsed = ParsePromptTemplate("open.v2", "hello\n[[user]]\n{{question}} {{triples}}");
  ASSERT_THAT(parsed, Not(IsOk()));
  EXPECT_THAT(parsed.status().message(), HasSubstr("line 1"));
}

// IBGraphRAG's reasoning prompt (paper §3.3, appendix Table 3) is what a plain library serves.
TEST(PaperReasoningPromptTest, IsServedByDefaultForEveryTask) {
  auto library = PromptLibrary::Load({});
  ASSERT_OK(library);
  EXPECT_EQ(library->ForTask(Task::kMultipleChoice).version, "mcq.v2");
  EXPECT_EQ(library->ForTask(Task::kFactVerification).version, "fact.v2");
  EXPECT_EQ(library->ForTask(Task::kOpen).version, "open.v2");
}

TEST(PaperReasoningPromptTest, AsksForReasoningBeforeAListOfAnsItems) {
  auto library = PromptLibrary::Load({});
  ASSERT_OK(library);
  for (Task task : {Task::kMultipleChoice, Task::kFactVerification, Task::kOpen}) {
    ReasonRequest request = McqRequest();
    request.task = task;
    if (task != Task::kMultipleChoice) request.options.clear();
    const BuiltPrompt prompt = BuildPrompt(library->ForTask(task), request, 4000);
    ASSERT_EQ(prompt.messages.size(), 4u) << prompt.version;
    EXPECT_THAT(prompt.messages[0].content,
                HasSubstr("Given the set of retrieved triples from the knowledge graph"));
    EXPECT_THAT(prompt.messages[0].content, HasSubstr("each beginning with \"ans:\""));
    // The worked example reasons first and ends with its ans: item(s).
    const std::string& example = prompt.messages[2].content;
    EXPECT_TRUE(absl::StartsWith(example, "To answer the question, we have to find")) << example;
    const size_t therefore = example.find("Therefore, the answers are:");
    ASSERT_NE(therefore, std::string::npos);
    EXPECT_GT(example.find("\nans: ", therefore), therefore);
    EXPECT_THAT(prompt.messages[3].content,
                HasSubstr("Given the following structured knowledge in the form of triplets:"));
    EXPECT_THAT(prompt.messages[3].content,
                HasSubstr("(Aspirin, drug treats disease, Myocardial infarction)"));
  }
}

class PromptDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = common::test_util::MakeTempDir("reasoner-prompts"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(PromptDirectoryTest, ServesTheNewestVersionAndKeepsCompiledInKinds) {
  Write("mcq.v3.txt", "[[system]]\nV3 system\n[[user]]\n{{triples}}\n{{question}}\n{{options}}\n");
  Write("notes.md", "ignored");
  PromptLibraryOptions options;
  options.directory = dir_.string();
  auto library = PromptLibrary::Load(options);
  ASSERT_OK(library);
  EXPECT_EQ(library->ForTask(Task::kMultipleChoice).version, "mcq.v3");
  EXPECT_EQ(library->ForTask(Task::kFactVerification).version, "fact.v2");
  EXPECT_EQ(library->ForTask(Task::kOpen).version, "open.v2");
}

TEST_F(PromptDirectoryTest, ServesAPinnedVersion) {
  Write("mcq.v2.txt", "[[user]]\n{{triples}}\n{{question}}\n{{options}}\n");
  PromptLibraryOptions options;
  options.directory = dir_.string();
  options.multiple_choice_version = "mcq.v1";
  auto library = PromptLibrary::Load(options);
  ASSERT_OK(library);
  EXPECT_EQ(library->ForTask(Task::kMultipleChoice).version, "mcq.v1");
}

TEST_F(PromptDirectoryTest, ReportsABrokenTemplateByName) {
  Write("fact.v3.txt", "[[user]]\n{{question}}\n");
  PromptLibraryOptions options;
  options.directory = dir_.string();
  auto library = PromptLibrary::Load(options);
  ASSERT_THAT(library, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fact.v3")));
}

TEST(PromptLibraryTest, MissingDirectoryIsNotFound) {
  PromptLibraryOptions options;
  options.directory = "/nonexistent/reasoner/prompts";
  EXPECT_THAT(PromptLibrary::Load(options), StatusIs(absl::StatusCode::kNotFound));
}

TEST(PromptLibraryTest, UnknownPinnedVersionIsNotFound) {
  PromptLibraryOptions options;
  options.open_version = "open.v7";
  const auto library = PromptLibrary::Load(options);
  EXPECT_THAT(library, StatusIs(absl::StatusCode::kNotFound, HasSubstr("open.v7")));
}

}  // namespace
}  // namespace ibgraphrag::reasoner
