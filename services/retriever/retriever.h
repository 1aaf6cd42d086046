// Retriever: the IBRP triple retriever's core (plain C++, no gRPC). For a question and its topic
// entities it extracts the candidate subgraph (SubgraphSource), computes DDE features, scores
// every candidate (trained scorer, shortest-path prior or cosine baseline), keeps the top K and
// ranks reasoning paths from the topic entities over them.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/question_intent.h"
#include "common/servable_holder.h"
#include "services/retriever/candidate_set.h"
#include "services/retriever/dde.h"
#include "services/retriever/fused_scorer.h"
#include "services/retriever/model_bundle.h"
#include "services/retriever/prior_features.h"
#include "services/retriever/scoring_backend.h"
#include "services/retriever/subgraph_source.h"
#include "services/retriever/text_embedder.h"

namespace ibgraphrag::retriever {

// Request limits (retriever.proto documents the same numbers).
inline constexpr size_t kMaxQuestionBytes = 16 * 1024;
inline constexpr int kMaxTopicEntities = 100;
inline constexpr int kDefaultTopK = 100;
inline constexpr int kMaxTopK = 1000;
inline constexpr int kDefaultHops = 2;
inline constexpr int kMaxHops = 4;
// max_candidates 0 means the served model's trained cap (TrainedCandidateCap); this without a
// model (SHORTEST_PATH).
inline constexpr int kDefaultMaxCandidates = kDefaultTrainedCandidateCap;
inline constexpr int kMaxCandidates = 100000;
inline constexpr int kDefaultMaxPaths = 10;
inline constexpr int kMaxPathsLimit = 100;
inline constexpr int kMaxScoreTriples = 100000;

// SHORTEST_PATH score of a triple of the relation the question asks about that touches a topic
// entity (below the topic-topic paths' 1 - 0.01 * length, above a plain hop-1 triple's 0.5).
inline constexpr float kIntentAnswerPrior = 0.75f;

enum class ScoringMode {
  kIbrp,          // trained scorer
  kShortestPath,  // prior only: triples on shortest topic-topic paths first, then the intent's
                  // answer triples (kIntentAnswerPrior), then by hop
  kCosine,        // untrained: cosine(question, head + relation + tail text)
};
const char* ScoringModeName(ScoringMode mode);

// The evidence strength that orders the intent's answer triples among themselves:
// ½·min(independent sources, 3)/3 + ½·source score (0 when none), sources counted by lineage
// (common/source_lineage.h: a compilation and the file it copies are one source).
double AnswerEvidenceStrength(const TripleSources& sources, absl::string_view relation);

// The evidence's candidates: the best `k` indices of `scores` (ties: the lower index), best first,
// of which the best min(k / 2, answers scored above 0) of `answers` (the intent's answer
// triples) are always some. The scorer decides where the asked relation stands among the other
// triples, but it was never trained on every relation at every end: for "What class of drug is
// lisinopril?" it put Lisinopril's 223 side-effect triples above its eight drug-class triples,
// and the top 100 held no class. The answers let in this way replace the lowest-scored other
// triples and keep their own scores, so they come last in the evidence.
std::vector<uint32_t> TopWithAnswerShare(absl::Span<const float> scores,
                                         absl::Span<const uint32_t> answers, size_t k);

// A loaded model version ready to score: manifest, tables and, per scorer variant, the fused CPU
// loop over its BLAS-computed projections, or a device backend's scorer (scoring_backend.h).
class RetrieverModel {
 public:
  struct Options {
    // "auto", "cpu" or "cuda:N" (ResolveScoringDevice): "cuda" needs `backend`.
    std::string device = "auto";
    // The device backend the binary links (LibTorch in retriever_torch); null: CPU only, the
    // fused loop (no LibTorch in the process).
    const ScoringBackend* backend = nullptr;
    // Score with the backend's ops even on CPU (the fused loop is used otherwise on CPU; on a
    // GPU the backend always scores). FAILED_PRECONDITION without a backend.
    bool force_backend_scoring = false;
    // Artifact base holding `encoder/<version>/`, where a trained encoder the manifest names is
    // looked up when no embedder is passed; empty: the base the model directory lives in.
    std::string encoder_base_path;
    // The scorer variant requests naming none get (the server's --scorer); unset = the
    // manifest's default. A version without it fails to load (FAILED_PRECONDITION naming it).
    std::optional<ScorerVariant> default_variant;
  };
  // Loads `dir` (LoadRetrieverVersion) and precomputes projections. FAILED_PRECONDITION when
  // `embedder` is not the encoder the artifacts were built with. An empty `embedder` (no
  // `embed` function) opens the encoder named by the manifest by its id (EmbedderForId,
  // alignment_embedder.h).
  static absl::StatusOr<std::shared_ptr<const RetrieverModel>> Load(const std::string& dir,
                                                                    const Options& options,
                                                                    TextEmbedder embedder);
  // From parts already in memory (tests, the trainer's dev evaluation).
  static absl::StatusOr<std::shared_ptr<const RetrieverModel>> FromParts(
      LoadedRetrieverVersion version, const Options& options, TextEmbedder embedder);

