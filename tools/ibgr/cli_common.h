// Shared pieces of the `ibgr` command-line tool: default paths and client channels.
#ifndef IBGRAPHRAG_TOOLS_IBGR_CLI_COMMON_H_
#define IBGRAPHRAG_TOOLS_IBGR_CLI_COMMON_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"

namespace ibgraphrag::cli {

// The data directory: $IBGR_DATA_DIR, else `<repo>/../shared/data` found from the executable's
// location (build/bin/ibgr), else ../shared/data relative to the working directory.
std::string DefaultDataDir();

// The directory this executable lives in: the tools it runs (retriever_train, ibgr_encoder) are
// installed beside it.
std::string SelfDir();

// A channel to `target` ("host:port"), with TLS when --tls_ca (and mTLS with --tls_cert/--tls_key)
// are given.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelTo(const std::string& target);

// One subcommand: `args` are the positional arguments after its name.
using Command = int (*)(const std::vector<std::string>& args);

}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_CLI_COMMON_H_
