// The raw command line of `ibgr`, for what Abseil flags cannot express: a flag given several
// times (`--option=A --option=B`) and whether a flag was given at all (so that an unset pipeline
// switch is left to the gateway's default instead of sending the CLI's default).
#ifndef IBGRAPHRAG_TOOLS_EVAL_COMMAND_LINE_H_
#define IBGRAPHRAG_TOOLS_EVAL_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ibgraphrag::eval {

// Every value given for flag `name` in `argv` (argv[0] is the program), in order. Accepts
// `--name=V`, `-name=V`, and `--name V` / `-name V`; stops at `--`.
std::vector<std::string> FlagValues(const std::vector<std::string>& argv, absl::string_view name);

// Whether `--name`, `--noname` (booleans) or any form above appears in `argv`.
bool FlagGiven(const std::vector<std::string>& argv, absl::string_view name);

// This process's command line (from /proc/self/cmdline); empty when it cannot be read.
std::vector<std::string> ProcessCommandLine();

// `argv` joined with spaces, with the value of every flag named in `secret_flags` replaced by
// "***" (for reports).
std::string RedactedCommandLine(const std::vector<std::string>& argv,
                                const std::vector<std::string>& secret_flags);

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_TOOLS_EVAL_COMMAND_LINE_H_
