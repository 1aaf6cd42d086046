// `ibgr kg ...` and `ibgr health`: build, inspect and query knowledge-graph snapshots.
#ifndef IBGRAPHRAG_TOOLS_IBGR_KG_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_KG_COMMANDS_H_

#include <string>
#include <vector>

namespace ibgraphrag::cli {

int KgBuild(const std::vector<std::string>& args);     // ibgr kg build
int KgSynth(const std::vector<std::string>& args);     // ibgr kg synth
int KgStats(const std::vector<std::string>& args);     // ibgr kg stats
int KgSubgraph(const std::vector<std::string>& args);  // ibgr kg subgraph ID...
int KgPaths(const std::vector<std::string>& args);     // ibgr kg paths FROM TO
int Health(const std::vector<std::string>& args);      // ibgr health

}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_KG_COMMANDS_H_
