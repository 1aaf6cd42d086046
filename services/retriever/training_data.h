// Training questions for the retriever, with known answers and shortest-path supervision, split
// into train / validation / test.
//
// Sources (GeneratedQuestion::source):
//   "template/drug_treats"   "Which drug treats {disease}?"             answers: drugs treating it
//   "template/shared_gene"   "Which gene is associated with both {d1} and {d2}?"
//   "template/phenotypes"    "Which phenotypes does {disease} present with?"
//   "template/open_<kind>"   open questions whose answers are NOT topics ("What drugs treat
//                            {disease}?", "What are the side effects of {drug}?", ...; one per
//                            relation kind, varied wording, hubs included): options empty, topics
//                            = the asked entity, supervision = every direct triple to an answer
//   "qa/<set>"               real questions (qa_training_data.h)
// Supervision ("evidence") = the triples on shortest paths between the question entities and the
// answer entities (KgStore::ShortestPaths, undirected, at most max_hops edges).
//
// Templates follow the serving topic rule (common/topic_rule.h): a template question gets
// options = its answers plus `distractors` entities of the first answer's type (preferably from
// the question entities' 2-hop neighbourhood, so they are not trivially far; deterministic by
// seed), shuffled, and topics = question entities + option entities, as the gateway would send
// for a multiple-choice question whose options are all entities.
//
// Splits (common/qa/qa_split.h, the one rule): real questions by question text; templates BY
// ENTITY: each disease falls in a part by the hash of its external id and the split seed, and a
// question goes to the most held-out part among its question entities (test > validation >
// train), so no validation or test disease is ever a question entity of a train question.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TRAINING_DATA_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TRAINING_DATA_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/qa/qa_split.h"
#include "services/kgstore/kg_store.h"

namespace ibgraphrag::retriever {

struct GeneratedQuestion {
  std::string text;
  // Answer options in the order shown; empty for claims.
  std::vector<std::string> options;
  // The gold answer as text: the gold option's text (QA sets), the answer entity's name (claims)
  // or the answer entities' names joined by "; " (templates).
  std::string answer_text;
  // "template/drug_treats", "qa/medmcqa-dev", ... (per-source metrics and counts).
  std::string source;
  // Entities found in the question text itself (templates: the diseases asked about).
  std::vector<uint32_t> question_entities;
  // Topic entity ids for retrieval: question + option entities (common::TopicEntityIds).
  std::vector<uint32_t> topics;
  // Answer entity ids.
  std::vector<uint32_t> answers;
  // (head, relation, tail) on shortest question-entity -> answer paths, sorted.
  std::vector<std::array<uint32_t, 3>> evidence;
  // The expert's explanation where the QA set has one (MedMCQA `exp`), else empty, and the KG
  // entities the alignment service keeps in it. The explanation can be part of the IB target
  // text y (TrainerOptions::ib_target_text); its entities judge evidence grounding
  // (evaluation.h), never the supervision.
  std::string explanation;
  std::vector<uint32_t> explanation_entities;
};

// Questions of one source in each part.
struct SplitCounts {
  int train = 0;
  int validation = 0;
  int test = 0;
};

struct QuestionSet {
  std::vector<GeneratedQuestion> train;       // fitted on
  std::vector<GeneratedQuestion> validation;  // epochs and hyper-parameters chosen on
  std::vector<GeneratedQuestion> test;        // reported on, never looked at in training
  // SHA-256 over every question (text, options, answer text, source, entities, evidence) and its
  // part: identifies the data a model was trained on (recorded in the manifest).
  std::string hash;
  // Per source: questions in each part.
  std::map<std::string, SplitCounts> split_counts;
  // Per source and reason ("qa/medmcqa-dev/answer_unaligned"): questions dropped.
  std::map<std::string, int> skipped;

  // The questions of `part` (kAll: every part, train first).
  std::vector<GeneratedQuestion> Part(eval::QaSplit part) const;
  // "questions/<source>/<part>" and "skipped/<source>/<reason>" as a flat map (manifest metrics,
  // JSON).
  std::map<std::string, double> CountsMap() const;
};

struct QuestionOptions {
  // Questions kept per template (before the split), deterministic sample; 0 = all.
  int max_per_template = 1500;
  // Questions with more answers than this are skipped (too vague to supervise); multiple-choice
  // templates only: open templates keep hubs (their answers are capped, not skipped).
  int max_answers = 20;
  // Open questions kept per open template (the hubs with most answers first for a tenth of it,
  // the rest sampled); 0 = all.
  int max_per_open_template = 300;
  // Distractor options added to each template question (0 = options are the answers only).
  int distractors = 3;
  // Longest supervision path in edges (the retrieval hops), 1..4.
  int max_hops = 2;
  // Shortest paths kept per question as evidence.
  int max_paths_per_question = 50;
  // Seed of the per-template sampling and of the distractors.
  uint64_t seed = 1;
  // Seed of the train / validation / test split (common/qa/qa_split.h).
  uint64_t split_seed = eval::kDefaultSplitSeed;
};

// Templated questions. FAILED_PRECONDITION when the snapshot lacks the relations the templates
// need; INVALID_ARGUMENT naming the field for options out of range.
absl::StatusOr<QuestionSet> GenerateQuestions(const kgstore::KgStore& store,
                                              const QuestionOptions& options);

// Adds `question` to part `part` (not kAll) of `set`, counted under its source. The hash is not
// updated: call HashQuestionSet once the set is complete.
void AddQuestion(eval::QaSplit part, GeneratedQuestion question, QuestionSet* set);

// Appends every question, count and skip of `from` to `to` (parts stay parts); rehashes `to`.
void MergeQuestionSets(QuestionSet from, QuestionSet* to);

// The SHA-256 hex digest described at QuestionSet::hash.
std::string HashQuestionSet(const QuestionSet& set);

// INVALID_ARGUMENT naming the field for a supervision path length outside 1..4 or a path count
// outside 1..kgstore::kMaxPaths (templates and QA examples take the same two settings).
absl::Status ValidateSupervision(int max_hops, int max_paths_per_question);

// Triples on shortest paths (undirected, <= max_hops edges, at most max_paths paths) between
// `sources` and `targets`, sorted and unique; empty when none connects.
absl::StatusOr<std::vector<std::array<uint32_t, 3>>> ShortestPathEvidence(
    const kgstore::KgStore& store, const std::vector<uint32_t>& sources,
    const std::vector<uint32_t>& targets, int max_hops, int max_paths);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TRAINING_DATA_H_
