// `ibgr artifacts build`: everything the suite serves, under one artifact base, built only where
// missing or stale — the KG snapshot (kg/<v>/), with --encoder=trained the name encoder
// (encoder/<v>/, trained when there is none), the alignment bundle (alignment/<v>/) and the
// retriever model (retriever/<v>/, trained by the `retriever_train` binary next to `ibgr`), both
// rebuilt when they were built with another encoder id than --encoder's, and the subgraph
// documents of the illama mode (documents/<v>/, `ibgr docs build`; rebuilt for a new KG version
// or encoder, optional: a failure there is a warning).
// Idempotent: the main start script and the Kubernetes artifact Job run it on every start.
#ifndef IBGRAPHRAG_TOOLS_IBGR_ARTIFACTS_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_ARTIFACTS_COMMANDS_H_

#include <string>
#include <vector>

namespace ibgraphrag::cli {
int ArtifactsBuild(const std::vector<std::string>& args);  // ibgr artifacts build
}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_ARTIFACTS_COMMANDS_H_
