#include "services/alignment/alignment_api.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "services/alignment/trained_encoder.h"

namespace ibgraphrag::alignment {

absl::StatusOr<Lexicon> LoadLexicon(const LexiconSourceOptions& sources,
                                    UmlsImportReport* umls_report,
                                    CommonNamesReport* common_names_report) {
  if (sources.data_dir.empty() == sources.snapshot_dir.empty()) {
    return absl::InvalidArgumentError("data_dir / snapshot_dir: give exactly one");
  }
  Lexicon lexicon;
  if (!sources.data_dir.empty()) {
    IBGR_ASSIGN_OR_RETURN(lexicon, LexiconFromDataDir(sources.data_dir));
  } else {
    IBGR_ASSIGN_OR_RETURN(lexicon, LexiconFromSnapshot(sources.snapshot_dir));
  }
  if (!sources.umls_dir.empty()) {
    UmlsImportOptions umls = sources.umls;
    umls.rrf_dir = sources.umls_dir;
    IBGR_ASSIGN_OR_RETURN(UmlsImportReport report, ImportUmlsRrf(umls, &lexicon));
    if (umls_report != nullptr) *umls_report = report;
  }
  if (sources.common_names) {
    CommonNamesReport report = AddCommonNames(ClinicalCommonNames(), &lexicon);
    if (common_names_report != nullptr) *common_names_report = std::move(report);
  }
  return lexicon;
}

absl::StatusOr<BundleBuildResult> BuildBundleFromSources(const LexiconSourceOptions& sources,
                                                         const EncoderSpec& encoder,
                                                         const BundleBuildOptions& build,
                                                         CommonNamesReport* common_names_report) {
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<TextEncoder> enc, CreateTextEncoder(encoder));
  IBGR_ASSIGN_OR_RETURN(Lexicon lexicon,
                        LoadLexicon(sources, /*umls_report=*/nullptr, common_names_report));
  return BuildAlignmentBundle(lexicon, *enc, build);
}

absl::StatusOr<std::unique_ptr<Aligner>> OpenLocalAligner(const LocalAlignerOptions& options) {
  std::string dir = options.bundle_dir;
  if (dir.empty()) {
    if (options.base_path.empty()) {
      return absl::InvalidArgumentError("base_path: required (or give bundle_dir)");
    }
    IBGR_ASSIGN_OR_RETURN(dir, ResolveBundleDir(options.base_path, options.bundle_version));
  }
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const AlignmentBundle> bundle,
                        LoadAlignmentBundle(dir, options.index));
  EncoderSpec spec = options.encoder;
  if (spec.base_path.empty()) spec.base_path = ArtifactBaseOfVersionDir(dir);
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const TextEncoder> encoder,
                        EncoderForManifest(spec, bundle->manifest.encoder_id));
  return Aligner::Create(std::move(bundle), std::move(encoder), options.llm, options.aligner);
}

}  // namespace ibgraphrag::alignment
