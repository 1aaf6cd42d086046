#include "tools/ibgr/align_commands.h"

#include <cstdio>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "services/alignment/aligner.h"
#include "services/alignment/alignment_api.h"
#include "services/alignment/trained_encoder.h"
#include "tools/ibgr/cli_common.h"

ABSL_DECLARE_FLAG(std::string, data_dir);
ABSL_DECLARE_FLAG(std::string, base);
ABSL_DECLARE_FLAG(std::string, snapshot_dir);
ABSL_FLAG(std::string, umls_dir, "", "align build: UMLS META/ directory (MRCONSO/MRDEF/MRSTY.RRF)");
ABSL_FLAG(int64_t, bundle_version, 0,
          "alignment bundle version to write or use (default: next / newest)");
ABSL_FLAG(std::string, index, "auto", "align build: FAISS index: auto | flat | hnsw");
ABSL_FLAG(double, lambda, 0.4, "align: MSCA lambda in [0, 1]");
ABSL_FLAG(double, tau, 0.5, "align: MSCA tau in [0, 1]");
ABSL_FLAG(int, top_k, 10, "align: candidates per mention, 1..1000");
ABSL_FLAG(bool, msca, true, "align: MSCA on (false = plain top-1 linking per mention)");
ABSL_FLAG(bool, calibrated, true,
          "align: calibrated S and R (false = the paper's raw cosines; docs/alignment.md)");
ABSL_FLAG(bool, json, false, "print JSON instead of a table");
ABSL_FLAG(std::string, encoder, "trained",
          "align build / artifacts build: encoder of the bundle and the retriever model: trained "
          "(the default: the newest <base>/encoder/<version>/; artifacts build trains one when "
          "there is none, `ibgr encoder train` makes one) or hash-ngram (no training)");

namespace ibgraphrag::cli {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

absl::StatusOr<alignment::EncoderSpec> BuildEncoderSpecFromFlags() {
  const std::string kind = absl::GetFlag(FLAGS_encoder);
  alignment::EncoderSpec spec;
  if (kind == "hash-ngram") return spec;
  if (kind != "trained") {
    return absl::InvalidArgumentError(
        absl::StrCat("--encoder: \"", kind, "\" is not one of hash-ngram, trained"));
  }
  spec.kind = "trained";
  spec.base_path = absl::GetFlag(FLAGS_base);
  absl::StatusOr<std::string> dir =
      alignment::EncoderArtifacts(spec.base_path).Resolve(std::nullopt);
  if (!dir.ok()) {
    return absl::Status(dir.status().code(),
                        absl::StrCat(dir.status().message(), " or `ibgr encoder train --base=",
                                     spec.base_path, "`, or pass --encoder=hash-ngram"));
  }
  spec.trained.dir = *dir;
  return spec;
}

absl::StatusOr<std::string> EncoderIdOfSpec(const alignment::EncoderSpec& spec) {
  if (spec.kind == "trained" && !spec.trained.dir.empty()) {
    return alignment::ReadTrainedEncoderId(spec.trained.dir);
  }
  absl::StatusOr<std::unique_ptr<alignment::TextEncoder>> encoder =
      alignment::CreateTextEncoder(spec);
  if (!encoder.ok()) return encoder.status();
  return (*encoder)->id();
}

int AlignBuild(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "ibgr align build takes flags only (see --help)\n");
    return 2;
  }
  alignment::LexiconSourceOptions sources;
  sources.snapshot_dir = absl::GetFlag(FLAGS_snapshot_dir);
  if (sources.snapshot_dir.empty()) {
    sources.data_dir =
        absl::GetFlag(FLAGS_data_dir).empty() ? DefaultDataDir() : absl::GetFlag(FLAGS_data_dir);
  }
  sources.umls_dir = absl::GetFlag(FLAGS_umls_dir);
  alignment::BundleBuildOptions build;
  build.base_path = absl::GetFlag(FLAGS_base);
  build.version = absl::GetFlag(FLAGS_bundle_version);
  const std::string index = absl::GetFlag(FLAGS_index);
  if (index == "flat") {
    build.index.kind = alignment::IndexKind::kFlat;
  } else if (index == "hnsw") {
    build.index.kind = alignment::IndexKind::kHnsw;
  } else if (index != "auto") {
    return Fail(absl::InvalidArgumentError("--index: one of auto, flat, hnsw"));
  }
  build.created_by = "ibgr align build";
  const absl::Time start = absl::Now();
  absl::StatusOr<alignment::EncoderSpec> encoder = BuildEncoderSpecFromFlags();
  if (!encoder.ok()) return Fail(encoder.status());
  alignment::CommonNamesReport common_names;
  auto result = alignment::BuildBundleFromSources(sources, *encoder, build, &common_names);
  if (!result.ok()) return Fail(result.status());
  std::printf(
      "everyday drug and class names: %lld of %lld rows matched, %lld names added\n",
      static_cast<long long>(common_names.rows_matched), static_cast<long long>(common_names.rows),
      static_cast<long long>(common_names.synonyms_added + common_names.abbreviations_added));
  for (const std::string& row : common_names.unmatched) {
    std::printf("  unmatched (the KG has no such entity; its names were not added): %s\n",
                row.c_str());
  }
  std::printf("bundle: %s\n  encoder %s (dim %d), %lld entries, %lld index rows (%s), %.1f s\n",
              result->dir.c_str(), result->manifest.encoder_id.c_str(), result->manifest.dim,
              static_cast<long long>(result->manifest.entries),
              static_cast<long long>(result->manifest.index_rows),
              result->manifest.index_kind.c_str(), absl::ToDoubleSeconds(absl::Now() - start));
  return 0;
}

int AlignText(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr, "usage: ibgr align [--base=DIR] [--tau=0.5 ...] [--json] \"text\"\n");
    return 2;
  }
  alignment::LocalAlignerOptions options;
  options.base_path = absl::GetFlag(FLAGS_base);
  if (absl::GetFlag(FLAGS_bundle_version) > 0) {
    options.bundle_version = absl::GetFlag(FLAGS_bundle_version);
  }
  auto aligner = alignment::OpenLocalAligner(options);
  if (!aligner.ok()) return Fail(aligner.status());
  alignment::MscaOptions msca;
  msca.lambda = static_cast<float>(absl::GetFlag(FLAGS_lambda));
  msca.tau = static_cast<float>(absl::GetFlag(FLAGS_tau));
  msca.top_k = absl::GetFlag(FLAGS_top_k);
  msca.msca_enabled = absl::GetFlag(FLAGS_msca);
  msca.calibrated = absl::GetFlag(FLAGS_calibrated);
  auto result = (*aligner)->Align(absl::StrJoin(args, " "), msca);
  if (!result.ok()) return Fail(result.status());
  const std::string out = absl::GetFlag(FLAGS_json) ? alignment::FormatAlignResultJson(*result)
                                                    : alignment::FormatAlignResultTable(*result);
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace ibgraphrag::cli
