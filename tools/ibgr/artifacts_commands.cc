#include "tools/ibgr/artifacts_commands.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/versioned_artifacts.h"
#include "services/alignment/alignment_setup.h"
#include "services/alignment/bundle.h"
#include "services/alignment/common_names.h"
#include "services/alignment/trained_encoder.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/model_bundle.h"
#include "tools/ibgr/align_commands.h"
#include "tools/ibgr/cli_common.h"
#include "tools/ibgr/docs_commands.h"
#include "tools/ibgr/kg_commands.h"

ABSL_DECLARE_FLAG(std::string, base);
ABSL_DECLARE_FLAG(bool, if_missing);
ABSL_DECLARE_FLAG(std::string, encoder);
ABSL_DECLARE_FLAG(std::string, data_dir);
ABSL_DECLARE_FLAG(std::string, snapshot_dir);
ABSL_FLAG(std::string, retriever_variants, "residual",
          "artifacts build: retriever scorer variants the model version must hold, the first the "
          "default (residual,plain adds the paper's plain MLP; trained when missing)");
ABSL_FLAG(std::string, retriever_train_args, "",
          "artifacts build: extra flags for retriever_train, space-separated (e.g. --epochs=4)");
ABSL_FLAG(std::string, alignment_config, "",
          "artifacts build: the alignment service's AlignmentConfig (as ibgraphrag / alignment "
          "--config read it): the model is trained on the topics it gives, and a model trained "
          "with another LLM step is retrained");

namespace ibgraphrag::cli {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

// The training tools (LibTorch) installed beside ibgr: FAILED_PRECONDITION naming the path when
// `tool` is not there (the CPU serving image ships ibgr without them).
absl::Status CheckTrainingTool(const std::string& path) {
  if (access(path.c_str(), X_OK) == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      path,
      " is missing: building artifacts trains models with LibTorch; run it from the tools "
      "image (ibgraphrag-torch) or a build tree (cmake --build build --target ibgr builds "
      "ibgr_encoder and retriever_train too)"));
}

int RunChild(const std::vector<std::string>& argv) {
  std::vector<char*> c_argv;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execv(c_argv[0], c_argv.data());
    std::perror(c_argv[0]);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// With --encoder=trained: the newest encoder under <base>/encoder/, trained (and published) by
// the encoder trainer when there is none. The trainer's defaults define the default artifact.
absl::Status EnsureTrainedEncoder(const std::string& base) {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                        alignment::EncoderArtifacts(base).ListVersions());
  if (!versions.empty()) {
    std::printf("trained encoder exists: %s (nothing to do)\n",
                alignment::EncoderArtifacts(base).VersionDir(versions.back()).c_str());
    return absl::OkStatus();
  }
  const std::string data_dir =
      absl::GetFlag(FLAGS_data_dir).empty() ? DefaultDataDir() : absl::GetFlag(FLAGS_data_dir);
  std::printf("training the name encoder (none under %s)\n",
              alignment::EncoderArtifacts(base).root().c_str());
  // The trainer links LibTorch, so it is its own binary (`ibgr encoder train` runs it too).
  std::vector<std::string> argv = {SelfDir() + "/ibgr_encoder", "encoder", "train",
                                   "--base=" + base, "--data_dir=" + data_dir};
  IBGR_RETURN_IF_ERROR(CheckTrainingTool(argv[0]));
  if (!absl::GetFlag(FLAGS_snapshot_dir).empty()) {
    argv.push_back("--snapshot_dir=" + absl::GetFlag(FLAGS_snapshot_dir));
  }
  if (const int rc = RunChild(argv); rc != 0) {
    return absl::UnknownError(absl::StrCat("ibgr_encoder exited with ", rc, " (its output above)"));
  }
  return absl::OkStatus();
}

