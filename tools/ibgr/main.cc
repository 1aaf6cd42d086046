// ibgr: the IBGraphRAG command-line tool (admin and user subcommands).
//
// ibgr links no LibTorch, so the CPU serving image can carry it (health checks, kg stats, ask).
// `ibgr encoder ...` is handed whole to ibgr_encoder, installed beside it (LibTorch; the tools
// image), and `ibgr artifacts build` runs ibgr_encoder and retriever_train as child processes.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/ibgr/align_commands.h"
#include "tools/ibgr/artifacts_commands.h"
#include "tools/ibgr/ask_commands.h"
#include "tools/ibgr/cli_common.h"
#include "tools/ibgr/docs_commands.h"
#include "tools/ibgr/eval_commands.h"
#include "tools/ibgr/kg_commands.h"

namespace {

// Whether the command is `encoder train|eval`: the words `encoder` then `train` or `eval`
// anywhere among the arguments (a flag given as `--flag value` may come before them), before any
// `--`.
bool IsEncoderCommand(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (std::strcmp(argv[i], "encoder") == 0 &&
        (std::strcmp(argv[i + 1], "train") == 0 || std::strcmp(argv[i + 1], "eval") == 0)) {
      return true;
    }
  }
  return false;
}

// The command line as main() got it (ParseCommandLine does not change argv).
char** g_argv = nullptr;

// `ibgr encoder ...` -> ibgr_encoder beside this binary, with the same arguments.
int ExecEncoderTool(char** argv) {
  const std::string tool = ibgraphrag::cli::SelfDir() + "/ibgr_encoder";
  argv[0] = const_cast<char*>(tool.c_str());
  execv(tool.c_str(), argv);
  std::fprintf(stderr,
               "error: `ibgr encoder` runs %s: %s. The encoder trainer links LibTorch: it ships "
               "in the tools image (ibgraphrag-torch) and the build tree, not in the CPU serving "
               "image.\n",
               tool.c_str(), std::strerror(errno));
  return 127;
}

// main() hands `encoder train|eval` to ibgr_encoder before parsing flags; should a command line
// reach the table anyway, it goes the same way.
int ForwardedToEncoderTool(const std::vector<std::string>&) { return ExecEncoderTool(g_argv); }

struct Entry {
  ibgraphrag::cli::Command run;
  const char* help;
};

const std::map<std::string, Entry>& Commands() {
  static const auto* commands = new std::map<std::string, Entry>{
      {"kg build",
       {ibgraphrag::cli::KgBuild,
        "build a KG snapshot: the embedded default from --data_dir, or the sources "
        "given by --primekg/--hetionet_*/--tsv/--obo; --tsv_out/--entities_tsv_out also "
        "write TSV, --nowrite_snapshot only imports and prints counts and timings"}},
      {"kg synth",
       {ibgraphrag::cli::KgSynth,
        "write a synthetic PrimeKG-scale snapshot (benchmarks); TSV flags as for kg build"}},
      {"kg stats",
       {ibgraphrag::cli::KgStats,
        "counts by type and relation, from --target or a local snapshot"}},
      {"kg subgraph", {ibgraphrag::cli::KgSubgraph, "print the subgraph around EXTERNAL_ID..."}},
      {"kg paths", {ibgraphrag::cli::KgPaths, "print shortest paths FROM TO"}},
      {"health", {ibgraphrag::cli::Health, "exit 0 when --target reports SERVING"}},
      {"align build",
       {ibgraphrag::cli::AlignBuild,
        "build an alignment bundle (lexicon + FAISS index) under --base"}},
      {"artifacts build",
       {ibgraphrag::cli::ArtifactsBuild,
        "build what is missing or stale under --base: KG snapshot, alignment bundle, "
        "retriever model, subgraph documents"}},
      {"docs build",
       {ibgraphrag::cli::DocsBuild,
        "ILlama subgraph documents (centre triple + one-hop neighbourhood as sentences) of the "
        "newest KG, embedded with the retriever model's encoder, FAISS-indexed: "
        "<base>/documents/<version>/ (--max_documents, --docs_*)"}},
      {"encoder train",
       {ForwardedToEncoderTool,
        "train the name encoder on the lexicon's synonyms (split by concept) and publish "
        "<base>/encoder/<version>/; prints the id, training time and held-out figures"}},
      {"encoder eval",
       {ForwardedToEncoderTool,
        "held-out synonym linking of --encoder_dir vs the hash encoder and exact match"}},
      {"align",
       {ibgraphrag::cli::AlignText,
        "align TEXT with the newest bundle: kept/rejected entities with S, R, C"}},
      {"ask",
       {ibgraphrag::cli::Ask,
        "answer a question through --gateway: answer, entities, evidence, timings"}},
      {"eval",
       {ibgraphrag::cli::Eval,
        "run QA benchmarks (--dataset) through --gateway: accuracy, hit rate, latency"}},
  };
  return *commands;
}

std::string Usage() {
  std::string usage = "usage: ibgr COMMAND [flags] [args]\n\ncommands:\n";
  for (const auto& [name, entry] : Commands()) {
    usage +=
        "  " + name + std::string(name.size() < 14 ? 14 - name.size() : 1, ' ') + entry.help + "\n";
  }
  usage += "\n`ibgr --helpfull` lists every flag.";
  return usage;
}

}  // namespace

int main(int argc, char** argv) {
  g_argv = argv;
  if (IsEncoderCommand(argc, argv)) return ExecEncoderTool(argv);
  absl::SetProgramUsageMessage(Usage());
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  for (size_t words = 2; words >= 1; --words) {
    if (args.size() < words) continue;
    std::string name = args[0];
    for (size_t i = 1; i < words; ++i) name += " " + args[i];
    auto it = Commands().find(name);
    if (it != Commands().end()) {
      return it->second.run(std::vector<std::string>(args.begin() + words, args.end()));
    }
  }
  std::fprintf(stderr, "%s\n", Usage().c_str());
  return 2;
}
