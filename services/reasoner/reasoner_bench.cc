// Reasoner hot paths: prompt build + answer parse (target <= 1 ms p50 for 100 triples) and the
// extractive backend (target <= 2 ms p50 for 100 triples and 5 options).
// Run: build-reasoner/bin/reasoner_bench --benchmark_repetitions=10
//        --benchmark_report_aggregates_only=true
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "services/reasoner/answer_parser.h"
#include "services/reasoner/extractive_reasoner.h"
#include "services/reasoner/prompt_builder.h"
#include "services/reasoner/prompt_templates.h"

namespace ibgraphrag::reasoner {
namespace {

struct RelationSpec {
  const char* name;
  const char* description;
};
constexpr RelationSpec kRelations[] = {
    {"drug treats disease", "the drug is indicated for the disease"},
    {"disease presents symptom", "the symptom is a manifestation of the disease"},
    {"disease associates gene", "the gene is associated with the disease"},
    {"drug binds gene", "the drug binds the protein encoded by the gene"},
    {"gene participates pathway", "the gene takes part in the pathway"},
    {"disease resembles disease", "the two diseases share features"},
    {"drug causes side effect", "the drug can cause the side effect"},
    {"disease localizes anatomy", "the disease affects the anatomical structure"},
};

// A question about one topic disease, five drug options and `n` triples: option 2 treats the
// topic directly, others connect through genes or not at all, the rest is realistic clutter.
ReasonRequest MakeRequest(int n) {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question =
      "A 58-year-old man presents with crushing substernal chest pain radiating to the left "
      "arm. Which drug is most appropriate to treat his acute myocardial infarction?";
  request.options = {"Metformin hydrochloride", "Levothyroxine sodium",
                     "Acetylsalicylic acid (aspirin)", "Omeprazole", "Atorvastatin calcium"};
  request.topic_entities = {{"DOID:5844", "myocardial infarction"}};
  const std::vector<std::pair<std::string, std::string>> drugs = {
      {"DB:00331", "Metformin hydrochloride"},
      {"DB:00451", "Levothyroxine sodium"},
      {"DB:00945", "Acetylsalicylic acid (aspirin)"},
      {"DB:00338", "Omeprazole"},
      {"DB:01076", "Atorvastatin calcium"}};
  for (int i = 0; i < n; ++i) {
    const RelationSpec& relation = kRelations[i % 8];
    EvidenceTriple t;
    t.relation = relation.name;
    t.relation_description = relation.description;
    t.score = 1.0 - i / static_cast<double>(n + 1);
    t.source = "hetionet";
    if (i == 0) {
      t.head = {drugs[2].first, drugs[2].second};
      t.relation = "drug treats disease";
      t.relation_description = kRelations[0].description;
      t.tail = {"DOID:5844", "Myocardial infarction"};
    } else if (i % 10 == 1) {
      t.head = {"DOID:5844", "Myocardial infarction"};
      t.tail = {absl::StrCat("Entrez:", 1000 + i), absl::StrCat("GENE", i, "A")};
    } else if (i % 10 == 2) {
      t.head = {drugs[(i / 10) % 5].first, drugs[(i / 10) % 5].second};
      t.tail = {absl::StrCat("Entrez:", 1000 + i - 1), absl::StrCat("GENE", i - 1, "A")};
    } else {
      t.head = {absl::StrCat("DOID:", 9000 + i), absl::StrCat("Cardiovascular disorder type ", i)};
      t.tail = {absl::StrCat("HP:", 100 + i), absl::StrCat("Phenotypic abnormality number ", i)};
    }
    request.evidence.push_back(std::move(t));
  }
  return request;
}

void BM_PromptBuildAndParse(benchmark::State& state) {
  const ReasonRequest request = MakeRequest(static_cast<int>(state.range(0)));
  auto library = PromptLibrary::Load({});
  if (!library.ok()) {
    state.SkipWithError("prompt templates failed to load");
    return;
  }
  const PromptTemplate& prompt_template = library->ForTask(Task::kMultipleChoice);
  const std::string output =
      "ans: C) Acetylsalicylic acid (aspirin)\nwhy: (Acetylsalicylic acid (aspirin), drug "
      "treats disease, Myocardial infarction) states the indication.";
  for (auto _ : state) {
    BuiltPrompt prompt = BuildPrompt(prompt_template, request, 4000);
    benchmark::DoNotOptimize(prompt);
    ParsedAnswer parsed = ParseMultipleChoice(output, request.options);
    benchmark::DoNotOptimize(parsed);
  }
}
BENCHMARK(BM_PromptBuildAndParse)->Arg(100)->Unit(benchmark::kMicrosecond);

void BM_PromptBuild(benchmark::State& state) {
  const ReasonRequest request = MakeRequest(static_cast<int>(state.range(0)));
  auto library = PromptLibrary::Load({});
  const PromptTemplate& prompt_template = library->ForTask(Task::kMultipleChoice);
  for (auto _ : state) {
    BuiltPrompt prompt = BuildPrompt(prompt_template, request, 4000);
    benchmark::DoNotOptimize(prompt);
  }
}
BENCHMARK(BM_PromptBuild)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_ParseMultipleChoice(benchmark::State& state) {
  const ReasonRequest request = MakeRequest(1);
  const std::string output =
      "Let me reason about this.\nThe patient has an MI.\nThe answer is C because aspirin "
      "inhibits platelet aggregation.";
  for (auto _ : state) {
    ParsedAnswer parsed = ParseMultipleChoice(output, request.options);
    benchmark::DoNotOptimize(parsed);
  }
}
BENCHMARK(BM_ParseMultipleChoice)->Unit(benchmark::kMicrosecond);

void BM_Extractive(benchmark::State& state) {
  const ReasonRequest request = MakeRequest(static_cast<int>(state.range(0)));
  const ExtractiveOptions options;
  for (auto _ : state) {
    ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, options);
    benchmark::DoNotOptimize(result);
  }
  const ReasonResult check = ReasonExtractively(request, Task::kMultipleChoice, options);
  if (check.option_index != 2) state.SkipWithError("extractive backend picked the wrong option");
}
BENCHMARK(BM_Extractive)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ibgraphrag::reasoner

BENCHMARK_MAIN();
