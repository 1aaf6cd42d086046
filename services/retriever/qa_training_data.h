// Retriever training examples from the real QA sets (`<data>/qa`, read by the one loader,
// common/qa/qa_datasets.h), built the way the gateway sees each question at serving time:
//
//   text      = common::AlignmentText(question, options)        (common/topic_rule.h)
//   kept      = the alignment service's Aligner over the base's bundle, default options (as the
//               gateway sends them: nothing set), in kept order (C descending); with
//               TrainingDataOptions::alignment_setup (retriever_train --alignment_config, the
//               alignment service's own config file) its MSCA defaults, LLM and LLM step, so
//               the topics trained on are the topics served
//   topics    = common::TopicEntityIds(kept ids)                 question + option entities
//   answer    = multiple choice: the kept entity whose mention lies inside the gold option's
//               line of `text`; when several do, the highest-scoring (first in kept order)
//               true/false claims (only TRUE claims are used; a claim has no options): the kept
//               entity mentioned LAST in the claim, which is the object of the claim's
//               "subject relation object" form ("metformin treats type 2 diabetes",
//               "Juvenile polyposis syndrome associates Gene SMAD4"); its KG name is the answer
//               text, and the other kept entities are the question entities
//   question_entities = kept entities whose mention lies inside the question part of `text`
//               (never the answer entity)
//   evidence  = triples on shortest paths (<= max_hops, undirected) from the question entities
//               to the answer entity, as the templates do
//
// Dropped questions are counted per set and reason in QuestionSet::skipped:
//   "no_entity_answer"   yes/no/maybe sets (PubMedQA): the answer is no entity (whole set)
//   "false_claim"        false true/false claims (their last entity is not an answer)
//   "align_refused"      the aligner refused the text (too long, not UTF-8)
//   "answer_unaligned"   no kept entity inside the gold option (or the claim has < 2 entities)
//   "no_question_entity" no kept entity in the question part besides the answer
//   "no_path"            no path of <= max_hops edges joins them
// Kept questions go to train / validation / test by their question text (common/qa/qa_split.h),
// the same rule `ibgr eval --qa_split` applies.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_QA_TRAINING_DATA_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_QA_TRAINING_DATA_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/qa/qa_datasets.h"
#include "services/alignment/aligner.h"
#include "services/alignment/alignment_setup.h"
#include "services/kgstore/kg_store.h"
#include "services/retriever/training_data.h"

namespace ibgraphrag::retriever {

// One kept entity of an aligned text.
struct AlignedEntity {
  uint32_t kg_id = 0;
  std::string external_id;  // checked against the KG (bundle and snapshot must agree)
  std::string name;         // the entity's name
  // Byte span [begin, end) of its mention in the aligned text.
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Aligns a text and returns the kept entities in kept order; INVALID_ARGUMENT for a text the
// aligner refuses. The seam between QA example building and the alignment service's core.
using AlignTextFn =
    std::function<absl::StatusOr<std::vector<AlignedEntity>>(absl::string_view text)>;

// Aligns with `aligner` and its default MSCA options (what the service applies to a request that
// sets none, as the gateway's default requests do).
// How often the aligner's LLM step failed (the alignment came back degraded), over all texts.
struct AlignmentDegradations {
  std::atomic<int64_t> texts{0};
  std::atomic<int64_t> degraded{0};
};
// `degradations` (optional) counts the texts aligned and those whose LLM step failed.
AlignTextFn AlignWithAligner(std::shared_ptr<const alignment::Aligner> aligner,
                             std::shared_ptr<AlignmentDegradations> degradations = nullptr);

// The largest share of texts whose alignment LLM step may fail before training refuses to go
// on: beyond it the model would be trained on topics the served alignment does not give.
inline constexpr double kMaxDegradedAlignmentShare = 0.05;

struct QaExampleOptions {
  // The folder of QA files (<data>/qa).
  std::string qa_dir;
  // Set names (file stems: "medmcqa-dev", "mmlu-anatomy-test", "biomixqa-true-false"); empty =
  // every file in qa_dir. INVALID_ARGUMENT naming a set that is not there.
  std::vector<std::string> sets;
  // Longest supervision path in edges, 1..4; shortest paths kept per question.
  int max_hops = 2;
  int max_paths_per_question = 50;
  // Seed of the train / validation / test split (common/qa/qa_split.h).
  uint64_t split_seed = eval::kDefaultSplitSeed;
  // Threads aligning questions and finding paths (the results do not depend on it).
  int threads = 2;
};

// The example of one question, or why it was skipped (one of the reasons above). Exposed for
// tests.
struct QaExampleOutcome {
  GeneratedQuestion question;  // valid when skip_reason is empty
  std::string skip_reason;
};
absl::StatusOr<QaExampleOutcome> ExampleFromQaItem(const kgstore::KgStore& store,
                                                   const AlignTextFn& align,
                                                   const eval::QaItem& item,
                                                   const std::string& set_name,
                                                   const QaExampleOptions& options);

// Every usable question of the chosen sets, split, with skip counts (source "qa/<set>"); the hash
// is set. FAILED_PRECONDITION when an aligned entity's external id differs from the KG's (the
// bundle was built from another KG).
absl::StatusOr<QuestionSet> BuildQaExamples(const kgstore::KgStore& store, const AlignTextFn& align,
                                            const QaExampleOptions& options);

// Everything retriever_train trains and evaluates on: templates and real QA examples, one
// QuestionSet with one hash, split by one seed.
struct TrainingDataOptions {
  // Templated questions (training_data.h).
  bool templates = true;
  QuestionOptions template_options;
  // Real QA examples (qa_options.qa_dir: the folder). max_hops, max_paths_per_question and
  // split_seed are taken from template_options so both sources share them.
  bool qa = true;
  QaExampleOptions qa_options;
  // Artifact base whose newest alignment bundle (and its encoder) aligns the QA questions.
  std::string alignment_base;
  // The alignment service's settings (its --config, alignment_setup.h): encoder, MSCA defaults,
  // LLM and LLM step. Unset: the bundle's encoder, MscaOptions defaults, no LLM, as a service
  // started without --config.
  std::optional<alignment::AlignmentSetup> alignment_setup;
  // Receives one line per source (counts per part, skips) and the build times. May be empty.
  std::function<void(const std::string&)> log;
};

// The Aligner real QA questions are aligned with: the newest bundle under alignment_base, with
// alignment_setup's encoder, MSCA defaults, LLM and LLM step when set (the alignment service
// opens its bundle with the same settings from the same config file).
absl::StatusOr<std::unique_ptr<alignment::Aligner>> OpenTrainingAligner(
    const TrainingDataOptions& options);

// INVALID_ARGUMENT when neither source is on; errors of either builder, and of opening the
// alignment bundle (NOT_FOUND when the base has none) when QA examples are asked for.
absl::StatusOr<QuestionSet> BuildTrainingData(const kgstore::KgStore& store,
                                              const TrainingDataOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_QA_TRAINING_DATA_H_
