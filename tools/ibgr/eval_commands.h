// `ibgr eval --dataset=PATH`: run QA benchmarks through the gateway and report accuracy,
// answer-entity hit rate, alignment coverage, degradations, errors and latency (JSON + Markdown).
#ifndef IBGRAPHRAG_TOOLS_IBGR_EVAL_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_EVAL_COMMANDS_H_

#include <string>
#include <vector>

namespace ibgraphrag::cli {

int Eval(const std::vector<std::string>& args);  // ibgr eval

}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_EVAL_COMMANDS_H_
