// ibgr_encoder: `ibgr encoder train` and `ibgr encoder eval` (encoder_commands.h). The name-encoder
// trainer links LibTorch, so it lives in this binary and ibgr (which the CPU serving image
// carries) hands it `encoder ...` command lines whole; `ibgr artifacts build` runs it to train
// the encoder when none is published. Installed beside ibgr (build/bin, the tools image).
//
//   ibgr_encoder encoder train [--base=artifacts] [--data_dir=...] [--encoder_epochs=...] ...
//   ibgr_encoder encoder eval --encoder_dir=<base>/encoder/<version>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/ibgr/encoder_commands.h"

// The flags ibgr's other commands share with these (same names, meanings and defaults).
ABSL_FLAG(std::string, data_dir, "", "data directory (default $IBGR_DATA_DIR or ../shared/data)");
ABSL_FLAG(std::string, base, "artifacts",
          "artifact base directory (encoders in encoder/<version>/)");
ABSL_FLAG(std::string, snapshot_dir, "", "read exactly this KG snapshot directory");
ABSL_FLAG(std::string, umls_dir, "", "UMLS META/ directory (MRCONSO/MRDEF/MRSTY.RRF)");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "usage: ibgr_encoder encoder train|eval [flags] (the same as `ibgr encoder ...`)\n\n"
      "  encoder train  train the name encoder on the lexicon's synonyms (split by concept) and\n"
      "                 publish <base>/encoder/<version>/\n"
      "  encoder eval   held-out synonym linking of --encoder_dir vs the hash encoder");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());
  if (args.size() >= 2 && args[0] == "encoder") {
    const std::vector<std::string> rest(args.begin() + 2, args.end());
    if (args[1] == "train") return ibgraphrag::cli::EncoderTrain(rest);
    if (args[1] == "eval") return ibgraphrag::cli::EncoderEval(rest);
  }
  std::fprintf(stderr, "%s\n", absl::ProgramUsageMessage().data());
  return 2;
}
