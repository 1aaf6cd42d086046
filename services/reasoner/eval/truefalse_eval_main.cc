// reasoner_truefalse_eval: accuracy of the extractive backend on the BiomixQA true/false
// statements, with evidence taken straight from the embedded KG (no alignment service, no
// retriever): topic entities by longest match of entity names and synonyms, evidence = the
// one-hop triples of the topic entities (triples connecting two topics first), capped.
//
//   reasoner_truefalse_eval [--data_dir=../shared/data] [--max_triples=300]
//                           [--scoring=pairs_first|uniform] [--out_tsv=results.tsv]
//
// Prints coverage, the confusion matrix, accuracy overall and on answered statements, accuracy
// by statement kind and per-statement latency. The statements are public benchmark data, not
// patient data; --out_tsv writes one line per statement for error analysis.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/qa/qa_datasets.h"
#include "services/kgstore/import/embedded_kg.h"
#include "services/reasoner/eval/kg_evidence.h"
#include "services/reasoner/reasoner.h"
#include "services/reasoner/text_util.h"

ABSL_FLAG(std::string, data_dir, "",
          "shared data directory (kg/, vocab/, qa/); default $IBGR_DATA_DIR or ../shared/data");
ABSL_FLAG(std::string, statements, "",
          "true/false CSV (`,text,label`); default <data_dir>/qa/biomixqa-true-false.csv");
ABSL_FLAG(int, max_triples, 300, "evidence triples per statement (cap)");
ABSL_FLAG(std::string, scoring, "pairs_first",
          "evidence scores: pairs_first (topic-topic triples 1, others 0.5) or uniform (all 1)");
ABSL_FLAG(std::string, out_tsv, "", "write one line per statement here (optional)");

namespace ibgraphrag::reasoner::eval {
namespace {

struct Statement {
  std::string id;
  std::string text;
  bool label = false;
};

// The statements through the one question-set loader (common/qa/qa_datasets.h), which checks
// the `,text,label` header and the True/False labels and names the file and line otherwise.
absl::StatusOr<std::vector<Statement>> ReadStatements(const std::string& path) {
  absl::StatusOr<::ibgraphrag::eval::QaDataset> dataset =
      ::ibgraphrag::eval::LoadDataset(path, ::ibgraphrag::eval::DatasetFormat::kTrueFalse);
  if (!dataset.ok()) return dataset.status();
  std::vector<Statement> out;
  out.reserve(dataset->items.size());
  for (::ibgraphrag::eval::QaItem& item : dataset->items) {
    out.push_back({std::move(item.id), std::move(item.question),
                   item.gold_label == ::ibgraphrag::v1::FACT_LABEL_SUPPORTED});
  }
  return out;
}

// The statement templates of BiomixQA, for the per-kind breakdown.
std::string KindOf(const std::string& text) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (absl::StrContains(lower, "disease ontology identifier")) return "ontology identifier";
  if (absl::StrContains(lower, "not associated with gene")) return "disease-gene (negated)";
  if (absl::StrContains(lower, "associates gene")) return "disease-gene";
  if (absl::StrContains(lower, " treats ")) return "drug treats disease";
  if (absl::StrContains(lower, " is not a ")) return "is-a (negated)";
  if (absl::StrContains(lower, " is a ")) return "is-a";
  return "other";
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t index =
      std::min(values.size() - 1, static_cast<size_t>(q * (values.size() - 1) + 0.5));
  return values[index];
}

std::string Percent(int numerator, int denominator) {
  if (denominator == 0) return "n/a";
  return absl::StrFormat("%.1f%%", 100.0 * numerator / denominator);
}

struct Tally {
  int n = 0;
  int correct = 0;
  int answered = 0;
  int answered_correct = 0;
  int covered = 0;
  int covered_two = 0;  // >= 2 topic entities: both sides of the claim can be linked
  // [gold True/False][SUPPORTED/REFUTED/UNKNOWN]
  int confusion[2][3] = {{0, 0, 0}, {0, 0, 0}};

