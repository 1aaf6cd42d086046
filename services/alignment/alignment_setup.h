// How an AlignmentConfig (the text proto the alignment service reads with --config) becomes the
// settings of an Aligner: the encoder, the MSCA defaults (lambda, tau, top_k, the LLM step), the
// LLM and the bounds of its selection step, and FAISS's search settings. One function, used by
// the alignment server and by `retriever_train --alignment_config`, so that the retriever is
// trained on the topics serving will give it (docs/alignment.md "LLM selection").
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SETUP_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SETUP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/openai_client.h"
#include "ibgraphrag/config/v1/alignment_config.pb.h"
#include "services/alignment/aligner.h"
#include "services/alignment/candidate_index.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

struct AlignmentSetup {
  // Default: the encoder the bundle's manifest names ("bundle").
  EncoderSpec encoder = EncoderSpec{"bundle"};
  // MSCA defaults (`defaults`) and the LLM step's bounds (`llm_selection`).
  AlignerOptions aligner;
  // `llm` with a base_url; unset = no LLM.
  std::optional<common::OpenAiClientOptions> llm;
  CandidateIndexOptions index;
  // `index.omp_threads`; 0 = unset.
  int faiss_omp_threads = 0;
  // `bundle_version`: serve this bundle version; 0 = the newest.
  int64_t bundle_version = 0;
};

// INVALID_ARGUMENT naming the config field for a value out of range or unknown.
absl::StatusOr<AlignmentSetup> AlignmentSetupFromConfig(const config::v1::AlignmentConfig& config);

// What MSCA's LLM step does with these settings, as retriever manifests record it
// (training.alignment_llm) and the all-in-one compares it: "none" (no LLM, or the step off),
// else "MODEL STEP" ("gpt-x before_filter").
std::string AlignmentLlmLabel(const std::optional<common::OpenAiClientOptions>& llm,
                              const MscaOptions& defaults);

// Reads the text proto at `path` (errors name the file) and converts it.
absl::StatusOr<AlignmentSetup> LoadAlignmentSetup(const std::string& path);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SETUP_H_
