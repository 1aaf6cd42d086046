// One-call entry points for tools (`ibgr align build`, `ibgr align "text"`, the eval tool):
// build a bundle from a data directory or a KG snapshot (plus optional UMLS), and open a bundle
// to align text locally, without any server.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_API_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_API_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "services/alignment/aligner.h"
#include "services/alignment/bundle.h"
#include "services/alignment/common_names.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

struct LexiconSourceOptions {
  // Exactly one of the two: the shared data directory (the embedded KG is built in memory, ~3 s)
  // or a KG snapshot directory `<base>/kg/<version>`.
  std::string data_dir;
  std::string snapshot_dir;
  // Optional UMLS META/ directory (MRCONSO.RRF, MRDEF.RRF, MRSTY.RRF); empty skips UMLS.
  // The other UMLS settings come from `umls` (its rrf_dir is overwritten).
  std::string umls_dir;
  UmlsImportOptions umls;
  // Add the built-in everyday drug and drug-class names (common_names.h: "aspirin",
  // "albuterol", "statins") to the entries they name.
  bool common_names = true;
};

// The lexicon the options describe; `umls_report` / `common_names_report` (optional) receive
// the UMLS and common-name counts.
absl::StatusOr<Lexicon> LoadLexicon(const LexiconSourceOptions& sources,
                                    UmlsImportReport* umls_report = nullptr,
                                    CommonNamesReport* common_names_report = nullptr);

// LoadLexicon + CreateTextEncoder + BuildAlignmentBundle; `common_names_report` (optional)
// receives what the everyday names added and which rows matched nothing.
absl::StatusOr<BundleBuildResult> BuildBundleFromSources(
    const LexiconSourceOptions& sources, const EncoderSpec& encoder,
    const BundleBuildOptions& build, CommonNamesReport* common_names_report = nullptr);

struct LocalAlignerOptions {
  // The bundle: `bundle_dir` when set, else the pinned or newest version under `base_path`.
  std::string base_path;
  std::optional<int64_t> bundle_version;
  std::string bundle_dir;
  // Must be the encoder the bundle was built with (checked by id). Default: the encoder the
  // bundle's manifest names, opened by id (a trained one from `<base>/encoder/`).
  EncoderSpec encoder = EncoderSpec{"bundle"};
  CandidateIndexOptions index;
  AlignerOptions aligner;
  // The LLM of the selection step and LLM mentions; null = none (the selection step does not
  // run; llm_mentions reports a degradation), as in a server without `llm`.
  std::shared_ptr<const common::OpenAiClient> llm;
};

// Loads the bundle and returns an Aligner with `llm` (may be null).
absl::StatusOr<std::unique_ptr<Aligner>> OpenLocalAligner(const LocalAlignerOptions& options);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_API_H_
