#include "tools/ibgr/artifacts_commands.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "services/alignment/bundle.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/model_bundle.h"
#include "tools/ibgr/align_commands.h"
#include "tools/ibgr/kg_commands.h"

ABSL_DECLARE_FLAG(std::string, base);
ABSL_DECLARE_FLAG(bool, if_missing);
ABSL_FLAG(std::string, retriever_train_args, "",
          "artifacts build: extra flags for retriever_train, space-separated (e.g. --epochs=4)");

namespace ibgraphrag::cli {
namespace {

// The directory this executable lives in (retriever_train is installed beside it).
std::string SelfDir() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
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

// Why the newest retriever model cannot serve the newest KG, or nullopt when it can.
std::optional<std::string> RetrieverModelProblem(const std::string& base,
                                                 const std::string& kg_version) {
  absl::StatusOr<std::string> dir = retriever::ResolveRetrieverDir(base, std::nullopt);
  if (!dir.ok()) return "no model";
  absl::StatusOr<retriever::LoadedRetrieverVersion> loaded = retriever::LoadRetrieverVersion(*dir);
  if (!loaded.ok())
    return absl::StrCat(*dir, " cannot be loaded (", loaded.status().message(), ")");
  if (loaded->manifest.kg_version != kg_version) {
    return absl::StrCat(*dir, " was trained on KG version ", loaded->manifest.kg_version,
                        ", the newest is ", kg_version);
  }
  return std::nullopt;
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

  // 2. Alignment bundle.
  absl::StatusOr<std::string> bundle = alignment::ResolveBundleDir(base, std::nullopt);
  if (bundle.ok()) {
    std::printf("alignment bundle exists: %s (nothing to do)\n", bundle->c_str());
  } else {
    std::printf("building the alignment bundle (%s)\n", bundle.status().ToString().c_str());
    if (int rc = AlignBuild(args); rc != 0) return rc;
  }

  // 3. Retriever model.
  std::optional<std::string> problem = RetrieverModelProblem(base, kg_version);
  if (!problem.has_value()) {
    std::printf("retriever model exists for KG version %s (nothing to do)\n", kg_version.c_str());
    return 0;
  }
  std::printf("training the retriever model: %s\n", problem->c_str());
  std::vector<std::string> argv = {SelfDir() + "/retriever_train", "--base=" + base};
  for (absl::string_view extra :
       absl::StrSplit(absl::GetFlag(FLAGS_retriever_train_args), ' ', absl::SkipEmpty())) {
    argv.emplace_back(extra);
  }
  if (int rc = RunChild(argv); rc != 0) {
    std::fprintf(stderr, "error: retriever_train exited with %d\n", rc);
    return rc;
  }
  problem = RetrieverModelProblem(base, kg_version);
  if (problem.has_value()) {
    std::fprintf(stderr, "error: after training: %s\n", problem->c_str());
    return 1;
  }
  return 0;
}

}  // namespace ibgraphrag::cli
