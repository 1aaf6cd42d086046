// MSCA (Medical Semantic Consistency Alignment) over a loaded bundle: mentions -> FAISS
// candidates -> enriched-entity scores S, R, C -> kept / rejected, with an optional LLM
// selection step per mention (llm_selection.h). Plain C++: the gRPC service and the CLI both
// call it.
//
//   S(e, Q) = cos(v_e, v_Q)        v_e: enriched entity text (precomputed in the bundle)
//   R(e)    = mean over the OTHER candidates e' of cos(v_e, v_e')   (0 when e is alone)
//   C(e)    = (1 - lambda) * S(e, Q) + lambda * R(e);  kept when C(e) >= tau
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNER_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "services/alignment/bundle.h"
#include "services/alignment/mention_extractor.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::common {
class OpenAiClient;
}  // namespace ibgraphrag::common

namespace ibgraphrag::alignment {

// Limits of the API (alignment.proto documents the same numbers).
inline constexpr size_t kMaxTextBytes = 16 * 1024;
inline constexpr int kMaxTopK = 1000;

// Where MSCA's LLM selection step runs (llm_selection.h, docs/alignment.md "LLM selection").
enum class LlmStep {
  // The paper's order (§3.1, Figure 6): per mention, the LLM picks one of its top-K candidates
  // (or none) given the question; S, R and C are then formed over the picks and tau filters them.
  kBeforeFilter,
  // The suite's earlier order: after the tau split, per mention, the LLM picks one of its
  // rejected candidates, which is kept without passing the filter.
  kRescueRejected,
};

// "before_filter", "rescue_rejected".
absl::string_view LlmStepName(LlmStep step);
// Inverse of LlmStepName; INVALID_ARGUMENT naming `field` and the accepted values otherwise.
absl::StatusOr<LlmStep> ParseLlmStep(absl::string_view name, absl::string_view field);

// Per-request MSCA settings.
struct MscaOptions {
  // Weight of relatedness R in C; the paper's default. [0, 1].
  float lambda = 0.4f;
  // Keep threshold on C. [0, 1]. Fitted on validation questions with gold entities
  // (alignment_msca_fit, docs/alignment.md "Constants fitted on validation"); the paper's is 0.6.
  float tau = 0.5f;
  // FAISS candidates per mention. 1..1000.
  int top_k = 10;
  // false: the paper's ablation, plain top-1 linking per mention, nothing filtered.
  bool msca_enabled = true;
  // The LLM selection step (llm_selection.h), per mention; 0 disables it. Before the filter: a
  // mention whose candidates include fewer than this many entities the dictionary names has the
  // LLM choose among its top-K candidates. Rescue: a mention with fewer than this many kept
  // entities has the LLM choose among its rejected ones. Without an LLM configured the step
  // does not exist (no call, no degradation).
  int llm_choice_below = 5;
  LlmStep llm_step = LlmStep::kBeforeFilter;
  // Also ask the LLM for mentions and merge them with dictionary mentions.
  bool llm_mentions = false;
  // Put S and R on the bundle's calibrated [0, 1] evidence scale before forming C (see
  // ScoreCalibration in bundle.h); false uses raw cosines, as the paper does with BioWordVec.
  bool calibrated = true;
};

// INVALID_ARGUMENT naming the field when text is empty, > 16 KiB or not UTF-8.
absl::Status ValidateText(absl::string_view text, absl::string_view field = "text");
// INVALID_ARGUMENT naming the field for lambda/tau outside [0, 1] or top_k outside 1..1000.
absl::Status ValidateMscaOptions(const MscaOptions& options);

struct StageTiming {
  std::string stage;
  double duration_ms = 0;
};

struct Degradation {
  std::string component;
  std::string reason;
};

struct LinkedCandidate {
  uint32_t entry = 0;  // index into the bundle lexicon
  uint32_t kg_id = 0;
  std::string external_id;
  std::string name;
  std::string type;
  // Cosine between the mention (or the expansion of an abbreviation) and matched_name.
  float similarity = 0;
  std::string matched_name;
  // The mention matched this entity's name in the dictionary.
  bool dictionary_match = false;
};

struct MentionLink {
  Mention mention;
  std::vector<LinkedCandidate> candidates;  // best first
};

struct ScoredEntity {
  LinkedCandidate candidate;
  // Index into AlignResult::mentions of the mention it came from (the best-linked one).
  int mention_index = 0;
  // The S and R that C is formed from: calibrated when AlignResult::effective.calibrated and
  // the bundle has a calibration, else the raw cosines.
  float question_similarity = 0;  // S
  float relatedness = 0;          // R
  float consistency = 0;          // C = (1 - lambda) S + lambda R
  // The paper's raw cosines: cos(v_e, v_Q) and the mean cosine to the other candidates.
  float raw_question_similarity = 0;
  float raw_relatedness = 0;
  // Calibrated scores only: every mention that proposed this entity names another entity
  // exactly (dictionary), so S was scaled by 1 - dictionary_evidence (ScoreCalibration).
  bool lookalike = false;
  // Chosen by the LLM selection step: kept by it (rescue), or its pick among the mention's
  // candidates, which then faced the filter like any other (before the filter).
  bool chosen_by_llm = false;
  // Before the filter: a candidate of a mention the LLM was asked about that it did not pick
  // (it chose another, or none). Listed under rejected with its scores; not part of R's set.
  bool excluded_by_llm = false;
  std::vector<std::string> source_ids;  // external id and xrefs
};

struct ExtractResult {
  std::vector<Mention> mentions;
  std::vector<Degradation> degraded;
};

struct LinkResult {
  std::vector<MentionLink> links;
  std::vector<StageTiming> timings;
  std::vector<Degradation> degraded;
};

struct AlignResult {
  std::vector<Mention> mentions;
  // C >= tau (or top-1 per mention with MSCA off) by C descending, then the LLM's rescues
  // (LlmStep::kRescueRejected).
  std::vector<ScoredEntity> kept;
  // Below tau, and (LLM step before the filter) the candidates the LLM did not pick; by C
  // descending.
  std::vector<ScoredEntity> rejected;
  std::vector<StageTiming> timings;
  std::vector<Degradation> degraded;
  // `calibrated` is false here when the bundle has no calibration ("none").
  MscaOptions effective;
  int64_t bundle_version = 0;
  std::string encoder_id;
};

struct AlignerOptions {
  // Applied by callers that leave a setting unset (the service's defaults).
  MscaOptions defaults;
  // LLM selection: candidates of one mention shown to the LLM (before the filter: its top-K,
  // best link first; rescue: its rejected ones, best C first). 1..100.
  int max_llm_candidates = 20;
  // LLM selection: mentions asked about per request, those with the fewest named (before the
  // filter) or kept (rescue) entities first; the others go through MSCA as without an LLM.
  // Bounds the LLM calls a request makes. 1..64.
  int max_llm_mentions = 8;
  // LLM selection: calls of one request in flight at once (the request's thread plus up to
  // this - 1 more). The client's max_concurrency bounds the calls of all requests. 1..32.
  int llm_parallelism = 4;
  // Limit on one LLM call within a request (the request's deadline, when earlier, wins).
  absl::Duration llm_timeout = absl::Seconds(30);
  // Also report mentions of generic names ("disease", "severe"; the bundle's generic_terms.tsv,
  // generic_terms.h), which are otherwise not mentions by themselves.
  bool report_generic_terms = false;
};

class Aligner {
 public:
  // FAILED_PRECONDITION when encoder->id() differs from the bundle's encoder id: vectors of
  // two encoders are not comparable. `llm` may be null (LLM steps are then skipped).
  static absl::StatusOr<std::unique_ptr<Aligner>> Create(
      std::shared_ptr<const AlignmentBundle> bundle, std::shared_ptr<const TextEncoder> encoder,
      std::shared_ptr<const common::OpenAiClient> llm, const AlignerOptions& options = {});

