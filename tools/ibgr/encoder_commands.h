// `ibgr encoder train` and `ibgr encoder eval`: train the biomedical name encoder on the lexicon's
// synonyms and publish it under <base>/encoder/<version>/, or print the held-out linking figures
// of a published one.
#ifndef IBGRAPHRAG_TOOLS_IBGR_ENCODER_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_ENCODER_COMMANDS_H_

#include <string>
#include <vector>

namespace ibgraphrag::cli {

int EncoderTrain(const std::vector<std::string>& args);  // ibgr encoder train
int EncoderEval(const std::vector<std::string>& args);   // ibgr encoder eval

}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_ENCODER_COMMANDS_H_