  const RetrieverManifest& manifest() const { return version_.manifest; }
  std::string version() const { return std::to_string(version_.manifest.version); }
  const TextEmbedder& embedder() const { return embedder_; }
  const EmbeddingTable& entities() const { return *version_.entities; }
  const EmbeddingTable& relations() const { return *version_.relations; }
  // The device it scores on ("cpu", "cuda:0").
  const std::string& device() const { return device_; }
  // The variant requests naming none are scored with, and every variant held (default first).
  ScorerVariant default_variant() const { return scorers_.front().variant; }
  std::vector<ScorerVariant> variants() const;
  // `requested`, or the default when unset; FAILED_PRECONDITION naming the variant (and the
  // ones held) when this version lacks it.
  absl::StatusOr<ScorerVariant> ResolveVariant(std::optional<ScorerVariant> requested) const;
  // Dims of a variant this model holds (ResolveVariant first).
  const ScorerConfig& scorer_config(ScorerVariant variant) const;
  // The candidate cap the scorers were trained with (TrainedCandidateCap, read at load).
  int candidate_cap() const { return candidate_cap_; }
  // The prior pruning the scorers were trained with (TrainedMaxScored, read at load).
  int max_scored() const { return max_scored_; }
  // Whether the scorers were trained on ontology-expanded candidate sets
  // (TrainedOntologyExpansion, read at load): serving expands only then.
  bool ontology_expansion() const { return ontology_expansion_; }
  // Scores with the fused loop on CPU, the backend on a GPU (or when forced): the default
  // variant, or `variant` (which must be held: ResolveVariant).
  absl::Status Score(const CandidateBatch& batch, absl::Span<float> out) const {
    return Score(default_variant(), batch, out);
  }
  absl::Status Score(ScorerVariant variant, const CandidateBatch& batch,
                     absl::Span<float> out) const;

 private:
  // One trained scorer: the fused CPU loop over its projections, or the backend's on a device.
  struct VariantScorer {
    ScorerVariant variant = ScorerVariant::kResidual;
    ScorerConfig config;
    std::unique_ptr<FusedScorer> fused;    // when scoring on CPU with the fused loop
    std::unique_ptr<DeviceScorer> device;  // otherwise
  };
  RetrieverModel() = default;
  absl::Status AddScorer(ScorerVariant variant, const ScorerParams& params, const Options& options);
  const VariantScorer* FindScorer(ScorerVariant variant) const;