  // All methods are thread-safe and validate their input (INVALID_ARGUMENT naming the field).
  absl::StatusOr<ExtractResult> ExtractMentions(absl::string_view text, bool llm_mentions,
                                                absl::Time deadline = absl::InfiniteFuture()) const;
  absl::StatusOr<LinkResult> Link(absl::string_view text, int top_k,
                                  absl::Time deadline = absl::InfiniteFuture()) const;
  absl::StatusOr<AlignResult> Align(absl::string_view text, const MscaOptions& options,
                                    absl::Time deadline = absl::InfiniteFuture()) const;

  const AlignmentBundle& bundle() const { return *bundle_; }
  const TextEncoder& encoder() const { return *encoder_; }
  const AlignerOptions& options() const { return options_; }
  bool has_llm() const { return llm_ != nullptr; }

 private:
  Aligner(std::shared_ptr<const AlignmentBundle> bundle, std::shared_ptr<const TextEncoder> encoder,
          std::shared_ptr<const common::OpenAiClient> llm, const AlignerOptions& options);
  absl::Status LinkMentions(const std::vector<Mention>& mentions, int top_k,
                            std::vector<MentionLink>* links) const;
  absl::Status LlmMentions(absl::string_view text, absl::Time deadline,
                           std::vector<Mention>* mentions) const;
  LinkedCandidate MakeCandidate(uint32_t entry, uint32_t name_index, float similarity) const;

  std::shared_ptr<const AlignmentBundle> bundle_;
  std::shared_ptr<const TextEncoder> encoder_;
  std::shared_ptr<const common::OpenAiClient> llm_;
  AlignerOptions options_;
};

// Human-readable table (kept then rejected, with S, R, C) and JSON of a result.
std::string FormatAlignResultTable(const AlignResult& result);
std::string FormatAlignResultJson(const AlignResult& result);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNER_H_