// Why the newest alignment bundle is not built with `encoder_id`, or nullopt when it is.
std::optional<std::string> BundleProblem(const std::string& base, const std::string& encoder_id) {
  absl::StatusOr<std::string> dir = alignment::ResolveBundleDir(base, std::nullopt);
  if (!dir.ok()) return std::string(dir.status().message());
  absl::StatusOr<std::string> json =
      common::ReadFileToString(absl::StrCat(*dir, "/", common::kArtifactManifestFile));
  if (!json.ok()) return std::string(json.status().message());
  absl::StatusOr<alignment::BundleManifest> manifest = alignment::BundleManifestFromJson(*json);
  if (!manifest.ok()) return std::string(manifest.status().message());
  if (manifest->encoder_id != encoder_id) {
    return absl::StrCat(*dir, " was built with encoder ", manifest->encoder_id, ", --encoder is ",
                        encoder_id);
  }
  // Bundles from before the everyday names (services/alignment/common_names.h), or from another
  // version of their table, would leave "aspirin", "statins" or "HMG-CoA reductase" unaligned
  // after an upgrade; a rebuild takes under a minute.
  if (!absl::StrContains(manifest->source, " + common-names:")) {
    return absl::StrCat(*dir, " has no everyday drug and class names (\"aspirin\", \"statins\")");
  }
  const std::string table = alignment::CommonNamesTableTag(alignment::ClinicalCommonNames());
  if (!absl::StrContains(manifest->source, table)) {
    return absl::StrCat(*dir, " has another version of the everyday names (", table,
                        " is this build's)");
  }
  return std::nullopt;
}

// Why the newest retriever model cannot serve the newest KG with `encoder_id` and every scorer
// variant of --retriever_variants, or nullopt when it can.
std::optional<std::string> RetrieverModelProblem(const std::string& base,
                                                 const std::string& kg_version,
                                                 const std::string& encoder_id,
                                                 const std::string& served_alignment_llm) {
  absl::StatusOr<std::string> dir = retriever::ResolveRetrieverDir(base, std::nullopt);
  if (!dir.ok()) return "no model";
  absl::StatusOr<retriever::LoadedRetrieverVersion> loaded = retriever::LoadRetrieverVersion(*dir);
  if (!loaded.ok())
    return absl::StrCat(*dir, " cannot be loaded (", loaded.status().message(), ")");
  if (loaded->manifest.kg_version != kg_version) {
    return absl::StrCat(*dir, " was trained on KG version ", loaded->manifest.kg_version,
                        ", the newest is ", kg_version);
  }
  if (loaded->manifest.encoder_id != encoder_id) {
    return absl::StrCat(*dir, " embeds with encoder ", loaded->manifest.encoder_id,
                        ", --encoder is ", encoder_id);
  }
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_retriever_variants), ',', absl::SkipEmpty())) {
    const bool held =
        std::any_of(loaded->manifest.variants.begin(), loaded->manifest.variants.end(),
                    [&](const retriever::ScorerVariantInfo& v) {
                      return ScorerVariantName(v.variant) == name;
                    });
    if (!held) return absl::StrCat(*dir, " has no ", name, " scorer (--retriever_variants)");
  }
  // The topics it was trained on must be those the configured alignment serves.
  const auto it = loaded->manifest.training.find("alignment_llm");
  const std::string trained = it == loaded->manifest.training.end() ? "none" : it->second;
  if (trained != served_alignment_llm) {
    return absl::StrCat(*dir, " was trained on topics aligned with LLM step \"", trained,
                        "\", the alignment config serves \"", served_alignment_llm, "\"");
  }
  return std::nullopt;
}

// 5. ILlama's subgraph documents, embedded with the retriever model's encoder (docs build).
int EnsureDocuments(const std::string& base, const std::string& kg_version,
                    const std::string& encoder_id) {
  if (DocumentsCurrent(base, kg_version, encoder_id)) {
    std::printf("documents for KG version %s exist (nothing to do)\n", kg_version.c_str());
    return 0;
  }
  std::printf("building the subgraph documents (illama mode)\n");
  // Optional for serving: only the illama mode needs them, so a KG they cannot be built from
  // (no entity of a centre type) leaves the rest of the suite ready, and says so.
  if (DocsBuild({}) != 0) {
    std::fprintf(stderr,
                 "warning: no subgraph documents; the illama mode answers FAILED_PRECONDITION "
                 "until `ibgr docs build` succeeds\n");
  }
  return 0;
}

}  // namespace