  LoadedRetrieverVersion version_;
  TextEmbedder embedder_;
  std::vector<VariantScorer> scorers_;  // the default first
  std::string device_ = "cpu";
  int candidate_cap_ = 0;
  int max_scored_ = 0;
  bool ontology_expansion_ = false;
};

// The hot-swappable model being served (common/servable_holder.h).
using ModelHolder = common::ServableHolder<const RetrieverModel>;

struct RetrieveQuery {
  // UTF-8, at most kMaxQuestionBytes. Patient data: never logged.
  std::string question;
  // Topic entities; 1..kMaxTopicEntities over both lists.
  std::vector<uint32_t> topic_ids;
  std::vector<std::string> topic_external_ids;
  int top_k = 0;           // 1..1000; 0 = 100
  int max_hops = 0;        // 1..4; 0 = 2
  int max_candidates = 0;  // 1..100,000; 0 = the model's trained cap (kDefaultMaxCandidates)
  int max_paths = 0;       // 1..100; 0 = 10
  ScoringMode mode = ScoringMode::kIbrp;
  // IBRP: the scorer variant; unset = the model's default.
  std::optional<ScorerVariant> scorer_variant;
  // Expand the topic entities along is_a (ontology_expansion.h); unset = the server's setting
  // (Retriever::Options::ontology.enabled and the served model's manifest). It can only turn
  // expansion off: true never expands for a model trained without it.
  std::optional<bool> ontology_expansion;
  // The question's intent (candidate set step 1b and the scorer's intent features); unset = read
  // from `question` (common::ReadQuestionIntent), so training, evaluation and serving read a
  // question alike. An empty intent turns the intent off (the topic neighbourhood alone).
  std::optional<common::QuestionIntent> intent;
  absl::Time deadline = absl::InfiniteFuture();
};

struct ScoredTriple {
  uint32_t head = 0;
  uint32_t relation = 0;
  uint32_t tail = 0;
  float score = 0.0f;
  uint32_t hop = 0;  // 1 = touches a topic entity
};

struct ScoredPath {
  std::vector<uint32_t> triple_indices;  // into RetrieveResult::triples
  std::vector<bool> reversed;            // step walked tail -> head
  float score = 0.0f;                    // geometric mean of the step scores
  std::string text;                      // "a -[rel]-> b <-[rel]- c"
};

struct RetrieveResult {
  std::vector<ScoredTriple> triples;  // best first
  // Parallel to `triples`: the KG sources (with licences), score and note of each triple.
  std::vector<TripleSources> triple_sources;
  std::vector<ScoredPath> paths;                          // best first
  absl::flat_hash_map<uint32_t, EntityInfo> entities;     // every entity of `triples`
  absl::flat_hash_map<uint32_t, RelationInfo> relations;  // every relation of `triples`
  std::vector<uint32_t> topic_ids;                        // resolved topic entities
  int64_t subgraph_triples = 0;
  int64_t subgraph_entities = 0;
  bool subgraph_truncated = false;
  // Candidates whose ids post-date the embeddings (ingested after training); scored 0.
  int64_t unembedded_candidates = 0;
  std::vector<std::pair<std::string, double>> timings_ms;  // stage -> wall ms
  std::string model_version;
  std::string kg_version;
  ScoringMode mode = ScoringMode::kIbrp;
  // The variant that scored (IBRP only).
  std::optional<ScorerVariant> scorer_variant;
  // The candidate cap applied (the query's, or the model's trained cap).
  int max_candidates = 0;
  // Subtypes and parents of the topic entities whose facts joined the candidates (0 when
  // ontology expansion is off or the KG has no is_a relation).
  int64_t ontology_anchors = 0;
  // The intent the candidates and features followed (empty: none read, or turned off), and the
  // candidates it added and marked (CandidateSet::intent_added / intent_triples).
  common::QuestionIntent intent;
  int64_t intent_added = 0;
  int64_t intent_triples = 0;
  // Optional steps that failed and were skipped rather than failing the retrieval, each
  // "<step>: <status>" (steps: "ontology expansion", "intent candidates" (its call or the
  // topic-link probe failed, or topic pairs were left unprobed: CandidateSet::intent_skipped),
  // "provenance"). Each
  // also shows in `timings_ms` as "<step>_skipped" (ontology_skipped, intent_skipped,
  // provenance_skipped), which the
  // RetrieveResponse carries.
  std::vector<std::string> skipped_steps;
};

struct ScoreTriplesQuery {
  std::string question;
  std::vector<uint32_t> topic_ids;                // 1..100
  std::vector<uint32_t> heads, relations, tails;  // 1..100,000 triples
};

class Retriever {
 public:
  struct Options {
    // Cap on the time given to the subgraph call (the caller's deadline applies as well).
    absl::Duration subgraph_budget = absl::Seconds(5);
    // Edges kgstore follows per node; 0 = its automatic spread.
    int max_fanout_per_node = 0;
    // IBRP scores only the best this many candidates by the shortest-path prior, or top_k if
    // larger (CandidateSetOptions::max_scored; 0 = all). -1 (default) = the value the served
    // model was trained with (TrainedMaxScored: the manifest's record, 0 for models trained
    // before pruning existed), so serving prunes exactly as training did. SHORTEST_PATH and
    // COSINE rank every candidate.
    int max_scored_candidates = -1;
    // Ontology expansion of the topic entities along is_a (ontology_expansion.h). With a model
    // loaded, its manifest decides (TrainedOntologyExpansion: train/serve parity) and
    // `ontology.enabled` can only turn expansion off (false: a logged train/serve mismatch, for
    // measuring the effect); without one (SHORTEST_PATH only) `ontology.enabled` decides.
    OntologyOptions ontology;
  };

  // Serves whatever model `models` holds (a ServableManager swaps new versions into it; requests
  // in flight finish on the model they started with). While it holds none, only SHORTEST_PATH
  // mode works; IBRP and COSINE get FAILED_PRECONDITION with `model_status()` as the reason.
  Retriever(const Options& options, std::shared_ptr<SubgraphSource> source,
            std::shared_ptr<const ModelHolder> models, std::function<absl::Status()> model_status);
  // A fixed model (may be null, with `model_error` as the reason).
  Retriever(const Options& options, std::shared_ptr<SubgraphSource> source,
            std::shared_ptr<const RetrieverModel> model, std::string model_error = "");

  // The model requests are scored with now (null when none).
  std::shared_ptr<const RetrieverModel> model() const { return models_->Get(); }

  // INVALID_ARGUMENT naming the field for bad limits or no topic entities; NOT_FOUND listing
  // unknown topic entities; UNAVAILABLE when the KG cannot be reached before the deadline.
  absl::StatusOr<RetrieveResult> Retrieve(const RetrieveQuery& query) const;

  // Scores caller-given triples with the trained model (scores[i] for triple i).
  absl::StatusOr<std::vector<float>> ScoreTriples(const ScoreTriplesQuery& query) const;
  // The same with a model the caller already pinned (FAILED_PRECONDITION when null), so one
  // request embeds and scores with one model version even across a reload.
  absl::StatusOr<std::vector<float>> ScoreTriples(
      const ScoreTriplesQuery& query, const std::shared_ptr<const RetrieverModel>& model) const;

 private:
  // Why no model is loaded, for error messages.
  std::string ModelError() const;

  const Options options_;
  std::shared_ptr<SubgraphSource> source_;
  std::shared_ptr<const ModelHolder> models_;
  std::function<absl::Status()> model_status_;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_H_
