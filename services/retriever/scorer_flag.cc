#include "services/retriever/scorer_flag.h"

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, scorer, "",
          "retriever scorer variant for IBRP requests naming none: residual or plain (the paper's "
          "MLP); empty = each model version's default; a version without it is not served");

namespace ibgraphrag::retriever {

absl::StatusOr<std::optional<ScorerVariant>> DefaultScorerVariantFromFlag() {
  const std::string name = absl::GetFlag(FLAGS_scorer);
  if (name.empty()) return std::optional<ScorerVariant>();
  absl::StatusOr<ScorerVariant> variant = ParseScorerVariant(name, "--scorer");
  if (!variant.ok()) return variant.status();
  return std::optional<ScorerVariant>(*variant);
}

}  // namespace ibgraphrag::retriever