int ArtifactsBuild(const std::vector<std::string>& args) {
  const std::string base = absl::GetFlag(FLAGS_base);
  // 1. KG snapshot (only when there is none).
  absl::SetFlag(&FLAGS_if_missing, true);
  if (int rc = KgBuild(args); rc != 0) return rc;
  absl::StatusOr<std::string> kg_dir = kgstore::ResolveSnapshotDir(base, std::nullopt);
  if (!kg_dir.ok()) {
    std::fprintf(stderr, "error: %s\n", kg_dir.status().ToString().c_str());
    return 1;
  }
  const std::string kg_version = std::filesystem::path(*kg_dir).filename().string();

  // 2. Encoder: the hash encoder needs nothing; a trained one is trained when missing.
  if (absl::GetFlag(FLAGS_encoder) == "trained") {
    if (absl::Status s = EnsureTrainedEncoder(base); !s.ok()) return Fail(s);
  }
  absl::StatusOr<alignment::EncoderSpec> spec = BuildEncoderSpecFromFlags();
  if (!spec.ok()) return Fail(spec.status());
  absl::StatusOr<std::string> encoder_id = EncoderIdOfSpec(*spec);
  if (!encoder_id.ok()) return Fail(encoder_id.status());

  // 3. Alignment bundle, built with that encoder.
  if (std::optional<std::string> bundle = BundleProblem(base, *encoder_id); !bundle.has_value()) {
    std::printf("alignment bundle with encoder %s exists (nothing to do)\n", encoder_id->c_str());
  } else {
    std::printf("building the alignment bundle (%s)\n", bundle->c_str());
    if (int rc = AlignBuild(args); rc != 0) return rc;
  }

  // 4. Retriever model, embedding with the same encoder, holding the requested scorer variants,
  // trained on the topics the configured alignment gives (--alignment_config).
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_retriever_variants), ',', absl::SkipEmpty())) {
    if (absl::StatusOr<retriever::ScorerVariant> v =
            retriever::ParseScorerVariant(name, "--retriever_variants");
        !v.ok()) {
      return Fail(v.status());
    }
  }
  std::string served_alignment_llm = "none";
  const std::string alignment_config = absl::GetFlag(FLAGS_alignment_config);
  if (!alignment_config.empty()) {
    absl::StatusOr<alignment::AlignmentSetup> setup =
        alignment::LoadAlignmentSetup(alignment_config);
    if (!setup.ok()) return Fail(setup.status());
    served_alignment_llm = alignment::AlignmentLlmLabel(setup->llm, setup->aligner.defaults);
  }
  std::optional<std::string> problem =
      RetrieverModelProblem(base, kg_version, *encoder_id, served_alignment_llm);
  if (!problem.has_value()) {
    std::printf("retriever model exists for KG version %s (nothing to do)\n", kg_version.c_str());
    return EnsureDocuments(base, kg_version, *encoder_id);
  }
  std::printf("training the retriever model: %s\n", problem->c_str());
  if (absl::Status s = CheckTrainingTool(SelfDir() + "/retriever_train"); !s.ok()) return Fail(s);
  std::vector<std::string> argv = {SelfDir() + "/retriever_train", "--base=" + base,
                                   "--encoder=" + *encoder_id,
                                   "--variants=" + absl::GetFlag(FLAGS_retriever_variants)};
  // The real QA training questions come from the same data folder as the KG.
  const std::string data_dir =
      absl::GetFlag(FLAGS_data_dir).empty() ? DefaultDataDir() : absl::GetFlag(FLAGS_data_dir);
  if (std::filesystem::is_directory(data_dir + "/qa"))
    argv.push_back("--qa_dir=" + data_dir + "/qa");
  if (!alignment_config.empty()) argv.push_back("--alignment_config=" + alignment_config);
  for (absl::string_view extra :
       absl::StrSplit(absl::GetFlag(FLAGS_retriever_train_args), ' ', absl::SkipEmpty())) {
    argv.emplace_back(extra);
  }
  if (int rc = RunChild(argv); rc != 0) {
    std::fprintf(stderr, "error: retriever_train exited with %d\n", rc);
    return rc;
  }
  problem = RetrieverModelProblem(base, kg_version, *encoder_id, served_alignment_llm);
  if (problem.has_value()) {
    std::fprintf(stderr, "error: after training: %s\n", problem->c_str());
    return 1;
  }
  return EnsureDocuments(base, kg_version, *encoder_id);
}

}  // namespace ibgraphrag::cli
