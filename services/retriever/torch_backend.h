// The LibTorch scoring backend (scoring_backend.h): CUDA, or LibTorch ops on CPU when forced.
// Linked only by the binaries that may score on a GPU (retriever_torch) and by tests and
// benchmarks that compare it with the fused CPU loop; never by the CPU serving binaries.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TORCH_BACKEND_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TORCH_BACKEND_H_

#include "services/retriever/scoring_backend.h"

namespace ibgraphrag::retriever {

// Process-wide, stateless: TorchScorer per model version, ResolveDevice, SetTorchThreads.
const ScoringBackend& LibTorchScoringBackend();

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TORCH_BACKEND_H_
