// `ibgr docs build`: ILlama's subgraph documents (services/retriever/subgraph_documents.h) for the
// newest KG snapshot under --base, embedded with the encoder of the newest retriever model (the
// one the retriever serves and embeds questions with), published as documents/<version>/.
#ifndef IBGRAPHRAG_TOOLS_IBGR_DOCS_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_DOCS_COMMANDS_H_

#include <string>
#include <vector>

namespace ibgraphrag::cli {
int DocsBuild(const std::vector<std::string>& args);  // ibgr docs build
// True when the newest documents version was built from KG version `kg_version` with encoder
// `encoder_id` (what `ibgr artifacts build` checks before rebuilding).
bool DocumentsCurrent(const std::string& base, const std::string& kg_version,
                      const std::string& encoder_id);
}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_DOCS_COMMANDS_H_
