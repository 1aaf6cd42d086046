#include "services/alignment/alignment_setup.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/config.h"
#include "common/llm_backend_config.h"
#include "common/status_macros.h"
#include "services/alignment/llm_selection.h"

namespace ibgraphrag::alignment {
namespace {

namespace cfg = ::ibgraphrag::config::v1;

absl::StatusOr<EncoderSpec> EncoderFromConfig(const cfg::EncoderConfig& c) {
  EncoderSpec spec;
  switch (c.kind()) {
    case cfg::ENCODER_KIND_UNSPECIFIED:
      if (c.dim() == 0) {  // the encoder the bundle names, opened by its id
        spec.kind = "bundle";
        break;
      }
      [[fallthrough]];
    case cfg::ENCODER_KIND_HASH_NGRAM:
      spec.kind = "hash-ngram";
      if (c.dim() != 0) spec.hash.dim = c.dim();
      break;
    case cfg::ENCODER_KIND_TRAINED:
      if (c.encoder_version() < 0) {
        return absl::InvalidArgumentError("encoder.encoder_version: must be >= 0");
      }
      spec.kind = "trained";
      spec.trained.dir = c.encoder_dir();
      spec.trained.version = c.encoder_version();
      break;
    case cfg::ENCODER_KIND_WORD_VECTORS:
      spec.kind = "word-vectors";
      spec.word_vectors.path = c.vectors_path();
      spec.word_vectors.max_words = c.max_words();
      spec.word_vectors.format =
          c.vectors_format() == cfg::WORD_VECTOR_FORMAT_WORD2VEC_BINARY
              ? WordVectorFormat::kWord2VecBinary
              : (c.vectors_format() == cfg::WORD_VECTOR_FORMAT_TEXT ? WordVectorFormat::kText
                                                                    : WordVectorFormat::kAuto);
      break;
    case cfg::ENCODER_KIND_OPENAI_EMBEDDINGS:
      spec.kind = "openai";
      spec.remote.base_url = c.base_url();
      spec.remote.model = c.model();
      spec.remote.dim = c.dim();
      spec.remote.api_key_env = c.api_key_env();
      if (c.has_timeout_seconds()) {
        if (c.timeout_seconds() <= 0) {
          return absl::InvalidArgumentError("encoder.timeout_seconds: must be > 0");
        }
        spec.remote.timeout = absl::Seconds(c.timeout_seconds());
      }
      if (c.batch_size() != 0) spec.remote.batch_size = c.batch_size();
      if (c.has_connect_timeout_seconds()) {
        spec.remote.connect_timeout = absl::Seconds(c.connect_timeout_seconds());
      }
      if (c.has_max_retries()) spec.remote.max_retries = c.max_retries();
      break;
    default:
      return absl::InvalidArgumentError("encoder.kind: unknown value");
  }
  return spec;
}

// The LLM selection step's bounds (alignment_config.proto LlmSelectionConfig); unset fields keep
// the AlignerOptions defaults.
absl::Status ApplyLlmSelectionConfig(const cfg::LlmSelectionConfig& c, AlignerOptions* options) {
  auto in_range = [](int value, int limit, const char* field) {
    return value >= 1 && value <= limit
               ? absl::OkStatus()
               : absl::InvalidArgumentError(
                     absl::StrCat("llm_selection.", field, ": ", value, " outside 1..", limit));
  };
  if (c.has_max_mentions()) {
    IBGR_RETURN_IF_ERROR(in_range(c.max_mentions(), kMaxLlmMentionsLimit, "max_mentions"));
    options->max_llm_mentions = c.max_mentions();
  }
  if (c.has_max_candidates()) {
    IBGR_RETURN_IF_ERROR(in_range(c.max_candidates(), kMaxLlmCandidatesLimit, "max_candidates"));
    options->max_llm_candidates = c.max_candidates();
  }
  if (c.has_parallelism()) {
    IBGR_RETURN_IF_ERROR(in_range(c.parallelism(), kMaxLlmParallelismLimit, "parallelism"));
    options->llm_parallelism = c.parallelism();
  }
  if (c.has_timeout_seconds()) {
    if (!(c.timeout_seconds() > 0 && c.timeout_seconds() <= 600)) {
      return absl::InvalidArgumentError("llm_selection.timeout_seconds: outside (0, 600]");
    }
    options->llm_timeout = absl::Seconds(c.timeout_seconds());
  }
  return absl::OkStatus();
}

absl::Status ApplyMscaDefaults(const cfg::MscaDefaults& d, MscaOptions* options) {
  if (d.has_lambda()) options->lambda = d.lambda();
  if (d.has_tau()) options->tau = d.tau();
  if (d.has_top_k()) options->top_k = static_cast<int>(d.top_k());
  if (d.has_llm_choice_below()) options->llm_choice_below = static_cast<int>(d.llm_choice_below());
  if (!d.llm_step().empty()) {
    IBGR_ASSIGN_OR_RETURN(options->llm_step, ParseLlmStep(d.llm_step(), "defaults.llm_step"));
  }
  if (absl::Status s = ValidateMscaOptions(*options); !s.ok()) {
    // ValidateMscaOptions names the request field ("options.tau"); here it is "defaults.tau".
    absl::string_view message = s.message();
    absl::ConsumePrefix(&message, "options.");
    return absl::InvalidArgumentError(absl::StrCat("defaults.", message));
  }
  return absl::OkStatus();
}

common::OpenAiClientOptions LlmFromConfig(const cfg::LlmBackend& l) {
  common::OpenAiClientOptions llm = common::OpenAiClientOptionsFromConfig(l);
  if (llm.name.empty()) llm.name = "alignment";
  return llm;
}

}  // namespace

absl::StatusOr<AlignmentSetup> AlignmentSetupFromConfig(const cfg::AlignmentConfig& config) {
  AlignmentSetup setup;
  IBGR_ASSIGN_OR_RETURN(setup.encoder, EncoderFromConfig(config.encoder()));
  IBGR_RETURN_IF_ERROR(ApplyMscaDefaults(config.defaults(), &setup.aligner.defaults));
  if (config.has_llm() && !config.llm().base_url().empty()) setup.llm = LlmFromConfig(config.llm());
  IBGR_RETURN_IF_ERROR(ApplyLlmSelectionConfig(config.llm_selection(), &setup.aligner));
  if (config.index().hnsw_ef_search() != 0) {
    if (config.index().hnsw_ef_search() < 16 || config.index().hnsw_ef_search() > 4096) {
      return absl::InvalidArgumentError("index.hnsw_ef_search: outside 16..4096");
    }
    setup.index.hnsw_ef_search = config.index().hnsw_ef_search();
  }
  setup.faiss_omp_threads = config.index().omp_threads();
  if (config.bundle_version() < 0) {
    return absl::InvalidArgumentError("bundle_version: must be >= 0 (0 = the newest)");
  }
  setup.bundle_version = config.bundle_version();
  return setup;
}

std::string AlignmentLlmLabel(const std::optional<common::OpenAiClientOptions>& llm,
                              const MscaOptions& defaults) {
  if (!llm.has_value() || defaults.llm_choice_below == 0 || !defaults.msca_enabled) return "none";
  return absl::StrCat(llm->model, " ", LlmStepName(defaults.llm_step));
}

absl::StatusOr<AlignmentSetup> LoadAlignmentSetup(const std::string& path) {
  IBGR_ASSIGN_OR_RETURN(cfg::AlignmentConfig config,
                        common::LoadTextProtoConfig<cfg::AlignmentConfig>(path));
  absl::StatusOr<AlignmentSetup> setup = AlignmentSetupFromConfig(config);
  if (!setup.ok()) {
    return absl::Status(setup.status().code(), absl::StrCat(path, ": ", setup.status().message()));
  }
  return setup;
}

}  // namespace ibgraphrag::alignment