  void Add(bool gold, FactLabel predicted, int topics) {
    ++n;
    covered += topics >= 1 ? 1 : 0;
    covered_two += topics >= 2 ? 1 : 0;
    const int column = predicted == FactLabel::kSupported ? 0
                       : predicted == FactLabel::kRefuted ? 1
                                                          : 2;
    ++confusion[gold ? 0 : 1][column];
    if (column == 2) return;
    ++answered;
    const bool right = (column == 0) == gold;
    correct += right ? 1 : 0;
    answered_correct += right ? 1 : 0;
  }
};

absl::Status Run() {
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (data_dir.empty()) {
    const char* env = std::getenv("IBGR_DATA_DIR");
    data_dir = env != nullptr ? env : "../shared/data";
  }
  std::string statements_path = absl::GetFlag(FLAGS_statements);
  if (statements_path.empty()) statements_path = data_dir + "/qa/biomixqa-true-false.csv";
  const std::string scoring_name = absl::GetFlag(FLAGS_scoring);
  if (scoring_name != "pairs_first" && scoring_name != "uniform") {
    return absl::InvalidArgumentError("--scoring must be pairs_first or uniform");
  }
  const EvidenceScoring scoring =
      scoring_name == "uniform" ? EvidenceScoring::kUniform : EvidenceScoring::kTopicPairsFirst;
  const int max_triples = absl::GetFlag(FLAGS_max_triples);
  if (max_triples < 1 || max_triples > 1000) {
    return absl::InvalidArgumentError("--max_triples must be in 1..1000 (the request limit)");
  }

  auto statements = ReadStatements(statements_path);
  if (!statements.ok()) return statements.status();

  absl::Time start = absl::Now();
  kgstore::import_::ImportOptions import_options;
  import_options.data_dir = data_dir;
  auto kg = kgstore::import_::BuildEmbeddedKg(import_options);
  if (!kg.ok()) return kg.status();
  const double build_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  start = absl::Now();
  const KgEvidenceIndex index(*kg, KgEvidenceOptions());
  const double index_seconds = absl::ToDoubleSeconds(absl::Now() - start);

  ReasonerOptions reasoner_options;
  reasoner_options.log = [](absl::string_view) {};
  auto reasoner = Reasoner::Create(reasoner_options);
  if (!reasoner.ok()) return reasoner.status();

  std::ofstream tsv;
  if (!absl::GetFlag(FLAGS_out_tsv).empty()) {
    tsv.open(absl::GetFlag(FLAGS_out_tsv));
    if (!tsv) return absl::InvalidArgumentError("cannot write --out_tsv");
    tsv << "id\tkind\tgold\tpredicted\ttopics\tevidence\tevidence_used\ttext\ttopic_names\n";
  }

  Tally total;
  std::map<std::string, Tally> by_kind;
  std::vector<double> total_ms, reason_ms, evidence_sizes;
  for (const Statement& s : *statements) {
    const absl::Time t0 = absl::Now();
    const std::vector<TopicMatch> topics = index.FindTopicEntities(s.text);
    std::vector<kgstore::EntityId> topic_ids;
    for (const TopicMatch& m : topics) topic_ids.push_back(m.entity);
    ReasonRequest request;
    request.task = Task::kFactVerification;
    request.question = s.text;
    request.evidence = index.Evidence(topic_ids, max_triples, scoring);
    for (kgstore::EntityId id : topic_ids) request.topic_entities.push_back(index.Ref(id));
    if (request.topic_entities.size() > 256) request.topic_entities.resize(256);
    const absl::Time t1 = absl::Now();
    auto result = (*reasoner)->Reason(request, absl::InfiniteFuture());
    const absl::Time t2 = absl::Now();
    if (!result.ok()) {
      return absl::Status(result.status().code(),
                          absl::StrCat("statement ", s.id, ": ", result.status().message()));
    }
    total_ms.push_back(absl::ToDoubleMilliseconds(t2 - t0));
    reason_ms.push_back(absl::ToDoubleMilliseconds(t2 - t1));
    evidence_sizes.push_back(static_cast<double>(request.evidence.size()));
    const std::string kind = KindOf(s.text);
    const int num_topics = static_cast<int>(topics.size());
    total.Add(s.label, result->fact_label, num_topics);
    by_kind[kind].Add(s.label, result->fact_label, num_topics);
    if (tsv.is_open()) {
      std::vector<std::string> names;
      for (const TopicMatch& m : topics) {
        names.push_back(absl::StrCat(kg->entities[m.entity].external_id, "=", m.matched));
      }
      tsv << s.id << '\t' << kind << '\t' << (s.label ? "True" : "False") << '\t'
          << FactLabelName(result->fact_label) << '\t' << topics.size() << '\t'
          << request.evidence.size() << '\t' << result->evidence_used.size() << '\t' << s.text
          << '\t' << absl::StrJoin(names, "; ") << '\n';
    }
  }

  const int n = total.n;
  int gold_true = 0;
  int negation_baseline = 0;  // text only: False iff the statement says "not"
  for (const Statement& s : *statements) {
    gold_true += s.label ? 1 : 0;
    const std::vector<std::string> words = Words(s.text);
    const bool negated = std::find(words.begin(), words.end(), "not") != words.end();
    negation_baseline += negated != s.label ? 1 : 0;
  }
  std::printf("BiomixQA true/false: extractive backend (no LLM), evidence = 1-hop KG triples of\n");
  std::printf("topic entities found by name/synonym longest match\n");
  std::printf("statements           %d (True %d, False %d) from %s\n", n, gold_true, n - gold_true,
              statements_path.c_str());
  std::printf(
      "KG                   %zu entities, %zu triples, %zu name keys; built in %.2f s, "
      "indexed in %.2f s\n",
      kg->entities.size(), kg->triples.size(), index.num_keys(), build_seconds, index_seconds);
  std::printf("evidence             cap %d triples, scoring %s; median %.0f triples/statement\n",
              max_triples, scoring_name.c_str(), Percentile(evidence_sizes, 0.5));
  std::printf("coverage             %d/%d = %s have >= 1 topic entity\n", total.covered, n,
              Percent(total.covered, n).c_str());
  std::printf(
      "                     %d/%d = %s have >= 2 (names or synonyms matched, not "
      "necessarily the intended ones)\n",
      total.covered_two, n, Percent(total.covered_two, n).c_str());
  std::printf("answered             %d/%d = %s (SUPPORTED or REFUTED; the rest UNKNOWN)\n",
              total.answered, n, Percent(total.answered, n).c_str());
  std::printf("accuracy overall     %d/%d = %s (UNKNOWN counts as wrong)\n", total.correct, n,
              Percent(total.correct, n).c_str());
  std::printf("accuracy answered    %d/%d = %s\n", total.answered_correct, total.answered,
              Percent(total.answered_correct, total.answered).c_str());
  std::printf("majority baseline    %d/%d = %s (always True)\n", gold_true, n,
              Percent(gold_true, n).c_str());
  std::printf(
      "negation baseline    %d/%d = %s (text only: False iff the statement says "
      "\"not\")\n",
      negation_baseline, n, Percent(negation_baseline, n).c_str());
  std::printf("\nconfusion matrix     SUPPORTED  REFUTED  UNKNOWN\n");
  std::printf("  gold True          %9d  %7d  %7d\n", total.confusion[0][0], total.confusion[0][1],
              total.confusion[0][2]);
  std::printf("  gold False         %9d  %7d  %7d\n", total.confusion[1][0], total.confusion[1][1],
              total.confusion[1][2]);
  std::printf("\nby kind                    n  covered  answered  acc overall  acc answered\n");
  for (const auto& [kind, t] : by_kind) {
    std::printf("  %-22s %4d  %7s  %8s  %11s  %12s\n", kind.c_str(), t.n,
                Percent(t.covered, t.n).c_str(), Percent(t.answered, t.n).c_str(),
                Percent(t.correct, t.n).c_str(), Percent(t.answered_correct, t.answered).c_str());
  }
  std::printf("\nlatency per statement (match + evidence + reason): median %.3f ms, p90 %.3f ms\n",
              Percentile(total_ms, 0.5), Percentile(total_ms, 0.9));
  std::printf("reasoner alone (validate + extractive):            median %.3f ms, p90 %.3f ms\n",
              Percentile(reason_ms, 0.5), Percentile(reason_ms, 0.9));
  return absl::OkStatus();
}

}  // namespace
}  // namespace ibgraphrag::reasoner::eval

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Accuracy of the extractive reasoner on the BiomixQA true/false statements.");
  absl::ParseCommandLine(argc, argv);
  absl::Status status = ibgraphrag::reasoner::eval::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "reasoner_truefalse_eval: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
