// `ibgr align build` and `ibgr align "text"`: build an alignment bundle, align text locally.
#ifndef IBGRAPHRAG_TOOLS_IBGR_ALIGN_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_ALIGN_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::cli {

int AlignBuild(const std::vector<std::string>& args);  // ibgr align build
int AlignText(const std::vector<std::string>& args);   // ibgr align "text"

// The encoder --encoder names for bundles (and retriever models): "hash-ngram" (default options)
// or "trained" (the newest `<--base>/encoder/<version>/`; NOT_FOUND when there is none).
absl::StatusOr<alignment::EncoderSpec> BuildEncoderSpecFromFlags();
// The id of the encoder `spec` describes (reads only the manifest of a trained encoder).
absl::StatusOr<std::string> EncoderIdOfSpec(const alignment::EncoderSpec& spec);

}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_ALIGN_COMMANDS_H_
