// `ibgr align build` and `ibgr align "text"`: build an alignment bundle, align text locally.
#ifndef IBGRAPHRAG_TOOLS_IBGR_ALIGN_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_ALIGN_COMMANDS_H_

#include <string>
#include <vector>

namespace ibgraphrag::cli {

int AlignBuild(const std::vector<std::string>& args);  // ibgr align build
int AlignText(const std::vector<std::string>& args);   // ibgr align "text"

}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_ALIGN_COMMANDS_H_
