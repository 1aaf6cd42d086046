// --scorer: the one flag with which the retriever server and the all-in-one binary choose the
// scorer variant IBRP requests get when they name none (model_bundle.h ScorerVariant). Empty, the
// default, serves each model version's own default. Linked only into those executables (library
// retriever_scorer_flag). retriever_train's --scorer names the variant it trains instead.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_FLAG_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_FLAG_H_

#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "services/retriever/model_bundle.h"

ABSL_DECLARE_FLAG(std::string, scorer);

namespace ibgraphrag::retriever {

// --scorer as RetrieverServer::Options::default_variant takes it: nullopt when empty.
// INVALID_ARGUMENT naming the flag for anything but residual or plain.
absl::StatusOr<std::optional<ScorerVariant>> DefaultScorerVariantFromFlag();

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_FLAG_H_
